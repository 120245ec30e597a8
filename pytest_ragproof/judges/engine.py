"""Judging one case: the steps each judge needs, shared extraction, scores and reasons.

One :class:`JudgeEngine` per run (per xdist worker) holds the LLM client and the
budget; :meth:`JudgeEngine.judge` is a coroutine run on the judging loop of
:mod:`pytest_ragproof.execution.judging`. The answer's claims are extracted once per
case and shared by ``faithfulness``, ``answer_relevancy`` and ``answer_correctness``;
steps that do not depend on each other run concurrently (bounded by the client).

Nothing here returns NaN or a made-up score: a metric is either computed from the
judge's verdicts, or absent with a reason in ``not_judged``, or the case is an error
(``error``: the failed step and the exception type, never a provider message).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import LLMConfigError, LLMError, ProviderError
from pytest_ragproof.judges import JUDGE_KINDS, JudgeSettings
from pytest_ragproof.judges import prompts as P
from pytest_ragproof.judges import schemas as S
from pytest_ragproof.llm.client import LLMClient
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.request import estimate_tokens

T = TypeVar("T", bound=BaseModel)

_CLAIM_JUDGES = ("faithfulness", "answer_relevancy", "answer_correctness")


@dataclass(frozen=True)
class JudgeInputs:
    """Exactly what the judges of one case see (``rag_judge_inputs`` may choose it)."""

    kind: str
    question: str
    answer: str | None
    contexts: tuple[str, ...] | None
    reference: str | None = None
    payload: str | None = None
    abstained: bool = False  # the lexical ``abstained`` metric said so


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
        temperature=0.0,
        seed=0,
    )


class BudgetReached(Exception):
    """Raised by the budget instead of making a call."""


class DryRunCall(Exception):
    """Raised by the dry-run admission: the call is counted, not made."""


@dataclass
class Usage:
    calls: int = 0  # logical calls that reached the provider
    cached: int = 0  # logical calls served by the cache
    requests: int = 0  # HTTP requests, retries and repairs included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None once any call's price is unknown

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
        }


@dataclass
class Estimate:
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class CaseJudgement:
    """What the judges found on one case."""

    metrics: dict[str, float] = field(default_factory=dict)
    not_judged: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    error: dict[str, Any] | None = None
    estimate: Estimate | None = None


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


def _sentences(text: str) -> list[str]:
    """A rough claim split, used only to size dry-run estimates of dependent steps."""
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s] or [text]


class JudgeEngine:
    def __init__(self, settings: JudgeSettings, client: LLMClient, budget: Budget) -> None:
        self.settings = settings
        self.client = client
        self.budget = budget
        self.dry_run = settings.dry_run
        client.admit = self._dry_admit if self.dry_run else budget.admit

    @staticmethod
    def _dry_admit() -> None:
        raise DryRunCall

    # -- one step -----------------------------------------------------------
    async def _call(
        self,
        out: CaseJudgement,
        step: P.Step,
        messages: P.Messages,
        schema: type[T],
        *,
        items: int = 1,
    ) -> T:
        try:
            result = await self.client.structured(
                messages, schema, prompt_version=step.prompt_version
            )
        except DryRunCall:
            est = out.estimate = out.estimate or Estimate()
            est.calls += 1
            est.prompt_tokens += estimate_tokens(messages) + 120  # the schema instruction
            est.completion_tokens += 12 * max(items, 1)
            raise
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
            usage.prompt_tokens += result.usage.prompt_tokens
            usage.completion_tokens += result.usage.completion_tokens
        return result.value

    async def _guard(
        self,
        out: CaseJudgement,
        metrics: Sequence[str],
        step: P.Step,
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

    # -- one case -----------------------------------------------------------
    async def judge(self, x: JudgeInputs) -> CaseJudgement:
        out = CaseJudgement()
        wanted = [j for j in self.settings.judges if x.kind in JUDGE_KINDS[j]]
        answer = (x.answer or "").strip()
        contexts = list(x.contexts or ())
        for judge in wanted:
            reason = _precondition(judge, x, answer, contexts)
            if reason is not None:
                out.not_judged[judge] = reason
        todo = [j for j in wanted if j not in out.not_judged]
        jobs: list[Awaitable[None]] = []
        claim_judges = [j for j in todo if j in _CLAIM_JUDGES]
        if claim_judges:
            jobs.append(
                self._guard(
                    out,
                    claim_judges,
                    P.ANSWER_CLAIMS,
                    lambda: self._claim_judges(out, x, answer, contexts, claim_judges),
                )
            )
        if "context_relevance" in todo:
            jobs.append(
                self._guard(
                    out,
                    ["context_relevance"],
                    P.CONTEXT_RELEVANCE,
                    lambda: self._context_relevance(out, x, contexts),
                )
            )
        if "context_recall" in todo:
            jobs.append(
                self._guard(
                    out,
                    ["context_recall"],
                    P.CONTEXT_RECALL,
                    lambda: self._context_recall(out, x, contexts),
                )
            )
        if "abstained_judged" in todo:
            jobs.append(
                self._guard(
                    out, ["abstained_judged"], P.ABSTAINED, lambda: self._abstained(out, x, answer)
                )
            )
        if "injection_resisted_judged" in todo:
            jobs.append(
                self._guard(
                    out,
                    ["injection_resisted_judged"],
                    P.INJECTION,
                    lambda: self._injection(out, x, answer),
                )
            )
        await asyncio.gather(*jobs)
        if out.error is not None:
            # An error case has no judged scores: nothing partial is reported as measured.
            out.metrics.clear()
        return out

    async def _claim_judges(
        self,
        out: CaseJudgement,
        x: JudgeInputs,
        answer: str,
        contexts: list[str],
        judges: list[str],
    ) -> None:
        try:
            extracted = await self._call(
                out, P.ANSWER_CLAIMS, P.claims_prompt(x.question, answer), S.Claims
            )
            claims = [c.strip() for c in extracted.claims if c.strip()]
        except DryRunCall:
            claims = _sentences(answer)
            for j in judges:
                out.not_judged[j] = "dry_run"
        if not claims:
            for j in judges:
                out.not_judged[j] = "no_claims"
            return
        steps: list[Awaitable[None]] = []
        if "faithfulness" in judges:
            steps.append(
                self._guard(
                    out,
                    ["faithfulness"],
                    P.FAITHFULNESS,
                    lambda: self._faithfulness(out, claims, contexts),
                )
            )
        if "answer_relevancy" in judges:
            steps.append(
                self._guard(
                    out,
                    ["answer_relevancy"],
                    P.ANSWER_RELEVANCY,
                    lambda: self._relevancy(out, x, claims),
                )
            )
        if "answer_correctness" in judges:
            steps.append(
                self._guard(
                    out,
                    ["answer_correctness"],
                    P.ANSWER_CORRECTNESS,
                    lambda: self._correctness(out, x, claims),
                )
            )
        await asyncio.gather(*steps)

    async def _faithfulness(
        self, out: CaseJudgement, claims: list[str], contexts: list[str]
    ) -> None:
        schema = S.fixed(S.ClaimVerdict, len(claims))
        reply = await self._call(
            out, P.FAITHFULNESS, P.faithfulness_prompt(claims, contexts), schema, items=len(claims)
        )
        verdicts: list[S.ClaimVerdict] = reply.verdicts  # type: ignore[attr-defined]
        items = [
            {
                "claim": claim,
                "verdict": "supported" if v.verdict else "unsupported",
                "context": _rank(v.context, len(contexts)) if v.verdict else None,
            }
            for claim, v in zip(claims, verdicts, strict=True)
        ]
        supported = sum(1 for v in verdicts if v.verdict)
        out.metrics["faithfulness"] = supported / len(claims)
        out.details["faithfulness"] = {"prompt": P.FAITHFULNESS.prompt_version, "claims": items}

    async def _relevancy(self, out: CaseJudgement, x: JudgeInputs, claims: list[str]) -> None:
        schema = S.fixed(S.PlainVerdict, len(claims))
        reply = await self._call(
            out,
            P.ANSWER_RELEVANCY,
            P.relevancy_prompt(x.question, claims),
            schema,
            items=len(claims),
        )
        verdicts: list[S.PlainVerdict] = reply.verdicts  # type: ignore[attr-defined]
        items = [
            {"statement": claim, "verdict": "relevant" if v.verdict else "irrelevant"}
            for claim, v in zip(claims, verdicts, strict=True)
        ]
        out.metrics["answer_relevancy"] = sum(1 for v in verdicts if v.verdict) / len(claims)
        out.details["answer_relevancy"] = {
            "prompt": P.ANSWER_RELEVANCY.prompt_version,
            "statements": items,
        }

    async def _correctness(self, out: CaseJudgement, x: JudgeInputs, claims: list[str]) -> None:
        assert x.reference is not None
        schema = S.correctness(len(claims))
        reply = await self._call(
            out,
            P.ANSWER_CORRECTNESS,
            P.correctness_prompt(x.question, x.reference, claims),
            schema,
            items=len(claims) + 3,
        )
        answer_v: list[S.PlainVerdict] = reply.answer_claims  # type: ignore[attr-defined]
        reference_v: list[S.ReferenceClaim] = reply.reference_claims  # type: ignore[attr-defined]
        precision = sum(1 for v in answer_v if v.verdict) / len(claims)
        recall = sum(1 for v in reference_v if v.verdict) / len(reference_v)
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        out.metrics["answer_correctness"] = f1
        out.metrics["answer_correctness_precision"] = precision
        out.metrics["answer_correctness_recall"] = recall
        out.details["answer_correctness"] = {
            "prompt": P.ANSWER_CORRECTNESS.prompt_version,
            "precision": precision,
            "recall": recall,
            "answer_claims": [
                {"claim": c, "verdict": "in reference" if v.verdict else "not in reference"}
                for c, v in zip(claims, answer_v, strict=True)
            ],
            "reference_claims": [
                {"claim": v.claim, "verdict": "in answer" if v.verdict else "missing from answer"}
                for v in reference_v
            ],
        }

    async def _context_relevance(
        self, out: CaseJudgement, x: JudgeInputs, contexts: list[str]
    ) -> None:
        schema = S.fixed(S.PlainVerdict, len(contexts))
        reply = await self._call(
            out,
            P.CONTEXT_RELEVANCE,
            P.context_relevance_prompt(x.question, contexts),
            schema,
            items=len(contexts),
        )
        verdicts: list[S.PlainVerdict] = reply.verdicts  # type: ignore[attr-defined]
        out.metrics["context_relevance"] = sum(1 for v in verdicts if v.verdict) / len(contexts)
        out.details["context_relevance"] = {
            "prompt": P.CONTEXT_RELEVANCE.prompt_version,
            "contexts": [
                {"context": i, "verdict": "relevant" if v.verdict else "irrelevant"}
                for i, v in enumerate(verdicts, 1)
            ],
        }

    async def _context_recall(
        self, out: CaseJudgement, x: JudgeInputs, contexts: list[str]
    ) -> None:
        assert x.reference is not None
        reply = await self._call(
            out,
            P.CONTEXT_RECALL,
            P.context_recall_prompt(x.question, x.reference, contexts),
            S.ContextRecall,
            items=4,
        )
        claims = reply.reference_claims
        out.metrics["context_recall"] = sum(1 for c in claims if c.verdict) / len(claims)
        out.details["context_recall"] = {
            "prompt": P.CONTEXT_RECALL.prompt_version,
            "reference_claims": [
                {
                    "claim": c.claim,
                    "verdict": "attributed" if c.verdict else "not attributed",
                    "context": _rank(c.context, len(contexts)) if c.verdict else None,
                }
                for c in claims
            ],
        }

    async def _abstained(self, out: CaseJudgement, x: JudgeInputs, answer: str) -> None:
        reply = await self._call(
            out, P.ABSTAINED, P.abstained_prompt(x.question, answer), S.OneVerdict
        )
        out.metrics["abstained_judged"] = 1.0 if reply.verdict else 0.0
        out.details["abstained_judged"] = {
            "prompt": P.ABSTAINED.prompt_version,
            "verdict": "declined" if reply.verdict else "answered",
        }

    async def _injection(self, out: CaseJudgement, x: JudgeInputs, answer: str) -> None:
        assert x.payload is not None
        reply = await self._call(
            out, P.INJECTION, P.injection_prompt(x.question, x.payload, answer), S.OneVerdict
        )
        out.metrics["injection_resisted_judged"] = 0.0 if reply.verdict else 1.0
        out.details["injection_resisted_judged"] = {
            "prompt": P.INJECTION.prompt_version,
            "verdict": "followed the planted instruction" if reply.verdict else "ignored it",
        }


def _precondition(judge: str, x: JudgeInputs, answer: str, contexts: list[str]) -> str | None:
    answer_judges = (*_CLAIM_JUDGES, "abstained_judged", "injection_resisted_judged")
    if judge in answer_judges and not answer:
        return "no_answer"
    if judge in _CLAIM_JUDGES and x.abstained:
        return "abstained"
    if judge in ("faithfulness", "context_relevance", "context_recall") and not contexts:
        return "no_contexts"
    if judge in ("answer_correctness", "context_recall") and not (x.reference or "").strip():
        return "no_reference"
    if judge == "injection_resisted_judged" and not (x.payload or "").strip():
        return "no_payload"
    return None


def _rank(number: int | None, n: int) -> int | None:
    """A 1-based passage number the judge gave, if it names one of the passages."""
    return number if number is not None and 1 <= number <= n else None


def _error_of(step: P.Step, exc: LLMError) -> dict[str, Any]:
    error: dict[str, Any] = {"step": step.prompt_version, "type": type(exc).__name__}
    if isinstance(exc, ProviderError):
        error["cause"] = exc.exc_type
        error["status"] = exc.status
        error["attempts"] = exc.attempts
    return error
