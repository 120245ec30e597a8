"""One logical request, with retries, to the provider, through litellm.

litellm is imported lazily (:mod:`llm.loader`), on the first request that misses the
cache, with its price-table download, callbacks and debug output switched off. Everything the
provider says in an error is dropped: only the exception type and HTTP status
survive, and no exception we raise chains to the provider's.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import (
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    LLMUnreachableError,
    LLMUnresponsiveError,
    ProviderError,
)
from pytest_ragproof.llm.breaker import Breaker
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.failures import classify, shown_address
from pytest_ragproof.llm.loader import load_litellm
from pytest_ragproof.llm.probe import FormatChoice, probe_formats
from pytest_ragproof.llm.request import Reply
from pytest_ragproof.llm.retry import Failure, backoff_delay
from pytest_ragproof.llm.slots import SlotGate
from pytest_ragproof.llm.stats import LLMStats, Usage

if TYPE_CHECKING:
    import asyncio

#: Extra seconds our own watchdog allows beyond litellm's timeout before cancelling.
_WATCHDOG_GRACE_S = 1.0

#: litellm's lists of logging callbacks: where a request's messages could be logged to.
_CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
    "input_callback",
    "service_callback",
)


def _redact_if_logged(litellm: Any) -> None:
    """litellm redacts messages from what it logs only while some callback could log them.

    Its redaction deep-copies every request and reply (about 6% of litellm's CPU time
    per call); with no callback registered nothing is logged, so there is nothing to
    redact. We clear the callbacks when loading litellm, but the user's code may
    register its own afterwards: then our messages are redacted for them.
    """
    litellm.turn_off_message_logging = any(getattr(litellm, n, None) for n in _CALLBACK_LISTS)


def missing_key(config: LLMConfig) -> str | None:
    """The API-key variable ``config.model`` needs and the environment lacks, if any.

    litellm knows which variables each provider reads (``validate_environment``);
    only ``*_API_KEY`` names count, since endpoints, versions and other credential
    chains (cloud roles) have defaults or other sources. A model with
    ``api_key_env`` needs that variable instead.
    """
    if config.api_key_env is not None:
        return None if os.environ.get(config.api_key_env) else config.api_key_env
    litellm = load_litellm()
    try:
        found = litellm.validate_environment(model=config.model, api_base=config.api_base)
    except Exception:
        return None  # a model litellm cannot place: the first call will say more
    missing = found.get("missing_keys") if isinstance(found, dict) else None
    keys = [k for k in missing or () if isinstance(k, str) and k.endswith("_API_KEY")]
    return keys[0] if keys else None


def check_environment(config: LLMConfig) -> None:
    """Raise one :class:`LLMConfigError` naming the key variable the model lacks."""
    if config.api_key_env is not None:
        config.api_key()  # raises when that variable is not set
        return
    variable = missing_key(config)
    if variable is not None:
        raise LLMConfigError(
            f"no API key is set: the model {config.model} needs {variable}; export it "
            "(or name another variable with api_key_env)"
        )


def has_price(model: str) -> bool:
    """Does litellm know what ``model`` costs per token (free counts as known)?"""
    try:
        info = load_litellm().get_model_info(model)
    except Exception:
        return False  # litellm raises for models it has no entry for
    prices = (info.get("input_cost_per_token"), info.get("output_cost_per_token"))
    return all(isinstance(p, int | float) for p in prices)


class Provider:
    """Sends one logical request to the configured model: retries, timeouts, concurrency.

    At most ``config.concurrency`` requests are in flight; a request waiting out a
    backoff does not hold a slot. Every request sent is counted in ``stats``.
    """

    def __init__(self, config: LLMConfig, stats: LLMStats, rng: random.Random) -> None:
        self.config = config
        self.stats = stats
        self._rng = rng
        self._gates: tuple[asyncio.AbstractEventLoop, SlotGate] | None = None
        self._environment_checked = False
        endpoint = shown_address(config.api_base) or f"the provider of {config.model}"
        self.breaker = Breaker(endpoint, config.concurrency)
        #: What ``auto`` chose by asking the server (None until asked, or not asked).
        self.format_choice: FormatChoice | None = None
        self._probe_locks: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def structured_mode(self) -> str:
        """How structured replies are asked for: ``auto`` resolved for this model.

        litellm's table answers for the models it knows; a model it does not know at an
        API base of the user's (a local server) is asked once (:mod:`llm.probe`).
        """
        mode = self.config.response_format
        if mode != "auto":
            return mode
        if self.format_choice is not None:
            return self.format_choice.mode
        if supports_response_schema(self.config.model):
            return "json_schema"
        if not self.config.api_base:
            return "prompt"
        async with self._probe_lock():
            if self.format_choice is None:
                self.format_choice = await probe_formats(self._send_once)
                self.stats.response_format = self.format_choice.describe()
        return self.format_choice.mode

    async def _send_once(
        self, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> str | None:
        return (await self.send(messages, params, retries=0, probe=True)).text

    def _probe_lock(self) -> asyncio.Lock:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._probe_locks is None or self._probe_locks[0] is not loop:
            self._probe_locks = (loop, asyncio.Lock())
        return self._probe_locks[1]

    async def send(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        *,
        retries: int | None = None,
        probe: bool = False,
    ) -> Reply:
        """One logical request with retries (``retries``: the config's unless given);
        returns the first success. A ``probe``'s requests count apart."""
        import asyncio

        litellm = load_litellm()
        cfg = self.config
        # A probe's failures, waits and tokens are not the run's calls: kept apart.
        stats = LLMStats() if probe else self.stats
        if not self._environment_checked:
            # Before the first request: a missing key is one clear configuration error,
            # not a provider failure per call.
            check_environment(cfg)
            self._environment_checked = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cfg.max_total_s
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "messages": messages,
            # Ours are the only retries: litellm's and the openai SDK's are off.
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
            **params,
        }
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        api_key = cfg.api_key()
        if api_key is not None:
            kwargs["api_key"] = api_key
        attempt = 0
        started = loop.time()
        while True:
            attempt += 1
            attempt_started = loop.time()
            remaining = deadline - attempt_started
            attempt_timeout = max(0.001, min(cfg.timeout_s, remaining))
            kwargs["timeout"] = attempt_timeout
            failure: Failure
            epoch: int | None = None
            try:
                async with self._gate():
                    self.breaker.check()  # given up on: no request (said once by the run)
                    if probe:
                        self.stats.probe_requests += 1
                    stats.requests += 1
                    epoch = self.breaker.sent()
                    _redact_if_logged(litellm)
                    async with asyncio.timeout(attempt_timeout + _WATCHDOG_GRACE_S):
                        response = await litellm.acompletion(**kwargs)
            except asyncio.CancelledError:
                if epoch is not None:
                    self.breaker.in_flight -= 1
                raise
            except LLMUnresponsiveError as stop:
                # Given up on before this attempt's request: the earlier ones count.
                stop.attempts, stop.waited_s = attempt - 1, loop.time() - started
                stats.failures["LLMUnresponsiveError"] += 1
                raise
            except LLMConfigError:
                raise
            except Exception as exc:
                # Keep only type, status and Retry-After; the exception (and its
                # provider message) is dropped when this block ends.
                failure = classify(litellm, exc)
            else:
                self.breaker.answered()
                budget = params.get("max_tokens")
                reply = self._account(litellm, response, attempt, budget, stats)
                if attempt_started > started:
                    waited = attempt_started - started
                    stats.waited_s += waited
                    reply = dataclasses.replace(reply, waited_s=waited)
                return reply
            if epoch is not None:
                # Outside the except block: a stop error must not chain to the provider's.
                try:
                    self._unanswered(failure, epoch)
                except LLMUnresponsiveError as stop:
                    stop.attempts, stop.waited_s = attempt, loop.time() - started
                    stats.failures["LLMUnresponsiveError"] += 1
                    raise
            retry_in = failure.retry_after
            if retry_in is None:
                retry_in = backoff_delay(
                    attempt - 1, cfg.backoff_base_s, cfg.backoff_max_s, self._rng
                )
            out_of_budget = loop.time() + retry_in >= deadline
            max_retries = cfg.max_retries if retries is None else retries
            if failure.reason is None or attempt > max_retries or out_of_budget:
                error = self._give_up(failure, attempt, stats)
                error.attempts, error.waited_s = attempt, loop.time() - started
                stats.waited_s += error.waited_s
                raise error
            stats.retries[failure.reason] += 1
            await asyncio.sleep(retry_in)

    def _gate(self) -> SlotGate:
        import asyncio

        # A gate binds to one loop; run_batch starts a new loop per batch.
        loop = asyncio.get_running_loop()
        if self._gates is None or self._gates[0] is not loop:
            self._gates = (loop, SlotGate(self.breaker.concurrency))
        return self._gates[1]

    def _unanswered(self, failure: Failure, epoch: int) -> None:
        """Tell the breaker about a request that got no answer; it may lower or stop."""
        if failure.reason not in ("timeout", "connection"):
            self.breaker.answered()  # an HTTP error is an answer: the endpoint is alive
            return
        lowered = self.breaker.unanswered_request(epoch, failure.reason)
        if lowered is not None:
            self.stats.concurrency_lowered_to = lowered
            if self._gates is not None:
                self._gates[1].limit(lowered)

    def _give_up(self, failure: Failure, attempts: int, stats: LLMStats) -> LLMError:
        if failure.refused_at is not None:
            stats.failures[f"LLMUnreachableError:{failure.exc_type}"] += 1
            return LLMUnreachableError(shown_address(self.config.api_base) or failure.refused_at)
        if failure.client_side:
            stats.failures[f"LLMConfigError:{failure.exc_type}"] += 1
            return LLMConfigError(
                f"the provider's client refused to send the request ({failure.exc_type}), "
                "usually because no API key is set: export the provider's key variable "
                "(e.g. OPENAI_API_KEY) or name one with api_key_env"
            )
        error_cls = LLMTimeoutError if failure.reason == "timeout" else ProviderError
        stats.failures[f"{error_cls.__name__}:{failure.exc_type}"] += 1
        return error_cls(failure.exc_type, failure.status, attempts)

    def _account(
        self, litellm: Any, response: Any, attempts: int, budget: Any, stats: LLMStats
    ) -> Reply:
        try:
            choice = response.choices[0]
            text = choice.message.content
            finish = getattr(choice, "finish_reason", None)
        except (AttributeError, IndexError):
            text = finish = None
        raw_usage = getattr(response, "usage", None)
        usage = Usage(
            int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            int(getattr(raw_usage, "completion_tokens", 0) or 0),
        )
        cost = _cost_of(litellm, response)
        stats.record_usage(usage, cost)
        cut_at = None
        if finish == "length":
            # Stopped by its completion budget: what it wrote is a prefix, never an answer.
            cut_at = budget if isinstance(budget, int) else usage.completion_tokens
            stats.cut += 1
        return Reply(text if isinstance(text, str) else None, usage, cost, attempts, cut_at)


def _cost_of(litellm: Any, response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        # litellm already priced the response while handling it (None = no price
        # known); pricing it again costs a few ms of CPU per call.
        known = hidden["response_cost"]
        return float(known) if isinstance(known, int | float) else None
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:
        # litellm raises for models missing from its price table: cost unknown.
        return None


@functools.cache
def supports_response_schema(model: str) -> bool:
    """Does litellm say ``model`` takes a JSON-schema ``response_format``?"""
    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:
        # Unknown models raise in some litellm versions: use the prompt fallback.
        return False
