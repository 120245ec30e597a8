"""Where a generated case came from: its source span in the corpus and its provenance.

:func:`source_of` shows the span the case was generated from inside its document
(``WINDOW`` characters each side), or says why it cannot (no corpus given, a document
not in it, a span outside its text); :func:`provenance_table` lists the generation's
facts and the edits made in review. The markup is the macros of
``review/dataset_source.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.reporting.templating import call_macro
from pytest_ragproof.review.dataset_common import DatasetReview
from pytest_ragproof.review.html import Html

__all__ = ["WINDOW", "corpus_note", "edits_table", "provenance_table", "source_of"]

WINDOW = 1500  # characters of the document shown on each side of the span


_SOURCE = "review/dataset_source.html.j2"


def corpus_note(review: DatasetReview) -> Html:
    return call_macro(_SOURCE, "corpus_note") if review.corpus is None else Html("")


def source_of(review: DatasetReview, provenance: Mapping[str, Any]) -> Html:
    doc_id = provenance.get("document_id")
    span = provenance.get("span")
    shown = f"[{span[0]}, {span[1]})" if isinstance(span, list) and len(span) == 2 else "–"
    chunk = provenance.get("chunk_id") or "–"
    window: dict[str, str] = {}
    if review.corpus is None:
        problem = "no corpus"
    elif (document := review.document(str(doc_id)) if doc_id else None) is None:
        problem = f"document {doc_id} is not in the corpus given ({review.corpus.root})"
    elif not (
        isinstance(span, list) and len(span) == 2 and 0 <= span[0] <= span[1] <= len(document.text)
    ):
        problem = "the span is outside this document's text"
    else:
        problem = ""
        text = document.text
        start, end = int(span[0]), int(span[1])
        left = max(0, start - WINDOW)
        right = min(len(text), end + WINDOW)
        window = {
            "before": ("…" if left > 0 else "") + text[left:start],
            "span": text[start:end],
            "after": text[end:right] + ("…" if right < len(text) else ""),
        }
    return call_macro(_SOURCE, "source", doc_id, chunk, shown, problem, window)


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
            rows.append((name, shown))
    return call_macro(_SOURCE, "provenance", rows, edits_table(provenance.get("edits")))


def edits_table(edits: Any) -> Html:
    """The edits made in review (``provenance.edits`` or ``metadata.review_edits``)."""
    if not isinstance(edits, list) or not edits:
        return Html("")
    rows = [
        {
            "field": e.get("field"),
            "before": _value(e.get("before")),
            "reviewer": e.get("reviewer"),
            "time": e.get("time"),
        }
        for e in edits
        if isinstance(e, dict)
    ]
    return call_macro(_SOURCE, "edits", rows)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)
