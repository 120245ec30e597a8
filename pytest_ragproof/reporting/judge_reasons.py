"""The reasons of the LLM judges on one case, shaped once for every report.

A case record carries, per judge, either its ``judgements`` details (the verdict
of each claim, statement or context, with the supporting context's rank) or a
``not_judged`` reason code, and its judged ``metrics``. :func:`judge_views`
turns them into one view per judge, in the order of
:data:`pytest_ragproof.judges.JUDGES`, which the HTML case panel draws and
:func:`reason_text` writes as the InspectorRAGet text metric.

Details are read by shape, not by judge name, so a judge's new field still shows:
a list of items becomes a group (its ``claim`` or ``statement`` text, its
``verdict``, its ``context`` rank with the id of that retrieved context), a number
a figure (``precision``, ``recall``), a string ``verdict`` the judge's verdict.

With ``redacted`` the details are left out (claims and statements are the
answer's text); the scores, the not-judged reasons and a judge error, which hold
no dataset text, stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragproof.judges import JUDGES, NOT_JUDGED_REASONS, judge_of, metrics_of

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, JudgeError

__all__ = ["GROUP_TITLES", "judge_error_text", "judge_views", "reason_text", "tone"]

GROUP_TITLES: dict[str, str] = {
    "claims": "claims of the answer",
    "answer_claims": "claims of the answer",
    "statements": "statements of the answer",
    "reference_claims": "claims of the expected answer",
    "contexts": "retrieved contexts",
}
# Verdicts that count for / against the score of their judge.
_GOOD = frozenset(
    {"supported", "relevant", "in reference", "in answer", "attributed", "ignored it"}
)
_BAD = frozenset(
    {
        "unsupported",
        "irrelevant",
        "not in reference",
        "missing from answer",
        "not attributed",
        "followed the planted instruction",
    }
)


def tone(verdict: Any) -> str:
    """``good``, ``bad`` or ``neutral`` (a refusal verdict is neither by itself)."""
    if verdict in _GOOD:
        return "good"
    if verdict in _BAD:
        return "bad"
    return "neutral"


def _order(name: str) -> tuple[int, str]:
    return (JUDGES.index(name) if name in JUDGES else len(JUDGES), name)


def _item(raw: Any, ids: Sequence[Any]) -> dict[str, Any]:
    entry = raw if isinstance(raw, Mapping) else {"verdict": raw}
    raw_rank = entry.get("context")
    rank = raw_rank if isinstance(raw_rank, int) and not isinstance(raw_rank, bool) else None
    text = entry.get("claim", entry.get("statement"))
    return {
        "text": None if text is None else str(text),
        "verdict": None if entry.get("verdict") is None else str(entry["verdict"]),
        "tone": tone(entry.get("verdict")),
        "context": rank,
        # the id of the retrieved context at that 1-based rank, when the record has it
        "context_id": str(ids[rank - 1]) if rank is not None and 1 <= rank <= len(ids) else None,
    }


def _details(details: Mapping[str, Any], ids: Sequence[Any]) -> dict[str, Any]:
    numbers: list[list[Any]] = []
    groups: list[dict[str, Any]] = []
    verdict = None
    for key, value in details.items():
        if key == "prompt":
            continue
        if key == "verdict":
            verdict = str(value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float):
            numbers.append([key, value])
        elif isinstance(value, list):
            title = GROUP_TITLES.get(key, key.replace("_", " "))
            groups.append({"key": key, "title": title, "items": [_item(v, ids) for v in value]})
    # the answer's claims before the expected answer's, as the metric reads them
    groups.sort(key=lambda g: g["key"] == "reference_claims")
    prompt = details.get("prompt")
    return {
        "prompt": None if prompt is None else str(prompt),
        "verdict": verdict,
        "verdict_tone": tone(verdict),
        "numbers": numbers,
        "groups": groups,
    }


def _case(case: Mapping[str, Any] | Case) -> Case:
    from pytest_ragproof.results.models import Case

    return case if isinstance(case, Case) else Case.model_validate(case)


def judge_views(case: Mapping[str, Any] | Case, *, redacted: bool) -> list[dict[str, Any]]:
    """One view per judge that scored, judged or skipped this case (a case entry, as its
    typed model or parsed; empty without judges)."""
    entry = _case(case)
    judgements: Mapping[str, Any] = {} if redacted else (entry.judgements or {})
    not_judged = entry.not_judged
    metrics = entry.metrics
    judges = set(judgements) | set(not_judged)
    judges.update(j for j in map(judge_of, metrics) if j is not None)
    ids = [c.id for c in entry.contexts or []]
    views = []
    for judge in sorted(judges, key=_order):
        code = not_judged.get(judge)
        details = judgements.get(judge)
        view: dict[str, Any] = {
            "judge": judge,
            "scores": [[m, metrics[m]] for m in metrics_of([judge]) if m in metrics],
            "not_judged": None if code is None else str(code),
            "not_judged_text": None if code is None else NOT_JUDGED_REASONS.get(code, str(code)),
            "redacted": redacted and code is None,
        }
        view.update(_details(details if isinstance(details, Mapping) else {}, ids))
        views.append(view)
    return views


def judge_error_text(error: Mapping[str, Any] | JudgeError | None) -> str | None:
    """E.g. ``judge step 'faithfulness/1' failed: LLMCallError (RateLimitError, HTTP 429,
    3 attempt(s))``: types and status only, never a provider message. ``error``: a case's
    ``judge_error``, as its typed model or parsed."""
    from pytest_ragproof.results.models import JudgeError

    if not error:
        return None
    e = error if isinstance(error, JudgeError) else JudgeError.model_validate(error)
    extra = [e.cause] if e.cause else []
    if e.status:
        extra.append(f"HTTP {e.status}")
    if e.attempts:
        extra.append(f"{e.attempts} attempt(s)")
    detail = f" ({', '.join(extra)})" if extra else ""
    return f"judge step '{e.step}' failed: {e.type}{detail}"


def _number(value: Any) -> str:
    return format(value, ".4g") if isinstance(value, float) else str(value)


def reason_text(view: Mapping[str, Any]) -> str:
    """A judge's reasons as plain text, one line per claim, statement or context."""
    if view.get("not_judged"):
        return f"not judged: {view['not_judged_text']} ({view['not_judged']})"
    lines = []
    if view.get("verdict") is not None:
        lines.append(f"verdict: {view['verdict']}")
    if view.get("numbers"):
        lines.append(", ".join(f"{k} {_number(v)}" for k, v in view["numbers"]))
    for group in view.get("groups") or []:
        lines.append(f"{group['title']} ({len(group['items'])}):")
        for i, item in enumerate(group["items"], 1):
            ctx = None
            if item["context"] is not None:
                named = f" ({item['context_id']})" if item["context_id"] else ""
                ctx = f"context {item['context']}{named}"
            if item["text"] is None:
                lines.append(f"{i}. [{item['verdict']}] {ctx or ''}".rstrip())
            else:
                tag = str(item["verdict"]) + (f", {ctx}" if ctx else "")
                lines.append(f"{i}. [{tag}] {item['text']}")
    if view.get("prompt"):
        lines.append(f"prompt {view['prompt']}")
    return "\n".join(lines) or "no reasons recorded"
