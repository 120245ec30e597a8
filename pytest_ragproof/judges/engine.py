"""Judging one case: the calls, the budget, shared claim extraction, errors.

One :class:`JudgeEngine` per run (per xdist worker) holds the LLM client and the
budget; :meth:`JudgeEngine.judge` is a coroutine run on the judging loop of
:mod:`pytest_ragproof.execution.judging`. Each judge lives in its own module
(:data:`JUDGE_MODULES`); the answer's claims are extracted once per case
(:mod:`~pytest_ragproof.judges.claims`) and shared by ``faithfulness``,
``answer_relevancy`` and ``answer_correctness``; steps that do not depend on each
other run concurrently (bounded by the client).

Nothing here returns NaN or a made-up score: a metric is either computed from the
judge's verdicts, or absent with a reason in ``not_judged``, or the case is an error
(``error``: the failed step and the exception type, never a provider message).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import InvalidOutputError, LLMConfigError, LLMError, ProviderError
from pytest_ragproof.judges import JUDGE_KINDS, JudgeSettings, claims
from pytest_ragproof.judges.base import (
    Ask,
    CaseJudgement,
    Estimate,
    Judge,
    JudgeInputs,
    JudgingStopped,
    Subject,
    Usage,
)
from pytest_ragproof.judges.memo import Hit, Memo
from pytest_ragproof.judges.prompts import Messages, Step
from pytest_ragproof.llm.client import LLMClient
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.request import estimate_tokens

__all__ = [
    "JUDGE_MODULES",
    "Budget",
    "BudgetReached",
    "CaseJudgement",
    "DryRunCall",
    "Estimate",
    "JudgeEngine",
    "JudgeInputs",
    "JudgingStopped",
    "Usage",
    "judge_llm_config",
]

T = TypeVar("T", bound=BaseModel)


#: Every judge, by the metric it produces, in the order the engine starts them.
def _judge_modules() -> dict[str, Judge]:
    """Each registered judge's ``JUDGE`` (pytest_ragproof.metrics.judged names the module)."""
    import importlib

    from pytest_ragproof.metrics.judged import JUDGE_SPECS

    out: dict[str, Judge] = {}
    for spec in JUDGE_SPECS:
        judge: Judge = importlib.import_module(f"pytest_ragproof.judges.{spec.module}").JUDGE
        if judge.metric != spec.name:
            raise RuntimeError(
                f"judges/{spec.module}.py: JUDGE is {judge.metric!r}, not {spec.name!r}"
            )
        out[spec.name] = judge
    return out


JUDGE_MODULES: dict[str, Judge] = _judge_modules()


def judge_llm_config(settings: JudgeSettings) -> LLMConfig:
    """The LLM settings of every judge call (a run and ``ragproof judge-check`` share them).

    Temperature 0 and seed 0; the cache key holds the parameters, so both make the
    same keys and one serves the other's cached verdicts.
    """
    return LLMConfig(
        model=settings.model,
        api_base=settings.api_base,
        concurrency=settings.concurrency,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        max_total_s=max(settings.timeout_s * (settings.max_retries + 1), 1.0) + 60.0,
        response_format=settings.response_format,
        max_tokens=settings.max_tokens,
        instructions=settings.instructions,
        temperature=0.0,
        seed=0,
    )


class BudgetReached(Exception):
    """Raised by the budget instead of making a call."""


class DryRunCall(Exception):
    """Raised by the dry-run admission: the call is counted, not made."""


class Budget:
    """``--ragproof-judge-max-calls`` / ``--ragproof-judge-budget-usd`` for one process.

    Used from the judging loop's thread only. ``max_calls`` is never exceeded (a call
    is counted when admitted); the cost is known only after a call, so judging stops
    once the spent cost reaches the budget, with at most the calls then in flight over.
    """

    def __init__(self, max_calls: int | None, budget_usd: float | None) -> None:
        self.max_calls = max_calls
        self.budget_usd = budget_usd
        self.admitted = 0
        self.spent_usd = 0.0
        self.unpriced = 0  # calls whose price litellm does not know
        self.reached = False

    def admit(self) -> None:
        if (self.max_calls is not None and self.admitted >= self.max_calls) or (
            self.budget_usd is not None and self.spent_usd >= self.budget_usd
        ):
            self.reached = True
            raise BudgetReached
        self.admitted += 1

    def spend(self, cost: float | None) -> None:
        if cost is None:
            self.unpriced += 1
        else:
            self.spent_usd += cost


class JudgeEngine:
    def __init__(self, settings: JudgeSettings, client: LLMClient, budget: Budget) -> None:
        self.settings = settings
        self.client = client
        self.budget = budget
        self.dry_run = settings.dry_run
        client.admit = self._dry_admit if self.dry_run else budget.admit
        memo = Memo(client.cache, client.config.model)
        #: Whole judgements cached (not in a dry run: its estimate counts each step).
        self.memo = memo if memo.enabled and not self.dry_run else None

    @staticmethod
    def _dry_admit() -> None:
        raise DryRunCall

    def _note_format(self, out: CaseJudgement) -> None:
        """The form ``auto`` chose by asking the server, on the case's usage."""
        choice = self.client.provider.format_choice
        if choice is not None and out.usage.response_format is None:
            out.usage.response_format = choice.describe()  # once a case, not once a call

    # -- one step -----------------------------------------------------------
    def _asker(self, out: CaseJudgement) -> Ask:
        """The judges' :class:`Ask` for one case: every call is accounted on ``out``."""

        def ask(step: Step, messages: Messages, schema: type[T], *, items: int = 1) -> Awaitable[T]:
            return self._call(out, step, messages, schema, items=items)

        return ask

    async def _call(
        self,
        out: CaseJudgement,
        step: Step,
        messages: Messages,
        schema: type[T],
        *,
        items: int = 1,
    ) -> T:
        try:
            result = await self.client.structured(
                messages, schema, prompt_version=step.prompt_version, items=items
            )
        except LLMError as exc:
            self._note_format(out)
            if not isinstance(exc, LLMConfigError) or exc.attempts or exc.waited_s:
                out.usage.failed(exc)  # a stop counts the requests it made and the time
            if exc.prompt_tokens or exc.completion_tokens:
                self.budget.spend(exc.cost)  # its replies were paid for, though refused
            raise
        except DryRunCall:
            est = out.estimate = out.estimate or Estimate()
            est.calls += 1
            est.prompt_tokens += estimate_tokens(messages) + 120  # the schema instruction
            est.completion_tokens += 12 * max(items, 1)
            raise
        self._note_format(out)
        usage = out.usage
        if result.cached:
            usage.cached += 1
            if result.cost is None:
                usage.cost_usd = None  # as the run that made the call said: price unknown
            if self.dry_run:
                out.estimate = out.estimate or Estimate()
                out.estimate.cached += 1
        else:
            usage.calls += 1
            self.budget.spend(result.cost)
            if usage.cost_usd is not None:
                usage.cost_usd = None if result.cost is None else usage.cost_usd + result.cost
        if not result.cached:
            # Tokens spent by this run: a cached reply cost nothing today.
            usage.requests += result.attempts
            usage.waited_s += result.waited_s
            usage.prompt_tokens += result.usage.prompt_tokens
            usage.completion_tokens += result.usage.completion_tokens
        return result.value

    async def _guard(
        self,
        out: CaseJudgement,
        metrics: Sequence[str],
        step: Step,
        work: Callable[[], Awaitable[None]],
    ) -> None:
        """Run ``work``; a refused call marks ``metrics`` not judged, a failure is the error."""
        try:
            await work()
        except BudgetReached:
            for m in metrics:
                out.not_judged.setdefault(m, "budget")
        except DryRunCall:
            for m in metrics:
                out.not_judged.setdefault(m, "dry_run")
        except LLMConfigError:
            raise  # the same for every case: the run reports it once
        except LLMError as exc:
            if isinstance(exc, ProviderError) and exc.status in (401, 403):
                # A rejected key fails every call alike: a configuration error, said once.
                raise LLMConfigError(str(exc)) from None
            if out.error is None:
                out.error = _error_of(step, exc)
            for m in metrics:
                out.not_judged.pop(m, None)

    def _start(self, out: CaseJudgement, judge: Judge, subject: Subject) -> Awaitable[None]:
        ask = self._asker(out)
        return self._guard(out, [judge.metric], judge.step, lambda: judge.run(ask, out, subject))

    # -- one case -----------------------------------------------------------
    def _wanted(self, x: JudgeInputs) -> list[Judge]:
        return [
            JUDGE_MODULES[name]
            for name in JUDGE_MODULES
            if name in self.settings.judges and x.kind in JUDGE_KINDS[name]
        ]

    def lookup(self, x: JudgeInputs) -> tuple[str | None, Hit | None]:
        """The memo key of ``x`` and its stored whole judgement, if any (:mod:`.memo`).

        From any thread: it only reads the cache (which is thread-safe); the caller counts
        the calls a hit stands for. The key (None without a memo) goes to :meth:`judge` on
        a miss, so the case is not looked up twice.
        """
        if self.memo is None:
            return None, None
        key = self.memo.key(x, [j.metric for j in self._wanted(x)])
        return key, self.memo.get(key)

    async def judge(self, x: JudgeInputs, *, missed: str | None = None) -> CaseJudgement:
        """Judge ``x``: its stored judgement if the memo has one, else every judge step.

        ``missed``: the memo key :meth:`lookup` returned without a hit (not looked up again).
        """
        wanted = self._wanted(x)
        if self.memo is None:
            return await self._judge(x, wanted)
        key = missed
        if key is None:
            key = self.memo.key(x, [j.metric for j in wanted])
            hit = self.memo.get(key)
            if hit is not None:
                self.client.replayed(hit.calls, priced=hit.priced)
                return hit.judgement
        out = await self._judge(x, wanted)
        self.memo.put(key, out)
        return out

    async def _judge(self, x: JudgeInputs, wanted: list[Judge]) -> CaseJudgement:
        out = CaseJudgement()
        try:
            await self._steps(out, x, wanted)
        except LLMConfigError as exc:
            raise JudgingStopped(exc, out.usage) from None
        return out

    async def _steps(self, out: CaseJudgement, x: JudgeInputs, wanted: list[Judge]) -> None:
        answer = (x.answer or "").strip()
        contexts = list(x.contexts or ())
        todo: list[Judge] = []
        for judge in wanted:
            reason = judge.precondition(x, answer, contexts)
            if reason is None:
                todo.append(judge)
            else:
                out.not_judged[judge.metric] = reason
        subject = Subject(x, answer, contexts)
        jobs: list[Awaitable[None]] = []
        claim_judges = [j for j in todo if j.claims]
        if claim_judges:
            jobs.append(
                self._guard(
                    out,
                    [j.metric for j in claim_judges],
                    claims.STEP,
                    lambda: self._claim_judges(out, subject, claim_judges),
                )
            )
        jobs.extend(self._start(out, j, subject) for j in todo if not j.claims)
        await asyncio.gather(*jobs)
        if out.error is not None:
            # An error case has no judged scores: nothing partial is reported as measured.
            out.metrics.clear()

    async def _claim_judges(
        self, out: CaseJudgement, subject: Subject, judges: list[Judge]
    ) -> None:
        try:
            found = await claims.extract(self._asker(out), subject.inputs.question, subject.answer)
        except DryRunCall:
            found = claims.sentences(subject.answer)
            for j in judges:
                out.not_judged[j.metric] = "dry_run"
        if not found:
            for j in judges:
                out.not_judged[j.metric] = "no_claims"
            return
        with_claims = Subject(subject.inputs, subject.answer, subject.contexts, found)
        await asyncio.gather(*(self._start(out, j, with_claims) for j in judges))


def _error_of(step: Step, exc: LLMError) -> dict[str, Any]:
    error: dict[str, Any] = {"step": step.prompt_version, "type": type(exc).__name__}
    if isinstance(exc, ProviderError):
        error["cause"] = exc.exc_type
        error["status"] = exc.status
        error["attempts"] = exc.attempts
    elif isinstance(exc, InvalidOutputError) and exc.cut_at is not None:
        error["cause"] = exc.kind  # "cut at N tokens": the budget, not the model, ended it
    return error
