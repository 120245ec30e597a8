"""What every judge module shares: the case it sees, what it writes, how it asks.

A judge module (``faithfulness.py``, ``context_recall.py``, ...) defines its versioned
prompt step and one :class:`Judge`: which inputs it needs (a case without them is not
judged, with the reason) and ``run``, which asks the judge model through :class:`Ask`
and writes its score and reasons into the :class:`CaseJudgement`. The engine
(:mod:`pytest_ragproof.judges.engine`) owns the calls, the budget and the errors.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import LLMConfigError, LLMError
from pytest_ragproof.judges.prompts import Messages, Step

T = TypeVar("T", bound=BaseModel)


class JudgingStopped(LLMConfigError):
    """The judge model cannot be called at all (an :class:`LLMConfigError`, said once);
    ``usage`` holds what the case's calls spent before it stopped (failed requests, time)."""

    def __init__(self, cause: LLMConfigError, usage: Usage) -> None:
        super().__init__(str(cause))
        self.usage = usage


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


@dataclass
class Usage:
    calls: int = 0  # logical calls that reached the provider
    cached: int = 0  # logical calls served by the cache
    requests: int = 0  # HTTP requests, retries and repairs included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None once any call's price is unknown
    #: Logical calls that ended in an error, by how (``timeout``, ``HTTP 500``,
    #: ``invalid output``, ``cut at N tokens``); their requests count in ``requests``.
    failures: dict[str, int] = field(default_factory=dict)
    #: Seconds lost to failed requests and backoff, and to failed calls until they gave up.
    waited_s: float = 0.0
    #: The structured form ``auto`` chose by asking the server (llm.probe), when it asked.
    response_format: str | None = None

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
        for kind, n in other.failures.items():
            self.failures[kind] = self.failures.get(kind, 0) + n
        self.waited_s += other.waited_s
        self.response_format = self.response_format or other.response_format

    def failed(self, exc: LLMError) -> None:
        """Count a call that ended in ``exc``: its kind, requests, time, and the tokens and
        cost of the replies it did receive (refused, but generated and billed)."""
        self.failures[exc.kind] = self.failures.get(exc.kind, 0) + 1
        self.requests += exc.attempts
        self.waited_s += exc.waited_s
        self.prompt_tokens += exc.prompt_tokens
        self.completion_tokens += exc.completion_tokens
        if self.cost_usd is not None:
            self.cost_usd = None if exc.cost is None else self.cost_usd + exc.cost

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "calls": self.calls,
            "cached": self.cached,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
        }
        # Only when something failed or waited: a clean run's records read as before.
        if self.failures:
            out["failures"] = dict(sorted(self.failures.items()))
        if self.waited_s:
            out["waited_s"] = round(self.waited_s, 3)
        if self.response_format:
            out["response_format"] = self.response_format
        return out


USAGE_COUNTS = ("calls", "cached", "requests", "prompt_tokens", "completion_tokens")


def merge_usage(usages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Recorded ``judge_usage`` dicts summed: counts, cost (None if any is), failures, waits."""
    usages = list(usages)
    out: dict[str, Any] = {k: sum(int(u.get(k, 0)) for u in usages) for k in USAGE_COUNTS}
    costs = [u.get("cost_usd") for u in usages]
    out["cost_usd"] = (
        None
        if any(c is None for c in costs)
        else round(math.fsum(float(c) for c in costs if c is not None), 8)
    )
    failures: dict[str, int] = {}
    for u in usages:
        for kind, n in (u.get("failures") or {}).items():
            failures[str(kind)] = failures.get(str(kind), 0) + int(n)
    if failures:
        out["failures"] = dict(sorted(failures.items()))
    waited = math.fsum(float(u.get("waited_s") or 0.0) for u in usages)
    if waited:
        out["waited_s"] = round(waited, 3)
    # Each xdist worker asks the server itself: the distinct answers, in order.
    chosen = list(
        dict.fromkeys(str(u["response_format"]) for u in usages if u.get("response_format"))
    )
    if chosen:
        out["response_format"] = "; ".join(chosen)
    return out


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


@dataclass(frozen=True)
class Subject:
    """One case as a judge's ``run`` sees it: inputs, stripped answer, contexts, claims."""

    inputs: JudgeInputs
    answer: str
    contexts: list[str]
    claims: list[str] = field(default_factory=list)  # the answer's claims (claim judges)


class Ask(Protocol):
    """One judge step: send ``messages``, get a reply validated as ``schema``.

    ``items`` sizes a dry-run estimate (how many verdicts the reply holds).
    """

    def __call__(
        self, step: Step, messages: Messages, schema: type[T], *, items: int = 1
    ) -> Awaitable[T]: ...


Run = Callable[[Ask, CaseJudgement, Subject], Awaitable[None]]


@dataclass(frozen=True)
class Judge:
    """One judge: the metric it produces, its step, what it needs, how it runs."""

    metric: str
    step: Step
    run: Run
    claims: bool = False  # judges the answer's claims (extracted once, shared)
    answer: bool = False  # needs a non-empty answer
    contexts: bool = False  # needs at least one context
    reference: bool = False  # needs the case's expected_answer
    payload: bool = False  # needs the case's adversarial_payload

    def precondition(self, x: JudgeInputs, answer: str, contexts: list[str]) -> str | None:
        """Why this judge cannot judge the case (a ``not_judged`` reason), else None."""
        if (self.answer or self.claims) and not answer:
            return "no_answer"
        if self.claims and x.abstained:
            return "abstained"
        if self.contexts and not contexts:
            return "no_contexts"
        if self.reference and not (x.reference or "").strip():
            return "no_reference"
        if self.payload and not (x.payload or "").strip():
            return "no_payload"
        return None


def rank(number: int | None, n: int) -> int | None:
    """A 1-based passage number the judge gave, if it names one of the passages."""
    return number if number is not None and 1 <= number <= n else None
