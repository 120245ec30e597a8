"""The parts of a case page drawn from its entry in the results document.

The conversation, the retrieved contexts with the claims the judges tied to them, the
scores, the judge's reasons, and how a verdict reads (:func:`tone`, :func:`verdict_text`).
Pure functions of the case entry: no request, no labels file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ragproof.labels import judged_claims
from pytest_ragproof.review.html import Html, join, tag

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


def conversation_of(case: Mapping[str, Any]) -> Html:
    turns = [t for t in case.get("conversation_history") or [] if isinstance(t, Mapping)]
    if not turns:
        return Html("")
    return tag(
        "ol",
        [
            tag("li", tag("b", f"{t.get('role')}: "), tag("span", t.get("content"), class_="text"))
            for t in turns
        ],
        class_="conversation",
    )


def contexts_of(case: Mapping[str, Any]) -> Html:
    contexts = [c for c in case.get("contexts") or [] if isinstance(c, Mapping)]
    if not contexts:
        return tag("p", "no context was retrieved", class_="muted")
    judgements = case.get("judgements") or {}
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
    out = []
    for rank, context in enumerate(contexts, 1):
        marks = [
            tag(
                "li",
                tag("span", c.verdict, class_=tone(c.verdict)),
                f" faithfulness claim {c.index}: ",
                tag("span", c.claim, class_="text"),
                class_="claim",
            )
            for c in claims
            if c.context == rank
        ] + [
            tag(
                "li",
                tag("span", str(e.get("verdict")), class_=tone(str(e.get("verdict")))),
                " reference claim: ",
                tag("span", e.get("claim"), class_="text"),
                class_="claim",
            )
            for e in recall
            if e.get("context") == rank
        ]
        verdict = relevance.get(rank)
        out.append(
            tag(
                "div",
                tag(
                    "p",
                    tag("b", f"context {rank}"),
                    " ",
                    tag("code", context.get("id")),
                    (
                        join([" · document ", tag("code", context.get("document_id"))])
                        if context.get("document_id") not in (None, context.get("id"))
                        else ""
                    ),
                    tag("span", verdict, class_=f"badge {tone(str(verdict))}") if verdict else "",
                ),
                tag("p", context.get("text"), class_="text"),
                tag("ul", marks) if marks else "",
                class_="context",
                data_rank=rank,
            )
        )
    return join(out)


def scores_of(case: Mapping[str, Any], judged: set[str]) -> Html:
    metrics = case.get("metrics") or {}
    rows = [
        tag(
            "tr",
            tag("th", name),
            tag("td", fmt(value), class_="num"),
            tag("td", "judged" if name in judged else "", class_="muted"),
        )
        for name, value in sorted(metrics.items(), key=lambda kv: (kv[0] not in judged, kv[0]))
        if name != "latency_s"
    ]
    not_judged = case.get("not_judged") or {}
    extra = [
        tag(
            "tr",
            tag("th", name),
            tag("td", "not judged", class_="num"),
            tag("td", reason, class_="muted"),
        )
        for name, reason in sorted(not_judged.items())
    ]
    failures = case.get("failures") or []
    return join(
        [
            tag("table", rows, extra, class_="scores"),
            (
                join(
                    [
                        tag("h3", "Failures"),
                        tag("ul", [tag("li", f, class_="text") for f in failures]),
                    ]
                )
                if failures
                else ""
            ),
            (
                tag("p", f"judge error: {case.get('judge_error')}", class_="note")
                if case.get("judge_error")
                else ""
            ),
            (
                tag("p", f"error: {case.get('error_type')}", class_="note")
                if case.get("error_type")
                else ""
            ),
        ]
    )


def reasons_of(judgement: Mapping[str, Any]) -> Html:
    """The judge's reasons: every list of claims, statements or contexts with verdicts."""
    parts: list[Html] = []
    if isinstance(judgement.get("verdict"), str):
        parts.append(
            tag(
                "p",
                "judge: ",
                tag("span", judgement["verdict"], class_=tone(judgement["verdict"])),
            )
        )
    for key in ("precision", "recall"):
        if isinstance(judgement.get(key), int | float):
            parts.append(tag("span", f"{key} {fmt(judgement[key])} ", class_="muted"))
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
        for number, e in enumerate(entries, 1):
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
                tag(
                    "li",
                    tag("span", str(e.get("verdict")), class_=tone(str(e.get("verdict")))),
                    " ",
                    tag("span", text, class_="text"),
                    cited,
                    value=number,
                )
            )
        parts.append(join([tag("p", title, class_="muted"), tag("ol", items)]))
    return join(parts)
