"""The one module that talks to litellm: calls, retries, structured output, cache.

litellm is imported lazily, on the first request that misses the cache, with its
price-table download, callbacks and debug output switched off; asyncio only when
something must actually be awaited. Everything the provider says in an error is
dropped: only the exception type and HTTP status survive, and no exception we
raise chains to the provider's.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

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
from pytest_ragproof.llm.request import (
    CompletionResult,
    Message,
    Reply,
    StructuredResult,
    prepare,
    repair_messages,
    response_format,
    with_json_instruction,
)
from pytest_ragproof.llm.retry import Failure, backoff_delay, retry_after_of
from pytest_ragproof.llm.stats import LLMStats, Usage, add_cost

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

#: Extra seconds our own watchdog allows beyond litellm's timeout before cancelling.
_WATCHDOG_GRACE_S = 1.0

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
        import warnings

        # litellm (at import and on its first calls, which import provider modules)
        # warns about its own pydantic models: not the user's concern, and pytest would
        # pin the warnings on whichever case was running.
        warnings.filterwarnings(
            "ignore", message=r"Items? .* on TypedDict class .* `ReadOnly` qualifier"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
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
    import logging

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


@dataclass(frozen=True)
class _Prepared:
    key: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    schema_json: dict[str, Any] | None


class LLMClient:
    """Calls one configured model with bounded concurrency, retries and a cache.

    One client per model and run: its :attr:`stats` total every call. Use the async
    methods from async code, or :meth:`structured_batch` / :meth:`run_batch` from
    sync code.
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
        #: Called before every call that misses the cache (budgets, dry runs); it may
        #: raise to refuse the call. Cache hits never consult it: they cost nothing.
        self.admit: Callable[[], None] | None = None

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, cache={self.cache!r})"

    # -- public API ---------------------------------------------------------
    async def complete(
        self, messages: Sequence[Message], *, prompt_version: str, **params: Any
    ) -> CompletionResult:
        """Plain text completion of ``messages``, cached under ``prompt_version``."""
        self.stats.calls += 1
        prep = self._prepare(messages, None, prompt_version, params)
        hit = self._cached(prep.key)
        if hit is not None:
            usage = Usage(hit.prompt_tokens, hit.completion_tokens)
            return CompletionResult(hit.text, usage, 0.0, cached=True, attempts=0)
        if self.admit is not None:
            self.admit()
        reply = await self._request(prep.messages, prep.params)
        self.cache.put(prep.key, _entry(reply.text, reply.usage))
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
        prep = self._prepare(messages, schema, prompt_version, params)
        hit = self._structured_hit(prep, schema)
        if hit is not None:
            return hit
        return await self._structured_fetch(prep, schema)

    def structured_batch(
        self,
        batch: Iterable[Sequence[Message]],
        schema: type[T],
        *,
        prompt_version: str,
        **params: Any,
    ) -> list[StructuredResult[T] | LLMError]:
        """:meth:`structured` for many message lists at once, from sync code.

        Cache hits are answered first without an event loop; the misses then run
        concurrently (at most ``config.concurrency`` in flight). Results keep the
        order of ``batch``; an :class:`LLMError` takes the place of a failed item.
        """
        results: list[StructuredResult[T] | LLMError | None] = []
        misses: list[tuple[int, _Prepared]] = []
        for index, messages in enumerate(batch):
            self.stats.calls += 1
            prep = self._prepare(messages, schema, prompt_version, params)
            try:
                hit = self._structured_hit(prep, schema)
            except InvalidOutputError as exc:
                results.append(exc)
                continue
            results.append(hit)
            if hit is None:
                misses.append((index, prep))
        if misses:
            fetched = self.run_batch(self._structured_fetch(prep, schema) for _, prep in misses)
            for (index, _), result in zip(misses, fetched, strict=True):
                results[index] = result
        return [r for r in results if r is not None]

    def run_batch(self, jobs: Iterable[Coroutine[Any, Any, R]]) -> list[R | LLMError]:
        """Run coroutines of this client's methods concurrently from sync code.

        Results come back in the order of ``jobs``, whatever order they finish in;
        an :class:`LLMError` takes the place of its job's result. Concurrency is
        bounded by ``config.concurrency``. Configuration errors (``LLMConfigError``,
        ``MissingExtraError``) and unexpected exceptions propagate.
        """
        import asyncio

        jobs = list(jobs)

        async def gather() -> list[R | LLMError]:
            results = await asyncio.gather(*jobs, return_exceptions=True)
            out: list[R | LLMError] = []
            for result in results:
                if isinstance(result, LLMError) and not isinstance(result, LLMConfigError):
                    out.append(result)
                elif isinstance(result, BaseException):
                    raise result
                else:
                    out.append(result)
            return out

        return asyncio.run(gather())

    # -- internals ----------------------------------------------------------
    def _prepare(
        self,
        messages: Sequence[Message],
        schema: type[BaseModel] | None,
        prompt_version: str,
        params: dict[str, Any],
    ) -> _Prepared:
        msgs, call_params = prepare(self.config, messages, params)
        schema_json = _schema_of(schema) if schema is not None else None
        key = cache_key(
            model=self.config.model,
            prompt_version=prompt_version,
            messages=msgs,
            params=call_params,
            schema=schema_json,
        )
        return _Prepared(key, msgs, call_params, schema_json)

    def _cached(self, key: str) -> CachedResponse | None:
        hit = self.cache.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
        return hit

    def _structured_hit(self, prep: _Prepared, schema: type[T]) -> StructuredResult[T] | None:
        hit = self._cached(prep.key)
        if hit is None:
            return None
        value = self._validate_final(hit.text, schema)
        usage = Usage(hit.prompt_tokens, hit.completion_tokens)
        return StructuredResult(value, usage, 0.0, cached=True, attempts=0)

    async def _structured_fetch(self, prep: _Prepared, schema: type[T]) -> StructuredResult[T]:
        assert prep.schema_json is not None
        if self.admit is not None:
            self.admit()
        load_litellm()  # fail with the install hint before building the request
        send = prep.messages
        params = dict(prep.params)
        mode = self.config.response_format
        if mode == "auto":
            mode = "json_schema" if _supports_response_schema(self.config.model) else "prompt"
        if mode == "json_schema":
            params["response_format"] = response_format(schema.__name__, prep.schema_json)
        else:
            # json_object still needs the schema in the prompt (and the word JSON).
            send = with_json_instruction(send, prep.schema_json)
            if mode == "json_object":
                params["response_format"] = {"type": "json_object"}
        reply = await self._request(send, params)
        usage, cost, attempts = reply.usage, reply.cost, reply.attempts
        final_text = reply.text
        try:
            value = parse_structured(reply.text, schema)
        except OutputParseError as err:
            self.stats.repairs += 1
            second = await self._request(repair_messages(send, reply.text, err.summary), params)
            usage, cost = usage + second.usage, add_cost(cost, second.cost)
            attempts += second.attempts
            final_text = second.text
            # The final outcome is cached even when invalid, so a re-run reproduces
            # the same discard without calling the model again.
            self.cache.put(prep.key, _entry(final_text, usage))
            value = self._validate_final(final_text, schema)
            return StructuredResult(value, usage, cost, False, attempts, repaired=True)
        self.cache.put(prep.key, _entry(final_text, usage))
        return StructuredResult(value, usage, cost, False, attempts)

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
        import asyncio

        # asyncio primitives bind to one loop; run_batch starts a new loop per batch.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    async def _request(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Reply:
        """One logical request with retries; returns the first success."""
        import asyncio

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
            failure: Failure
            try:
                async with self._gate():
                    response = await asyncio.wait_for(
                        litellm.acompletion(**kwargs), attempt_timeout + _WATCHDOG_GRACE_S
                    )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Keep only type, status and Retry-After; the exception (and its
                # provider message) is dropped when this block ends.
                failure = _classify(litellm, exc)
            else:
                return self._account(litellm, response, attempt)
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

    def _give_up(self, failure: Failure, attempts: int) -> LLMError:
        if failure.client_side:
            self.stats.failures[f"LLMConfigError:{failure.exc_type}"] += 1
            return LLMConfigError(
                f"the provider's client refused to send the request ({failure.exc_type}), "
                "usually because no API key is set: export the provider's key variable "
                "(e.g. OPENAI_API_KEY) or name one with api_key_env"
            )
        error_cls = LLMTimeoutError if failure.reason == "timeout" else ProviderError
        self.stats.failures[f"{error_cls.__name__}:{failure.exc_type}"] += 1
        return error_cls(failure.exc_type, failure.status, attempts)

    def _account(self, litellm: Any, response: Any, attempts: int) -> Reply:
        try:
            text = response.choices[0].message.content
        except (AttributeError, IndexError):
            text = None
        raw_usage = getattr(response, "usage", None)
        usage = Usage(
            int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            int(getattr(raw_usage, "completion_tokens", 0) or 0),
        )
        cost = _cost_of(litellm, response)
        self.stats.record_usage(usage, cost)
        return Reply(text if isinstance(text, str) else None, usage, cost, attempts)


def _classify(litellm: Any, exc: BaseException) -> Failure:
    name = type(exc).__name__
    if isinstance(exc, TimeoutError | litellm.Timeout):
        return Failure(name, None, "timeout")
    raw_status = getattr(exc, "status_code", None)
    status = raw_status if isinstance(raw_status, int) else None
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return Failure(name, 429, "rate_limit", retry_after_of(exc))
    if isinstance(exc, litellm.APIConnectionError):
        return Failure(name, None, "connection")
    if _refused_by_client(exc):
        # litellm reports e.g. missing credentials as a synthesized HTTP 500; retrying
        # cannot help and "server error" would send the user looking in the wrong place.
        return Failure(name, None, None, client_side=True)
    if status is not None and status >= 500:
        return Failure(name, status, "server_error", retry_after_of(exc))
    return Failure(name, status, None)


def _refused_by_client(exc: BaseException) -> bool:
    """Did the provider's SDK refuse the call itself, before any HTTP request?

    The OpenAI SDK raises its bare ``OpenAIError`` for that (no key, bad client
    options); everything that reached a server is an ``APIError`` subclass.
    """
    try:
        import openai
    except ImportError:  # pragma: no cover - litellm depends on it
        return False
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current) is openai.OpenAIError:
            return True
        current = current.__cause__ or current.__context__
    return False


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
def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # Generating a JSON schema costs about a millisecond, more than a cache hit.
    return schema.model_json_schema()


@functools.cache
def _supports_response_schema(model: str) -> bool:
    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:
        # Unknown models raise in some litellm versions: use the prompt fallback.
        return False


def _entry(text: str | None, usage: Usage) -> CachedResponse:
    return CachedResponse(text, usage.prompt_tokens, usage.completion_tokens)
