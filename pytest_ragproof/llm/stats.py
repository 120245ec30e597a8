"""Per-call usage and the running totals of one client (for run summaries)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    """Tokens as the provider reported them (0 when it reported nothing)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def add_cost(a: float | None, b: float | None) -> float | None:
    """Sum two costs where None means "price unknown"; unknown wins only if both are."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


@dataclass
class LLMStats:
    """Totals over every call made through one client.

    ``calls`` counts logical calls (one ``complete``/``structured``), ``requests``
    the HTTP requests actually sent (retries and repairs included). Tokens and cost
    cover sent requests only: a cache hit spends nothing. ``cost_usd`` is None
    while litellm knew the price of no request (sent now or, for a cache hit,
    when its entry was made); ``unpriced_requests`` counts those
    it could not price. ``failures`` is keyed by the exception type we raised
    (``ProviderError``, ``LLMTimeoutError``, ``InvalidOutputError``) plus the
    provider's exception type, e.g. ``ProviderError:BadRequestError``.
    """

    calls: int = 0
    requests: int = 0
    cache_hits: int = 0
    repairs: int = 0
    retries: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    unpriced_requests: int = 0
    #: Replies the provider stopped at their completion budget (``finish_reason: length``).
    cut: int = 0
    #: Seconds lost to failed requests and backoff (a failed call: until it gave up).
    waited_s: float = 0.0
    #: The concurrency the endpoint was lowered to after unanswered requests (llm.breaker).
    concurrency_lowered_to: int | None = None
    #: What ``auto`` chose after asking the server (llm.probe), and the probe requests
    #: sent for it (not in ``requests``; their tokens are in the token counts).
    response_format: str | None = None
    probe_requests: int = 0

    @property
    def total_retries(self) -> int:
        return sum(self.retries.values())

    def record_usage(self, usage: Usage, cost: float | None) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        if cost is None:
            self.unpriced_requests += 1
        else:
            self.cost_usd = add_cost(self.cost_usd, cost)

    def record_hit(self, priced: bool | None) -> None:
        """A call answered by the cache: free, and priced as the call that made it was."""
        self.cache_hits += 1
        if priced:
            self.cost_usd = add_cost(self.cost_usd, 0.0)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot with sorted keys, for summaries."""
        return {
            "cache_hits": self.cache_hits,
            "calls": self.calls,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "cut": self.cut,
            "failures": dict(sorted(self.failures.items())),
            "prompt_tokens": self.prompt_tokens,
            "repairs": self.repairs,
            "requests": self.requests,
            "retries": dict(sorted(self.retries.items())),
            "unpriced_requests": self.unpriced_requests,
            "waited_s": round(self.waited_s, 3),
            **({"response_format": self.response_format} if self.response_format else {}),
            **({"probe_requests": self.probe_requests} if self.probe_requests else {}),
        }
