"""The one module that talks to litellm: calls, retries, structured output, cache.

litellm is imported lazily, on the first request that misses the cache, with its
price-table download, callbacks and debug output switched off. Everything the
provider says in an error is dropped: only the exception type and HTTP status
survive, and no exception we raise chains to the provider's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import (
    InvalidOutputError,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    MissingExtraError,
    ProviderError,
)
from pytest_ragproof.llm.cache import CachedResponse, ResponseCache, cache_key
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.output import OutputParseError, parse_structured
from pytest_ragproof.llm.retry import backoff_delay, parse_retry_after
from pytest_ragproof.llm.stats import LLMStats, Usage, add_cost

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Message = Mapping[str, Any]

#: Extra seconds our own watchdog allows beyond litellm's timeout before cancelling.
_WATCHDOG_GRACE_S = 1.0

#: Parameters a caller may not pass: they carry secrets or would undo our retry control.
_RESERVED_PARAMS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "headers",
        "extra_headers",
        "timeout",
        "num_retries",
        "max_retries",
        "messages",
        "model",
        "response_format",
        "stream",
    }
)

JSON_INSTRUCTION = (
    "Reply with only a JSON value that matches this JSON Schema, "
    "with no prose and no Markdown fences:\n{schema}"
)
REPAIR_INSTRUCTION = (
    "Your previous reply could not be used: {summary}. "
    "Reply again with only the corrected JSON value."
)

_litellm_module: Any = None


def load_litellm() -> Any:
    """Import litellm once, quietly and offline, or raise :class:`MissingExtraError`."""
    global _litellm_module
    if _litellm_module is not None:
        return _litellm_module
    # Without this litellm downloads its model price table at import time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm logs while importing, so its loggers are silenced before and after.
    _silence_litellm_loggers()
    try:
        import litellm
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "litellm":
            raise
        raise MissingExtraError(
            "llm", "litellm", "Calling an LLM (dataset generation, LLM judges)"
        ) from None
    # Provider error texts can echo prompts or keys: litellm must neither print
    # nor log them, and must not phone home or run callbacks we did not ask for.
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.set_verbose = False
    litellm.turn_off_message_logging = True
    litellm.callbacks = []
    litellm.success_callback = []
    litellm.failure_callback = []
    _silence_litellm_loggers()
    _litellm_module = litellm
    return litellm


def _silence_litellm_loggers() -> None:
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


@dataclass(frozen=True)
class CompletionResult:
    """One logical text completion. ``attempts`` counts HTTP requests (0 if cached)."""

    text: str | None
    usage: Usage
    cost: float | None
    cached: bool
    attempts: int


@dataclass(frozen=True)
class StructuredResult(Generic[T]):
    """A validated structured reply, with what it took to get it."""

    value: T
    usage: Usage
    cost: float | None
    cached: bool
    attempts: int
    repaired: bool = False


class LLMClient:
    """Calls one configured model with bounded concurrency, retries and a cache.

    One client per model and run: its :attr:`stats` total every call. Use the async
    methods from async code, or :meth:`run_batch` to run many calls from sync code.
    """

    def __init__(
        self,
        config: LLMConfig,
        cache: ResponseCache | None = None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.cache = cache if cache is not None else ResponseCache()
        self.stats = LLMStats()
        self._rng = rng or random.Random()
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, cache={self.cache!r})"

    # -- public API ---------------------------------------------------------
    async def complete(
        self, messages: Sequence[Message], *, prompt_version: str, **params: Any
    ) -> CompletionResult:
        """Plain text completion of ``messages``, cached under ``prompt_version``."""
        self.stats.calls += 1
        msgs, call_params = self._prepare(messages, params)
        key = cache_key(
            model=self.config.model,
            prompt_version=prompt_version,
            messages=msgs,
            params=call_params,
            schema=None,
        )
        hit = self._cached(key)
        if hit is not None:
            usage = Usage(hit.prompt_tokens, hit.completion_tokens)
            return CompletionResult(hit.text, usage, 0.0, cached=True, attempts=0)
        reply = await self._request(msgs, call_params)
        self.cache.put(key, CachedResponse(reply.text, *_usage_pair(reply.usage)))
        return CompletionResult(reply.text, reply.usage, reply.cost, False, reply.attempts)

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        prompt_version: str,
        **params: Any,
    ) -> StructuredResult[T]:
        """A reply validated as ``schema``, repaired once if needed.

        Raises :class:`InvalidOutputError` when the reply (and its one repair) does
        not validate, :class:`ProviderError`/:class:`LLMTimeoutError` when the
        provider fails beyond the retry budget.
        """
        self.stats.calls += 1
        msgs, call_params = self._prepare(messages, params)
        schema_json = schema.model_json_schema()
        key = cache_key(
            model=self.config.model,
            prompt_version=prompt_version,
            messages=msgs,
            params=call_params,
            schema=schema_json,
        )
        hit = self._cached(key)
        if hit is not None:
            value = self._validate_final(hit.text, schema)
            usage = Usage(hit.prompt_tokens, hit.completion_tokens)
            return StructuredResult(value, usage, 0.0, cached=True, attempts=0)

        litellm = load_litellm()
        send = list(msgs)
        request_params = dict(call_params)
        if _supports_response_schema(litellm, self.config.model):
            request_params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema_json},
            }
        else:
            send = _with_instruction(send, JSON_INSTRUCTION.format(schema=json.dumps(schema_json)))
        reply = await self._request(send, request_params)
        usage, cost, attempts, repaired = reply.usage, reply.cost, reply.attempts, False
        try:
            value = parse_structured(reply.text, schema)
            final_text = reply.text
        except OutputParseError as err:
            self.stats.repairs += 1
            repaired = True
            repair = [
                *send,
                {"role": "assistant", "content": reply.text or ""},
                {"role": "user", "content": REPAIR_INSTRUCTION.format(summary=err.summary)},
            ]
            second = await self._request(repair, request_params)
            usage, cost = usage + second.usage, add_cost(cost, second.cost)
            attempts += second.attempts
            final_text = second.text
            # The final outcome is cached even when invalid, so a re-run reproduces
            # the same discard without calling the model again.
            self.cache.put(key, CachedResponse(final_text, *_usage_pair(usage)))
            value = self._validate_final(final_text, schema)
            return StructuredResult(value, usage, cost, False, attempts, repaired)
        self.cache.put(key, CachedResponse(final_text, *_usage_pair(usage)))
        return StructuredResult(value, usage, cost, False, attempts, repaired)

    def run_batch(self, jobs: Iterable[Coroutine[Any, Any, R]]) -> list[R | LLMError]:
        """Run coroutines of this client's methods concurrently from sync code.

        Results come back in the order of ``jobs``, whatever order they finish in;
        an :class:`LLMError` takes the place of its job's result. Concurrency is
        bounded by ``config.concurrency``. Other exceptions propagate.
        """
        jobs = list(jobs)

        async def gather() -> list[R | LLMError]:
            results = await asyncio.gather(*jobs, return_exceptions=True)
            out: list[R | LLMError] = []
            for result in results:
                if isinstance(result, LLMError):
                    out.append(result)
                elif isinstance(result, BaseException):
                    raise result
                else:
                    out.append(result)
            return out

        return asyncio.run(gather())

    # -- internals ----------------------------------------------------------
    def _prepare(
        self, messages: Sequence[Message], params: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        reserved = _RESERVED_PARAMS.intersection(params)
        if reserved:
            raise LLMConfigError(
                f"parameters {sorted(reserved)} are set by the LLM layer or the environment, "
                "not per call"
            )
        msgs = [dict(m) for m in messages]
        if not msgs:
            raise LLMConfigError("no messages to send")
        cfg = self.config
        call_params: dict[str, Any] = {"temperature": cfg.temperature}
        if cfg.seed is not None:
            call_params["seed"] = cfg.seed
        if cfg.max_tokens is not None:
            call_params["max_tokens"] = cfg.max_tokens
        call_params.update(cfg.extra_params)
        call_params.update(params)
        return msgs, call_params

    def _cached(self, key: str) -> CachedResponse | None:
        hit = self.cache.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
        return hit

    def _validate_final(self, text: str | None, schema: type[T]) -> T:
        try:
            return parse_structured(text, schema)
        except OutputParseError as err:
            summary = err.summary
        self.stats.failures["InvalidOutputError"] += 1
        raise InvalidOutputError(
            f"model output did not match {schema.__name__} after one repair: {summary}"
        )

    def _gate(self) -> asyncio.Semaphore:
        # asyncio primitives bind to one loop; run_batch starts a new loop per batch.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    async def _request(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> _Reply:
        """One logical request with retries; returns the first success."""
        litellm = load_litellm()
        cfg = self.config
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
        while True:
            attempt += 1
            remaining = deadline - loop.time()
            attempt_timeout = max(0.001, min(cfg.timeout_s, remaining))
            kwargs["timeout"] = attempt_timeout
            self.stats.requests += 1
            failure: _Failure
            try:
                async with self._gate():
                    response = await asyncio.wait_for(
                        litellm.acompletion(**kwargs), attempt_timeout + _WATCHDOG_GRACE_S
                    )
                return self._account(litellm, response, attempt)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Keep only type, status and Retry-After; the exception (and its
                # provider message) is dropped when this block ends.
                failure = _classify(litellm, exc)
            retry_in = failure.retry_after
            if retry_in is None:
                retry_in = backoff_delay(
                    attempt - 1, cfg.backoff_base_s, cfg.backoff_max_s, self._rng
                )
            out_of_budget = loop.time() + retry_in >= deadline
            if failure.reason is None or attempt > cfg.max_retries or out_of_budget:
                raise self._give_up(failure, attempt)
            self.stats.retries[failure.reason] += 1
            await asyncio.sleep(retry_in)

    def _give_up(self, failure: _Failure, attempts: int) -> ProviderError:
        error_cls = LLMTimeoutError if failure.reason == "timeout" else ProviderError
        self.stats.failures[f"{error_cls.__name__}:{failure.exc_type}"] += 1
        return error_cls(failure.exc_type, failure.status, attempts)

    def _account(self, litellm: Any, response: Any, attempts: int) -> _Reply:
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError):
            text = None
        raw_usage = getattr(response, "usage", None)
        usage = Usage(
            int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            int(getattr(raw_usage, "completion_tokens", 0) or 0),
        )
        try:
            cost: float | None = float(litellm.completion_cost(completion_response=response))
        except Exception:
            # litellm raises for models missing from its price table: cost unknown.
            cost = None
        self.stats.record_usage(usage, cost)
        return _Reply(text if isinstance(text, str) else None, usage, cost, attempts)


@dataclass(frozen=True)
class _Reply:
    text: str | None
    usage: Usage
    cost: float | None
    attempts: int


@dataclass(frozen=True)
class _Failure:
    exc_type: str
    status: int | None
    reason: str | None  # one of retry.RETRY_REASONS, None = not retryable
    retry_after: float | None = None


def _classify(litellm: Any, exc: BaseException) -> _Failure:
    name = type(exc).__name__
    if isinstance(exc, TimeoutError | litellm.Timeout):
        return _Failure(name, None, "timeout")
    raw_status = getattr(exc, "status_code", None)
    status = raw_status if isinstance(raw_status, int) else None
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return _Failure(name, 429, "rate_limit", parse_retry_after(_headers(exc)))
    if isinstance(exc, litellm.APIConnectionError):
        return _Failure(name, None, "connection")
    if status is not None and status >= 500:
        return _Failure(name, status, "server_error", parse_retry_after(_headers(exc)))
    return _Failure(name, status, None)


def _headers(exc: BaseException) -> Mapping[str, Any] | None:
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers if isinstance(headers, Mapping) else None


def _supports_response_schema(litellm: Any, model: str) -> bool:
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:
        # Unknown models raise in some litellm versions: use the prompt fallback.
        return False


def _with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Add ``instruction`` to the first system message, or prepend one."""
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            message["content"] = f"{message['content']}\n\n{instruction}"
            return out
    return [{"role": "system", "content": instruction}, *out]


def _usage_pair(usage: Usage) -> tuple[int, int]:
    return usage.prompt_tokens, usage.completion_tokens
