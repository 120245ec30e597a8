"""Where a generated case came from: its source span in the corpus and its provenance.

:func:`source_of` shows the span the case was generated from inside its document
(``WINDOW`` characters each side), or says why it cannot (no corpus given, a document
not in it, a span outside its text); :func:`provenance_table` lists the generation's
facts and the edits made in review.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.review.dataset_common import DatasetReview
from pytest_ragproof.review.html import Html, join, tag

__all__ = ["WINDOW", "corpus_note", "edits_table", "provenance_table", "source_of"]

WINDOW = 1500  # characters of the document shown on each side of the span


def corpus_note(review: DatasetReview) -> Html:
    if review.corpus is None:
        return tag(
            "p",
            "The corpus was not given (--corpus PATH): source spans are shown as "
            "document, chunk and offsets only.",
            class_="note",
            id="no-corpus",
        )
    return Html("")


def source_of(review: DatasetReview, provenance: Mapping[str, Any]) -> Html:
    doc_id = provenance.get("document_id")
    span = provenance.get("span")
    where = tag(
        "p",
        "document ",
        tag("code", doc_id),
        " · chunk ",
        tag("code", provenance.get("chunk_id") or "–"),
        " · span ",
        tag(
            "code", f"[{span[0]}, {span[1]})" if isinstance(span, list) and len(span) == 2 else "–"
        ),
        class_="muted",
    )
    if review.corpus is None:
        return join([where, corpus_note(review)])
    document = review.document(str(doc_id)) if doc_id else None
    if document is None:
        return join(
            [
                where,
                tag(
                    "p",
                    f"document {doc_id} is not in the corpus given ({review.corpus.root})",
                    class_="note",
                ),
            ]
        )
    text = document.text
    if not (isinstance(span, list) and len(span) == 2 and 0 <= span[0] <= span[1] <= len(text)):
        return join([where, tag("p", "the span is outside this document's text", class_="note")])
    start, end = int(span[0]), int(span[1])
    left = max(0, start - WINDOW)
    right = min(len(text), end + WINDOW)
    return join(
        [
            where,
            tag(
                "pre",
                "…" if left > 0 else "",
                text[left:start],
                tag("mark", text[start:end], id="span"),
                text[end:right],
                "…" if right < len(text) else "",
                class_="document",
            ),
        ]
    )


def provenance_table(provenance: Mapping[str, Any]) -> Html:
    rows = []
    for name in (
        "document_id",
        "chunk_id",
        "span",
        "confidence",
        "model",
        "prompt_version",
        "generator_version",
        "seed",
        "usage",
    ):
        if name in provenance:
            value = provenance[name]
            shown = (
                ", ".join(f"{k} {v}" for k, v in value.items())
                if isinstance(value, dict)
                else str(value)
            )
            rows.append(tag("tr", tag("th", name), tag("td", shown)))
    return join([tag("table", rows, class_="provenance"), edits_table(provenance.get("edits"))])


def edits_table(edits: Any) -> Html:
    """The edits made in review (``provenance.edits`` or ``metadata.review_edits``)."""
    if not isinstance(edits, list) or not edits:
        return Html("")
    return join(
        [
            tag("h3", "Edits"),
            tag(
                "table",
                tag("tr", [tag("th", t) for t in ("field", "before", "reviewer", "time")]),
                [
                    tag(
                        "tr",
                        tag("td", e.get("field")),
                        tag("td", _value(e.get("before")), class_="text"),
                        tag("td", e.get("reviewer")),
                        tag("td", e.get("time")),
                    )
                    for e in edits
                    if isinstance(e, dict)
                ],
                class_="edits",
            ),
        ]
    )


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)
