"""The parts of a case page drawn from its entry in the results document.

The conversation, the retrieved contexts with the claims the judges tied to them, the
scores, the judge's reasons, and how a verdict reads (:func:`tone`, :func:`verdict_text`).
Pure functions of the case entry (its typed model; a judge's details are read by shape,
``judgements`` being open): no request, no labels file. The markup is the
macros of the template ``review/case_parts.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_ragproof.labels import judged_claims
from pytest_ragproof.reporting.templating import call_macro
from pytest_ragproof.review.html import Html

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case

__all__ = [
    "contexts_of",
    "conversation_of",
    "fmt",
    "reasons_of",
    "scores_of",
    "tone",
    "verdict_text",
]

GOOD = frozenset({"supported", "relevant", "in reference", "in answer", "attributed", "ignored it"})
NEUTRAL = frozenset({"declined", "answered"})


def fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def verdict_text(verdict: float | None, kind: str) -> str:
    if verdict is None:
        return "withdrawn"
    if kind == "binary" or verdict in (0, 1):
        return "yes" if verdict >= 0.5 else "no"
    return f"{verdict:g}"


def tone(verdict: str) -> str:
    if verdict in GOOD:
        return "verdict good"
    if verdict in NEUTRAL:
        return "verdict"
    return "verdict bad"


_PARTS = "review/case_parts.html.j2"


def conversation_of(case: Case) -> Html:
    return call_macro(
        _PARTS,
        "conversation",
        [{"role": f"{t.role}: ", "content": t.content} for t in case.conversation_history],
    )


def contexts_of(case: Case) -> Html:
    """The retrieved contexts with the judges' verdicts on them."""
    contexts = case.contexts or []
    judgements = case.judgements or {}
    relevance = {
        e.get("context"): e.get("verdict")
        for e in (judgements.get("context_relevance") or {}).get("contexts") or []
        if isinstance(e, Mapping)
    }
    claims = judged_claims(case, "faithfulness")
    recall = [
        e
        for e in (judgements.get("context_recall") or {}).get("reference_claims") or []
        if isinstance(e, Mapping)
    ]
    items = []
    for rank, context in enumerate(contexts, 1):
        marks = [
            {
                "verdict": c.verdict,
                "tone": tone(c.verdict),
                "what": f" faithfulness claim {c.index}: ",
                "claim": c.claim,
            }
            for c in claims
            if c.context == rank
        ] + [
            {
                "verdict": str(e.get("verdict")),
                "tone": tone(str(e.get("verdict"))),
                "what": " reference claim: ",
                "claim": e.get("claim"),
            }
            for e in recall
            if e.get("context") == rank
        ]
        verdict = relevance.get(rank)
        document = context.document_id
        items.append(
            {
                "rank": rank,
                "id": context.id,
                "document": None if document in (None, context.id) else document,
                "verdict": verdict,
                "verdict_tone": tone(str(verdict)),
                "text": context.text,
                "marks": marks,
            }
        )
    return call_macro(_PARTS, "contexts", items)


def scores_of(case: Case, judged: set[str]) -> Html:
    rows = [
        (name, fmt(value), name in judged)
        for name, value in sorted(case.metrics.items(), key=lambda kv: (kv[0] not in judged, kv[0]))
        if name != "latency_s"
    ]
    error = case.judge_error.model_dump(exclude_unset=True) if case.judge_error else None
    return call_macro(
        _PARTS,
        "scores",
        rows,
        sorted(case.not_judged.items()),
        # shown as the document wrote them (the page prints each entry whole)
        [f.model_dump(exclude_unset=True) for f in case.failures],
        error or None,
        case.error_type or None,
    )


def reasons_of(judgement: Mapping[str, Any]) -> Html:
    """The judge's reasons: every list of claims, statements or contexts with verdicts."""
    verdict = judgement.get("verdict") if isinstance(judgement.get("verdict"), str) else None
    figures = [
        f"{key} {fmt(judgement[key])} "
        for key in ("precision", "recall")
        if isinstance(judgement.get(key), int | float)
    ]
    groups = []
    for key, title in (
        ("claims", "claims of the answer"),
        ("statements", "statements of the answer"),
        ("answer_claims", "claims of the answer"),
        ("reference_claims", "claims of the reference"),
        ("contexts", "contexts"),
    ):
        entries = [e for e in judgement.get(key) or [] if isinstance(e, Mapping)]
        if not entries:
            continue
        items = []
        for e in entries:
            text = (
                e.get("claim")
                or e.get("statement")
                or (f"context {e.get('context')}" if key == "contexts" else "")
            )
            cited = (
                f" ← context {e['context']}"
                if key != "contexts" and isinstance(e.get("context"), int)
                else ""
            )
            items.append(
                {
                    "verdict": str(e.get("verdict")),
                    "tone": tone(str(e.get("verdict"))),
                    "text": text,
                    "cited": cited,
                }
            )
        groups.append({"title": title, "entries": items})
    return call_macro(_PARTS, "reasons", verdict, tone(verdict) if verdict else "", figures, groups)
