"""The LLM client: one call path that reads top to bottom.

Every call goes: build the request (:mod:`~pytest_ragproof.llm.request`) -> look it
up in the cache (:mod:`~pytest_ragproof.llm.cache`) -> on a miss, send it with
retries (:mod:`~pytest_ragproof.llm.provider`, the only module importing litellm)
-> parse and validate the reply, repairing once (:mod:`~pytest_ragproof.llm.output`)
-> store it in the cache. asyncio is imported only when something must actually be
awaited, litellm only on a cache miss.

Only replies that validated (after the repair) are cached, and never one the provider
cut at its completion budget (``finish_reason: length``): an invalid reply is
asked again on the next run, and an entry that no longer validates is a miss.
Generation passes ``replay_invalid=True``: its re-runs must reproduce a discard
without a call, so there the final invalid reply is cached and served again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import InvalidOutputError, LLMConfigError, LLMError
from pytest_ragproof.llm.cache import CachedResponse, ResponseCache
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.loader import load_litellm
from pytest_ragproof.llm.output import OutputParseError, parse_structured
from pytest_ragproof.llm.provider import Provider
from pytest_ragproof.llm.request import (
    CompletionResult,
    Message,
    Reply,
    Request,
    StructuredResult,
    build_request,
    repair_messages,
    structured_call,
)
from pytest_ragproof.llm.stats import LLMStats, Usage

__all__ = ["LLMClient", "load_litellm"]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
E = TypeVar("E", bound=LLMError)


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
        self.provider = Provider(config, self.stats, rng or random.Random())
        #: Called before every call that misses the cache (budgets, dry runs); it may
        #: raise to refuse the call. Cache hits never consult it: they cost nothing.
        self.admit: Callable[[], None] | None = None

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, cache={self.cache!r})"

    # -- the call path ------------------------------------------------------
    async def complete(
        self, messages: Sequence[Message], *, prompt_version: str, **params: Any
    ) -> CompletionResult:
        """Plain text completion of ``messages``, cached under ``prompt_version``."""
        self.stats.calls += 1
        request = build_request(self.config, messages, prompt_version, params)
        hit = self._cached(request)
        if hit is not None:
            self.stats.record_hit(hit.priced)
            return CompletionResult(hit.text, _usage(hit), _cost(hit), cached=True, attempts=0)
        self._admit()
        reply = await self.provider.send(request.messages, request.params)
        self._store(request, reply)
        return CompletionResult(reply.text, reply.usage, reply.cost, False, reply.attempts)

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        prompt_version: str,
        replay_invalid: bool = False,
        items: int = 1,
        **params: Any,
    ) -> StructuredResult[T]:
        """A reply validated as ``schema``, repaired once if needed.

        Raises :class:`InvalidOutputError` when the reply (and its one repair) does
        not validate, :class:`ProviderError`/:class:`LLMTimeoutError` when the
        provider fails beyond the retry budget. ``replay_invalid`` caches that
        invalid outcome and serves it again (see the module docstring). ``items``, the
        number of items the reply should hold, sizes its completion budget.
        """
        self.stats.calls += 1
        request = build_request(self.config, messages, prompt_version, params, schema, items=items)
        hit = self._structured_hit(request, schema, replay_invalid)
        if hit is not None:
            return hit
        return await self._structured_fetch(request, schema, replay_invalid)

    async def _structured_fetch(
        self, request: Request, schema: type[T], replay_invalid: bool = False
    ) -> StructuredResult[T]:
        self._admit()
        load_litellm()  # fail with the install hint before building the request
        send, params = structured_call(request, await self.provider.structured_mode())
        reply = await self.provider.send(send, params)
        parsed = _parse_reply(reply, schema)
        repaired = isinstance(parsed, OutputParseError)
        if isinstance(parsed, OutputParseError):
            self.stats.repairs += 1
            # A cut reply is not sent back: the model would continue it, not shorten it.
            rejected = "(reply cut off)" if reply.cut_at is not None else reply.text
            repair = repair_messages(send, rejected, parsed.summary)
            try:
                later = await self.provider.send(repair, params)
            except LLMConfigError:
                raise
            except LLMError as exc:  # the first reply was received (and billed) all the same
                raise _charged(exc, reply) from None
            reply = reply.then(later)
            parsed = _parse_reply(reply, schema)
        if isinstance(parsed, OutputParseError):
            if replay_invalid and reply.cut_at is None:
                self._store(request, reply)
            raise self._invalid(schema, parsed, reply)
        self._store(request, reply)
        return StructuredResult(
            parsed, reply.usage, reply.cost, False, reply.attempts, repaired, reply.waited_s
        )

    # -- batches from sync code ---------------------------------------------
    def structured_batch(
        self,
        batch: Iterable[Sequence[Message]],
        schema: type[T],
        *,
        prompt_version: str,
        replay_invalid: bool = False,
        **params: Any,
    ) -> list[StructuredResult[T] | LLMError]:
        """:meth:`structured` for many message lists at once, from sync code.

        Cache hits are answered first without an event loop; the misses then run
        concurrently (at most ``config.concurrency`` in flight). Results keep the
        order of ``batch``; an :class:`LLMError` takes the place of a failed item.
        """
        results: list[StructuredResult[T] | LLMError | None] = []
        misses: list[tuple[int, Request]] = []
        for index, messages in enumerate(batch):
            self.stats.calls += 1
            request = build_request(self.config, messages, prompt_version, params, schema)
            try:
                hit = self._structured_hit(request, schema, replay_invalid)
            except InvalidOutputError as exc:
                results.append(exc)
                continue
            results.append(hit)
            if hit is None:
                misses.append((index, request))
        if misses:
            fetched = self.run_batch(
                self._structured_fetch(req, schema, replay_invalid) for _, req in misses
            )
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

    # -- steps of the call path ---------------------------------------------
    def _structured_hit(
        self, request: Request, schema: type[T], replay_invalid: bool
    ) -> StructuredResult[T] | None:
        hit = self._cached(request)
        if hit is None:
            return None
        parsed = _parse(hit.text, schema)
        if isinstance(parsed, OutputParseError) and not replay_invalid:
            # Written before invalid replies stopped being cached (or by a generation
            # run): the model is asked again.
            return None
        self.stats.record_hit(hit.priced)
        if isinstance(parsed, OutputParseError):
            raise self._invalid(schema, parsed)
        return StructuredResult(parsed, _usage(hit), _cost(hit), cached=True, attempts=0)

    def replayed(self, calls: int, *, priced: bool) -> None:
        """Count ``calls`` logical calls answered from the cache by a caller's own entry.

        A caller that caches a result derived from many calls (the judges' whole
        judgement of a case) reports them here, so the totals say what a run that
        replayed each call would say.
        """
        self.stats.calls += calls
        for _ in range(calls):
            self.stats.record_hit(priced)

    def _admit(self) -> None:
        if self.admit is not None:
            self.admit()

    def _cached(self, request: Request) -> CachedResponse | None:
        """The cached reply to ``request``; without a cache its key is not even made."""
        return self.cache.get(request.key) if self.cache.enabled else None

    def _store(self, request: Request, reply: Reply) -> None:
        if not self.cache.enabled or reply.cut_at is not None:
            return  # the key is not made either; a reply cut at its budget is never kept
        usage = reply.usage
        priced = reply.cost is not None
        entry = CachedResponse(reply.text, usage.prompt_tokens, usage.completion_tokens, priced)
        self.cache.put(request.key, entry)

    def _invalid(
        self, schema: type[BaseModel], err: OutputParseError, reply: Reply | None = None
    ) -> InvalidOutputError:
        cut_at = None if reply is None else reply.cut_at
        self.stats.failures[
            "InvalidOutputError" if cut_at is None else "InvalidOutputError:cut"
        ] += 1
        error = InvalidOutputError(
            f"model output did not match {schema.__name__} after one repair: {err.summary}",
            cut_at=cut_at,
        )
        return error if reply is None else _charged(error, reply)


def _charged(error: E, reply: Reply) -> E:
    """``error`` of a call that received ``reply``: its requests, time, tokens and cost."""
    error.attempts += reply.attempts
    error.waited_s += reply.waited_s
    error.prompt_tokens += reply.usage.prompt_tokens
    error.completion_tokens += reply.usage.completion_tokens
    error.cost = None if error.cost is None or reply.cost is None else error.cost + reply.cost
    return error


def _parse_reply(reply: Reply, schema: type[T]) -> T | OutputParseError:
    """The reply as ``schema``; a reply cut at its completion budget is never used.

    Even when the cut happens to leave valid JSON (a list closed early, padding cut),
    it is not what the model meant to say: the repair asks for a shorter reply.
    """
    if reply.cut_at is not None:
        return OutputParseError(
            f"the reply was cut at {reply.cut_at} tokens (finish_reason: length) before it "
            "ended; keep it shorter: only the JSON value, with short strings"
        )
    return _parse(reply.text, schema)


def _parse(text: str | None, schema: type[T]) -> T | OutputParseError:
    try:
        return parse_structured(text, schema)
    except OutputParseError as err:
        return err


def _usage(hit: CachedResponse) -> Usage:
    return Usage(hit.prompt_tokens, hit.completion_tokens)


def _cost(hit: CachedResponse) -> float | None:
    """A cached answer costs nothing today, if its price was known when it was made."""
    return 0.0 if hit.priced else None
