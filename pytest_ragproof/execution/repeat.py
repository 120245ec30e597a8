"""``--ragproof-repeat N``: one case, N pipeline calls, one record (pure; pytest-free).

Each call is scored (and judged) into a record of its own, exactly as a single
call is; :func:`finish_repeats` then folds them into the case's record:

* ``metrics``: per metric, the mean over the repeats that were scored (an error
  is not scored), plus ``pass_rate``, the share of the N repeats that passed;
* ``repeats``: ``n``, ``passed``, ``pass_rate``, each repeat's ``statuses`` and
  the per-metric ``min``/``max`` (plus ``error_types`` when a repeat errored);
* ``status``: ``passed`` when the pass rate meets ``min_pass_rate``; an error
  counts as a repeat that did not pass; ``error`` when no repeat was scored.

The answer and contexts shown are the first scored repeat's. One call (no
``--ragproof-repeat``) is the case's record as :func:`finish_case` scores it, so every
case is concluded here, once or N times called: the last step of the one per-case
path (:mod:`pytest_ragproof.execution.case_path`), which the pytest items and
``evaluate()`` both take.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.execution.execute import Outcome, Verdict, finish_case
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.record import CaseRecord, Failure, sorted_metrics

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.execute import Judged

__all__ = ["RepeatVerdict", "finish_repeats"]


@dataclass
class RepeatVerdict:
    """The case's verdict; ``decisive``: the outcome that speaks when no repeat was scored."""

    verdict: Verdict
    decisive: Outcome | None


def finish_repeats(
    record: CaseRecord,
    case: Case,
    outcomes: Sequence[Outcome],
    cfg: RunConfig,
    judged: Sequence[Judged | None],
    evaluators: EvaluatorRunner | None = None,
) -> RepeatVerdict:
    """Score each repeat, then fill ``record`` with their means, spread and pass rate; one
    outcome is scored into ``record`` itself (the decisive outcome: that call's)."""
    if len(outcomes) == 1:
        return RepeatVerdict(
            finish_case(record, case, outcomes[0], cfg, judged[0], evaluators), outcomes[0]
        )
    runs: list[tuple[CaseRecord, Verdict]] = []
    for outcome, judgement in zip(outcomes, judged, strict=True):
        own = CaseRecord.from_dict(record.to_dict())  # a fresh copy: finish_case fills it
        runs.append((own, finish_case(own, case, outcome, cfg, judgement, evaluators)))
    n = len(runs)
    scored = [r for r, _ in runs if r.status != "error"]
    passed = sum(1 for r, _ in runs if r.status == "passed")
    rate = passed / n
    latencies = [o.latency_s for o in outcomes]
    record.latency_s = math.fsum(latencies) / n
    values: dict[str, list[float]] = {}
    for r in scored:
        for name, value in r.metrics.items():
            values.setdefault(name, []).append(value)
    shown = scored[0] if scored else runs[0][0]
    _copy_shown(record, shown)
    _judge_totals(record, [r for r, _ in runs])
    record.repeats = {
        "n": n,
        "passed": passed,
        "pass_rate": rate,
        "statuses": [r.status for r, _ in runs],
        "min": {m: min(v) for m, v in sorted(values.items())},
        "max": {m: max(v) for m, v in sorted(values.items())},
    }
    errors = sorted({r.error_type or "error" for r, _ in runs if r.status == "error"})
    if errors:
        record.repeats["error_types"] = errors
    if not scored:
        record.status, record.error_type = "error", runs[0][0].error_type
        first = runs[0][1].message
        message = None if first is None else f"{first} (in all {n} repeats)"
        return RepeatVerdict(Verdict(record, None, message), outcomes[0])
    metrics = {m: math.fsum(v) / len(v) for m, v in values.items()}
    metrics["pass_rate"] = rate
    record.metrics = sorted_metrics(metrics)
    if rate >= cfg.min_pass_rate:
        record.status = "passed"
        return RepeatVerdict(Verdict(record, None, None), None)
    record.status = "failed"
    record.failures = [*_merged_failures(record, runs), _rate_failure(rate, cfg)]
    return RepeatVerdict(Verdict(record, None, _message(record, runs, cfg)), None)


def _copy_shown(record: CaseRecord, shown: CaseRecord) -> None:
    record.answer = shown.answer
    record.retrieved_ids = shown.retrieved_ids
    record.contexts = shown.contexts
    record.not_judged = shown.not_judged
    record.judgements = shown.judgements


def _judge_totals(record: CaseRecord, runs: Sequence[CaseRecord]) -> None:
    """The judges' calls and tokens of every repeat (the run's totals count them all), the
    first judge or evaluator error."""
    usages = [r.judge_usage for r in runs if r.judge_usage is not None]
    if usages:
        from pytest_ragproof.judges.base import merge_usage

        record.judge_usage = merge_usage(usages)
    estimates = [r.judge_estimate for r in runs if r.judge_estimate]
    if estimates:
        keys = sorted({k for e in estimates for k in e})
        record.judge_estimate = {k: sum(e.get(k, 0) for e in estimates) for k in keys}
    record.judge_error = next((r.judge_error for r in runs if r.judge_error), None)
    record.evaluator_error = next((r.evaluator_error for r in runs if r.evaluator_error), None)


Runs = Sequence[tuple[CaseRecord, Verdict]]


def _merged_failures(record: CaseRecord, runs: Runs) -> list[Failure]:
    """Each case threshold some repeat missed, observed as the case's mean when measured."""
    n = len(runs)
    missed: dict[str, list[Failure]] = {}
    for r, _ in runs:
        for f in r.failures:
            missed.setdefault(f.expression, []).append(f)
    out = []
    for expression, failures in missed.items():
        first = failures[0]
        where = f"missed in {len(failures)} of {n} repeats"
        observed = record.metrics.get(first.metric)
        reason = where if observed is not None else f"{first.reason}; {where}"
        out.append(Failure(expression, first.metric, observed, first.bound, reason))
    return out


def _rate_failure(rate: float, cfg: RunConfig) -> Failure:
    bound = f">= {cfg.min_pass_rate:g}"
    return Failure(
        f"--ragproof-min-pass-rate={cfg.min_pass_rate:g}", "pass_rate", rate, bound, "missed"
    )


def _message(record: CaseRecord, runs: Runs, cfg: RunConfig) -> str:
    repeats = record.repeats or {}
    lines = [
        f"ragproof case {record.id} ({record.kind}, {record.question_type}) passed "
        f"{repeats.get('passed')} of {len(runs)} repeats: pass rate "
        f"{record.metrics['pass_rate']:.3g}"
        f" (expected >= {cfg.min_pass_rate:g}, --ragproof-min-pass-rate) "
        f"[pipeline {record.pipeline}]:"
    ]
    for i, (r, _) in enumerate(runs, start=1):
        if r.status == "error":
            lines.append(f"  repeat {i}: error {r.error_type}")
        elif r.status != "passed":
            lines.append(
                f"  repeat {i}: failed "
                + "; ".join(f"{f.expression}: {f.line()}" for f in r.failures)
            )
    for f in record.failures[:-1]:
        mean = "" if f.observed is None else f" (mean over the scored repeats: {f.observed:.4g})"
        lines.append(f"  {f.expression}: {f.reason}{mean}")
    lines.append(
        "  (--ragproof-repeat / --ragproof-min-pass-rate; thresholds: --ragproof-case-threshold)"
    )
    return "\n".join(lines)
