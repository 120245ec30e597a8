"""What production did on an imported case: the answer and the retrieved documents.

``ragproof import --from otel`` keeps the production record of a trace in
``metadata.trace`` (docs/traces.md): the answer, the retrieved documents with their
rank and score, the reranked ones, trace and span ids, timestamp and service.
:func:`trace_panel` shows it beside the editable expected answer and sources, with the
buttons (keys ``p`` and ``d``) that copy the production answer into the expected-answer
box and the retrieved ids into the expected-sources box; :func:`unanswerable_form`
marks the case unanswerable (key ``u``). Every value is escaped (:mod:`.html`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.review.html import Html, join, table, tag

__all__ = ["retrieved_ids", "trace_of", "trace_panel", "unanswerable_form"]


def trace_of(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``metadata.trace`` of a case imported from OpenTelemetry, else ``None``."""
    metadata = record.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("imported_from") != "otel":
        return None
    trace = metadata.get("trace")
    return trace if isinstance(trace, Mapping) else {}


def _documents(trace: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = trace.get(key)
    if not isinstance(value, list):
        return []
    return [d for d in value if isinstance(d, Mapping) and isinstance(d.get("id"), str)]


def retrieved_ids(trace: Mapping[str, Any]) -> list[str]:
    """The retrieved document ids in rank order, each once."""
    out: list[str] = []
    for doc in sorted(
        _documents(trace, "retrieved"),
        key=lambda d: d["rank"] if isinstance(d.get("rank"), int) else 1 << 30,
    ):
        if doc["id"] not in out:
            out.append(doc["id"])
    return out


def _score(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "–"
    return f"{value:.3f}"


def _doc_table(docs: list[Mapping[str, Any]], id_: str) -> Html:
    rows = [
        tag(
            "tr",
            tag("td", d.get("rank") if isinstance(d.get("rank"), int) else "–", class_="num"),
            tag("td", tag("code", d["id"])),
            tag("td", _score(d.get("score")), class_="num"),
        )
        for d in docs
    ]
    return table(("rank", "document", "score"), rows, class_="list", id=id_)


def trace_panel(trace: Mapping[str, Any]) -> Html:
    """The production answer and retrieved (and reranked) documents, with the take buttons."""
    answer = trace.get("answer")
    answer_text = answer if isinstance(answer, str) and answer else None
    retrieved = _documents(trace, "retrieved")
    reranked = _documents(trace, "reranked")
    ids = retrieved_ids(trace)
    facts = [
        (label, trace.get(key))
        for label, key in (("service", "service"), ("time", "timestamp"), ("trace", "trace_id"))
        if isinstance(trace.get(key), str | int)
    ]
    return join(
        [
            tag("h2", "What production did"),
            tag("h3", "Production answer"),
            tag("p", answer_text or "(no answer in the trace)", class_="text", id="trace-answer"),
            tag(
                "button",
                "Take as expected answer ",
                tag("kbd", "p"),
                type="button",
                id="take-answer",
                data_value=answer_text,
                data_target="edit-expected-answer",
            )
            if answer_text
            else "",
            tag("h3", "Retrieved documents"),
            _doc_table(retrieved, "trace-retrieved")
            if retrieved
            else tag("p", "(no retrieval in the trace)", class_="muted", id="trace-retrieved"),
            tag(
                "button",
                "Take as expected sources ",
                tag("kbd", "d"),
                type="button",
                id="take-sources",
                data_value="\n".join(ids),
                data_target="edit-expected-sources",
            )
            if ids
            else "",
            join([tag("h3", "Reranked"), _doc_table(reranked, "trace-reranked")])
            if reranked
            else "",
            tag(
                "p",
                join([join([f"{label} ", tag("code", value)]) for label, value in facts], " · "),
                class_="muted wrap",
            )
            if facts
            else "",
        ]
    )


def unanswerable_form(token: Html, n: int, show: str) -> Html:
    """The form that marks case ``n`` unanswerable (kind unanswerable, no sources)."""
    return tag(
        "form",
        token,
        tag("input", type="hidden", name="show", value=show),
        tag("input", type="hidden", name="kind", value="unanswerable"),
        tag("input", type="hidden", name="expected_source_ids", value=""),
        tag("button", "Unanswerable ", tag("kbd", "u"), type="submit"),
        method="post",
        action=f"/dataset/{n}/edit",
        id="unanswerable",
        class_="decide",
    )
