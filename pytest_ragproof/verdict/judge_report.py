"""What the judges cost and skipped, totalled from case records (pure; pytest-free).

Totals are summed from each record's ``judge_usage`` so that an xdist controller,
which judged nothing itself, reports the same figures as a serial run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragproof.judges import JudgeSettings
from pytest_ragproof.judges.base import merge_usage
from pytest_ragproof.verdict.record import CaseRecord

_ESTIMATE_KEYS = ("calls", "cached", "prompt_tokens", "completion_tokens")


def judge_totals(records: Sequence[CaseRecord], settings: JudgeSettings) -> dict[str, Any]:
    """The ``judges`` section of the results document."""
    usages: list[Mapping[str, Any]] = []
    judged = 0
    not_judged: Counter[str] = Counter()
    errors = 0
    estimate: dict[str, int] | None = {k: 0 for k in _ESTIMATE_KEYS} if settings.dry_run else None
    for r in records:
        usage = r.judge_usage
        if r.judge_error:
            errors += 1
        if usage is None:
            continue
        judged += 1
        usages.append(usage)
        for reason in r.not_judged.values():
            not_judged[reason] += 1
        if estimate is not None and r.judge_estimate:
            for k in _ESTIMATE_KEYS:
                estimate[k] += int(r.judge_estimate.get(k, 0))
    totals = merge_usage(usages)
    cost = totals.pop("cost_usd")
    failures = totals.pop("failures", None)
    waited = totals.pop("waited_s", None)
    chosen = totals.pop("response_format", None)
    out: dict[str, Any] = {
        **settings.settings(),
        "judge_concurrency": settings.concurrency,
        "cases": judged,
        "errors": errors,
        **totals,
        "cost_usd": None if cost is None else round(cost, 6),
        "not_judged": dict(sorted(not_judged.items())),
    }
    # Only when calls failed or waited: a clean run's document reads as before.
    if failures:
        out["failures"] = failures
    if waited:
        out["waited_s"] = waited
    if chosen:
        out["response_format_chosen"] = chosen
    if settings.max_calls is not None:
        out["max_calls"] = settings.max_calls
    if settings.budget_usd is not None:
        out["budget_usd"] = settings.budget_usd
    if estimate is not None:
        out["dry_run_estimate"] = estimate
    return out


def judge_lines(totals: dict[str, Any]) -> list[str]:
    """The summary's judge lines: calls, tokens, cost, what was not judged and why."""
    cost = totals["cost_usd"]
    cost_text = "cost unknown (no price for this model)" if cost is None else f"${cost:.4f}"
    spent = totals["prompt_tokens"] or totals["completion_tokens"]  # refused replies count
    if not totals["calls"] and totals.get("failures") and not spent:
        cost_text = "cost unknown (no call answered; failed requests may still be billed)"
    failures: dict[str, int] = totals.get("failures") or {}
    failed = ""
    if failures:
        kinds = ", ".join(f"{n} {kind}" for kind, n in failures.items())
        failed = f"{sum(failures.values())} failed ({kinds}), "
    waited = totals.get("waited_s")
    waited_text = f", {waited:.1f} s lost to failed requests and backoff" if waited else ""
    lines = [
        f"judges ({totals['judge_model']}): {totals['calls']} call(s), {failed}"
        f"{totals['cached']} cached, {totals['requests']} request(s){waited_text}, "
        f"{totals['prompt_tokens']} prompt + {totals['completion_tokens']} completion "
        f"tokens, {cost_text}"
    ]
    chosen = totals.get("response_format_chosen")
    if chosen:
        lines.append(f"judge response format: {chosen}")
    skipped = totals.get("not_judged") or {}
    if skipped:
        lines.append("not judged: " + ", ".join(f"{n} {reason}" for reason, n in skipped.items()))
    est = totals.get("dry_run_estimate")
    if est is not None:
        lines.append(
            f"judge dry run: the run would make {est['calls']} call(s) "
            f"(~{est['prompt_tokens']} prompt + ~{est['completion_tokens']} completion tokens, "
            f"characters / 4), {est['cached']} more served by the cache; nothing was called"
        )
    return lines


def judged_scores(aggregates: Sequence[Mapping[str, Any]]) -> list[str]:
    """The summary's table of judged scores: per pipeline, kind and judged metric, the mean
    and minimum over the cases judged, with the cases left unscored (errors, not judged)."""
    from tabulate import tabulate

    from pytest_ragproof.judges import judge_of
    from pytest_ragproof.verdict.summary import fmt_score
    from pytest_ragproof.vocabulary import KINDS

    rows = []
    for a in aggregates:
        if a.get("selector") not in KINDS or judge_of(str(a.get("metric"))) is None:
            continue
        values = a.get("values") or {}
        left = [f"{a[k]} {word}" for k, word in _LEFT if a.get(k)]
        rows.append(
            [
                a.get("pipeline"),
                a.get("selector"),
                a.get("metric"),
                a.get("n"),
                fmt_score(values.get("mean")),
                fmt_score(values.get("min")),
                ", ".join(left),
            ]
        )
    if not rows:
        return []
    rows.sort(key=lambda r: (str(r[0]), KINDS.index(str(r[1])), str(r[2])))
    table = tabulate(
        rows,
        headers=["pipeline", "kind", "judged metric", "n", "mean", "min", "not scored"],
        tablefmt="simple",
        disable_numparse=True,
    )
    return ["judged scores (mean and min over the judged cases of each kind):", table]


_LEFT = (("n_error", "error"), ("n_missing", "not judged"))


def evaluator_coverage(records: Sequence[CaseRecord]) -> dict[str, Any]:
    """Per bring-your-own evaluator: how many cases each of its metrics scored.

    ``missing``: scored cases without the metric (NaN, not returned; see each case's
    ``not_judged``); ``errors``: cases where that evaluator failed.
    """
    names: dict[str, set[str]] = {}
    for r in records:
        for metric in (*r.metrics, *r.not_judged):
            if ":" in metric:
                names.setdefault(metric.split(":", 1)[0], set()).add(metric)
        if r.evaluator_error:
            names.setdefault(str(r.evaluator_error.get("evaluator")), set())
    out: dict[str, Any] = {}
    for name in sorted(names):
        failed = [r for r in records if (r.evaluator_error or {}).get("evaluator") == name]
        scored = [r for r in records if r.status != "error"]
        out[name] = {
            "metrics": {
                m: {
                    "scored": sum(1 for r in scored if m in r.metrics),
                    "missing": sum(1 for r in scored if m not in r.metrics),
                    "errors": len(failed),
                }
                for m in sorted(names[name])
            },
            "errors": len(failed),
        }
    return out
