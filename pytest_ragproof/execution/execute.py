"""One call of a case, from the call to its scored record.

``call_case`` runs the pipeline (sync or async, with the timeout) and returns an
:class:`Outcome`; ``finish_case`` turns an outcome into a scored
:class:`~pytest_ragproof.verdict.record.CaseRecord` plus the failure message, if any.
Both are steps of the one per-case path (:mod:`pytest_ragproof.execution.case_path`),
which the pytest items and ``evaluate()`` share.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import OutputShapeError
from pytest_ragproof.execution.call import LoopOwner, PipelineTimeout, invoke
from pytest_ragproof.execution.scoring import failure_message, score
from pytest_ragproof.metrics import PipelineOutput, normalize_output
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.record import CaseRecord

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.judges.engine import CaseJudgement, Usage


@dataclass
class Outcome:
    """What one pipeline call produced."""

    raw: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    latency_s: float = 0.0
    # The normalized output, when the judging stage already made it.
    output: PipelineOutput | None = None
    # The evaluators' scores under way (a Future of ``Evaluated``), when handed over early.
    evaluation: Any = None


@dataclass
class Judged:
    """The judgement of one case, or why there is none."""

    judgement: CaseJudgement | None = None
    inputs_error: str | None = None  # the rag_judge_inputs problem, in our words
    config_error: str | None = None  # the judge model cannot be called at all
    #: What the case's calls spent before the judge model was given up on.
    stopped_usage: Usage | None = None


def timed(call: Callable[[], Any], start: float | None = None) -> Outcome:
    """Run one pipeline call and time it: its output, its exception or its timeout.

    The one place a call becomes an :class:`Outcome` for the sequential path, marker
    tests and prefetch threads (``start``: when the call really began, if earlier).
    """
    __tracebackhide__ = True
    start = time.perf_counter() if start is None else start
    try:
        raw = call()
    except PipelineTimeout:  # ragproof's own timeout; a TimeoutError of the pipeline is an error
        return Outcome(timed_out=True, latency_s=time.perf_counter() - start)
    except Exception as exc:
        return Outcome(error=exc, latency_s=time.perf_counter() - start)
    return Outcome(raw=raw, latency_s=time.perf_counter() - start)


async def timed_async(call: Callable[[], Awaitable[Any]], timeout: float | None) -> Outcome:
    """:func:`timed` for a coroutine on ragproof's event loop, with ``timeout``."""
    __tracebackhide__ = True
    start = time.perf_counter()
    try:
        raw = await asyncio.wait_for(call(), timeout)
    except TimeoutError as exc:
        elapsed = time.perf_counter() - start
        if timeout is not None and elapsed >= timeout:
            return Outcome(timed_out=True, latency_s=elapsed)
        return Outcome(error=exc, latency_s=elapsed)  # the pipeline's own TimeoutError
    except Exception as exc:
        return Outcome(error=exc, latency_s=time.perf_counter() - start)
    return Outcome(raw=raw, latency_s=time.perf_counter() - start)


class _Receiver(Protocol):
    def submit(self, key: str, case: Case, outcome: Outcome) -> None: ...


def hand_over(*stages: _Receiver | None) -> Callable[[str, Case, Outcome], None] | None:
    """One hook that hands a landed outcome to each stage (judges, evaluators), or None."""
    chosen = [s for s in stages if s is not None]
    if not chosen:
        return None
    if len(chosen) == 1:
        return chosen[0].submit

    def submit(key: str, case: Case, outcome: Outcome) -> None:
        for stage in chosen:
            stage.submit(key, case, outcome)

    return submit


def call_case(pipeline: Any, case: Case, cfg: RunConfig, loops: LoopOwner) -> Outcome:
    __tracebackhide__ = True

    def call() -> Any:
        __tracebackhide__ = True
        return invoke(
            pipeline, case, delivery=cfg.injection_delivery, timeout=cfg.timeout, loops=loops
        )

    return timed(call)


@dataclass
class Verdict:
    """The scored record, the normalized output and the message when the case failed."""

    record: CaseRecord
    output: PipelineOutput | None
    message: str | None


def finish_case(
    record: CaseRecord,
    case: Case,
    outcome: Outcome,
    cfg: RunConfig,
    judged: Judged | None = None,
    evaluators: EvaluatorRunner | None = None,
) -> Verdict:
    record.latency_s = outcome.latency_s
    if outcome.timed_out:
        record.status, record.error_type = "error", "TimeoutError"
        return Verdict(
            record,
            None,
            f"ragproof case {case.id}: the pipeline did not answer within {cfg.timeout:g}s "
            "(--ragproof-timeout)",
        )
    if outcome.error is not None:
        name = type(outcome.error).__name__
        record.status, record.error_type = "error", name
        hidden = " (message hidden by --ragproof-redact)" if cfg.redact else ""
        return Verdict(record, None, f"ragproof case {case.id}: the pipeline raised {name}{hidden}")
    try:
        output = outcome.output if outcome.output is not None else normalize_output(outcome.raw)
    except OutputShapeError as exc:
        record.status, record.error_type = "error", "OutputShapeError"
        return Verdict(record, None, f"ragproof case {case.id}: {exc}")
    judgement = _judgement(record, case, cfg, judged)
    if isinstance(judgement, str):
        score(record, case, output, cfg, ())
        # A judge model that cannot be called at all fails every case the same way.
        unusable = judged is not None and judged.config_error is not None
        record.status = "error"
        record.error_type = "JudgeConfigError" if unusable else "JudgeError"
        return Verdict(record, output, judgement)
    extra: dict[str, float] = dict(judgement.metrics) if judgement is not None else {}
    missing: dict[str, str] = dict(judgement.not_judged) if judgement is not None else {}
    if evaluators is not None:
        evaluated = evaluators.score(output, case, outcome)
        if evaluated.error is not None:
            score(record, case, output, cfg, (), extra, missing)
            record.status, record.error_type = "error", "EvaluatorError"
            record.evaluator_error = dict(evaluated.error)
            return Verdict(record, output, _evaluator_message(case, evaluated.error))
        extra.update(evaluated.metrics)
        missing.update(evaluated.not_measured)
        record.not_judged = dict(sorted({**record.not_judged, **evaluated.not_measured}.items()))
    score(record, case, output, cfg, cfg.case_thresholds, extra, missing)
    message = failure_message(record, case, output, cfg) if record.failures else None
    return Verdict(record, output, message)


def _evaluator_message(case: Case, error: dict[str, Any]) -> str:
    what = "its sample_mapper" if error["step"] == "sample_mapper" else "its evaluate()"
    detail = f": {error['message']}" if "message" in error else " (message not kept)"
    return (
        f"ragproof case {case.id}: evaluator '{error['evaluator']}' failed in {what}: "
        f"{error['type']}{detail}; the case is an error, not a pass"
    )


def _judgement(
    record: CaseRecord, case: Case, cfg: RunConfig, judged: Judged | None
) -> CaseJudgement | str | None:
    """The case's judgement, recorded; a message instead when judging failed."""
    if cfg.judges is None:
        return None
    if judged is None:
        # The pipeline call failed (reported before this) or was never judged.
        return None
    if judged.config_error is not None:
        if judged.stopped_usage is not None:
            record.judge_usage = judged.stopped_usage.to_dict()  # its failed requests count
        return f"ragproof case {case.id}: the judge model cannot be called: {judged.config_error}"
    if judged.inputs_error is not None:
        return f"ragproof case {case.id}: {judged.inputs_error}"
    j = judged.judgement
    assert j is not None
    record.judge_usage = j.usage.to_dict()
    if j.estimate is not None:
        record.judge_estimate = j.estimate.to_dict()
    if j.error is not None:
        record.judge_error = dict(j.error)
        return judge_error_message(case.id, j.error)
    record.not_judged = dict(sorted(j.not_judged.items()))
    record.judgements = dict(sorted(j.details.items())) or None
    return j


#: What a judge error type means, for the ones without a provider cause.
_JUDGE_ERROR_HINTS = {
    "InvalidOutputError": "the judge's reply was still unusable after one repair request",
}


def judge_error_message(case_id: str, error: dict[str, Any]) -> str:
    """The failure message of a case whose judge step failed: step and types, never text."""
    details = [str(error[k]) for k in ("cause",) if error.get(k)]
    if error.get("status"):
        details.append(f"HTTP {error['status']}")
    hint = _JUDGE_ERROR_HINTS.get(str(error.get("type")))
    if hint is not None:
        details.append(hint)
    detail = f" ({', '.join(details)})" if details else ""
    return (
        f"ragproof case {case_id}: judge step '{error.get('step')}' failed: "
        f"{error.get('type')}{detail}; the case is an error, not a pass "
        "(the run goes on; provider messages are not kept)"
    )
