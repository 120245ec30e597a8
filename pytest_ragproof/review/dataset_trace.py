"""What production did on an imported case: the answer and the retrieved documents.

``ragproof import --from otel`` keeps the production record of a trace in
``metadata.trace`` (docs/traces.md): the answer, the retrieved documents with their
rank and score, the reranked ones, trace and span ids, timestamp and service.
:func:`trace_panel` shows it beside the editable expected answer and sources, with the
buttons (keys ``p`` and ``d``) that copy the production answer into the expected-answer
box and the retrieved ids into the expected-sources box; :func:`unanswerable_form`
marks the case unanswerable (key ``u``). The markup is the macros of
``review/dataset_trace.html.j2`` (autoescape: every value is escaped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.reporting.templating import call_macro
from pytest_ragproof.review.html import Html

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


_TRACE = "review/dataset_trace.html.j2"


def _rows(docs: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "rank": d.get("rank") if isinstance(d.get("rank"), int) else "–",
            "id": d["id"],
            "score": _score(d.get("score")),
        }
        for d in docs
    ]


def trace_panel(trace: Mapping[str, Any]) -> Html:
    """The production answer and retrieved (and reranked) documents, with the take buttons."""
    answer = trace.get("answer")
    facts = [
        (label, trace.get(key))
        for label, key in (("service", "service"), ("time", "timestamp"), ("trace", "trace_id"))
        if isinstance(trace.get(key), str | int)
    ]
    return call_macro(
        _TRACE,
        "panel",
        answer if isinstance(answer, str) and answer else None,
        _rows(_documents(trace, "retrieved")),
        "\n".join(retrieved_ids(trace)),
        _rows(_documents(trace, "reranked")),
        facts,
    )


def unanswerable_form(token: Html, n: int, show: str) -> Html:
    """The form that marks case ``n`` unanswerable (kind unanswerable, no sources)."""
    return call_macro(_TRACE, "unanswerable", token, n, show)
