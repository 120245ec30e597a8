"""Executing a plan: generation and verification calls, bounded and resumable.

Each planned request is one chain -- generate, then verify -- run as an asyncio
task; at most ``concurrency`` chains run at once (and the LLM client caps the
HTTP requests in flight at the same number). Outcomes are returned in plan
order whatever order the chains finish in. Every response is cached by the LLM
layer as soon as it arrives, so an interrupted run loses no finished call; the
calls pass ``replay_invalid=True``, so a reply still invalid after its repair is
cached too and a re-run reproduces its discard without calling the model.

An :class:`~pytest_ragproof.errors.LLMError` of a call becomes a discard reason
for the items it concerned; configuration errors and anything unexpected stop
the run (the remaining chains are cancelled).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ragproof.errors import InvalidOutputError, LLMConfigError, LLMError, ProviderError
from pytest_ragproof.generation.echo import echoes_prompt
from pytest_ragproof.generation.sampling import PlannedRequest
from pytest_ragproof.generation.types import DiscardReason, GeneratedItem
from pytest_ragproof.generation.verify import (
    QA_VERIFY_VERSION,
    SCOPE_VERIFY_VERSION,
    QAVerification,
    ScopeVerdict,
    ordered_verdicts,
    qa_messages,
    scope_messages,
)
from pytest_ragproof.llm.stats import Usage

if TYPE_CHECKING:
    from pytest_ragproof.corpus.chunking import Chunk
    from pytest_ragproof.corpus.retrieval import BM25Index
    from pytest_ragproof.generation.plan import GenerationPlan
    from pytest_ragproof.llm import LLMClient


@dataclass(frozen=True)
class ItemOutcome:
    """One requested item: kept (``item`` set, ``discard`` None) or discarded with a reason.

    ``usage`` is this item's share of the calls that concerned it; ``checked``
    the chunk ids an unanswerable question was verified against.
    """

    item: GeneratedItem | None
    discard: DiscardReason | None
    confidence: float | None = None
    usage: Usage = field(default_factory=Usage)
    checked: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestOutcome:
    """The outcome of every item of one planned request, in item order."""

    request: PlannedRequest
    items: tuple[ItemOutcome, ...]
    prompt_version: str
    generator_name: str


Progress = Callable[[RequestOutcome], None]


def split_usage(usage: Usage, n: int) -> list[Usage]:
    """``usage`` shared over ``n`` items in whole tokens, the remainder to the first ones."""
    if n <= 0:
        return []
    p, p_extra = divmod(usage.prompt_tokens, n)
    c, c_extra = divmod(usage.completion_tokens, n)
    return [Usage(p + (i < p_extra), c + (i < c_extra)) for i in range(n)]


def _failure_reason(exc: LLMError) -> DiscardReason:
    if isinstance(exc, InvalidOutputError):
        return "invalid_output"
    if isinstance(exc, ProviderError):
        return "provider_error"
    raise exc  # configuration errors (and unknown kinds) stop the run


class _Executor:
    def __init__(self, plan: GenerationPlan, client: LLMClient) -> None:
        self.plan = plan
        self.client = client
        self._index: BM25Index[Chunk] | None = None

    def index(self) -> BM25Index[Chunk]:
        if self._index is None:
            from pytest_ragproof.corpus.retrieval import BM25Index

            self._index = BM25Index(self.plan.chunks)
        return self._index

    async def run(self, request: PlannedRequest) -> RequestOutcome:
        generator = self.plan.generator_for(request)
        outcome_items = await self._chain(request)
        return RequestOutcome(request, outcome_items, generator.prompt_version, generator.name)

    async def _chain(self, request: PlannedRequest) -> tuple[ItemOutcome, ...]:
        generator = self.plan.generator_for(request)
        item_request = self.plan.item_request(request)
        n = request.n_items
        try:
            result = await self.client.structured(
                generator.build_messages(item_request),
                generator.schema,
                prompt_version=generator.prompt_version,
                replay_invalid=True,
                items=n,
            )
        except LLMConfigError:
            raise
        except LLMError as exc:
            return _all(n, _failure_reason(exc))
        try:
            items = list(generator.parse_items(result.value, item_request))
        except ValueError:
            return _all(n, "invalid_output")
        if len(items) != n:
            return _all(n, "count_mismatch")
        shares = split_usage(result.usage, n)
        unusable = [_unusable(item, request) for item in items]
        usable = [i for i, reason in enumerate(unusable) if reason is None]
        outcomes: list[ItemOutcome] = [
            ItemOutcome(None, unusable[i] or "invalid_output", usage=shares[i]) for i in range(n)
        ]
        if request.gen_kind == "qa":
            checked = await self._verify_qa(request, [items[i] for i in usable])
        else:
            checked = await self._verify_scope(request, [items[i] for i in usable])
        for i, verdict in zip(usable, checked, strict=True):
            outcomes[i] = ItemOutcome(
                items[i] if verdict.discard is None else None,
                verdict.discard,
                verdict.confidence,
                shares[i] + verdict.usage,
                verdict.checked,
            )
        return tuple(outcomes)

    async def _verify_qa(
        self, request: PlannedRequest, items: list[GeneratedItem]
    ) -> list[ItemOutcome]:
        n = len(items)
        if not n:
            return []
        item_request = self.plan.item_request(request)
        try:
            result = await self.client.structured(
                qa_messages(item_request, items),
                QAVerification,
                prompt_version=QA_VERIFY_VERSION,
                replay_invalid=True,
                items=n,
            )
        except LLMConfigError:
            raise
        except LLMError as exc:
            return list(_all(n, _failure_reason(exc)))
        verdicts = ordered_verdicts(result.value, n)
        if verdicts is None:
            return list(_all(n, "count_mismatch", split_usage(result.usage, n)))
        out: list[ItemOutcome] = []
        for verdict, share in zip(verdicts, split_usage(result.usage, n), strict=True):
            reason: DiscardReason | None = None
            if not verdict.answerable:
                reason = "not_answerable"
            elif not verdict.answer_correct:
                reason = "wrong_answer"
            out.append(ItemOutcome(None, reason, verdict.confidence, share))
        return out

    async def _verify_scope(
        self, request: PlannedRequest, items: list[GeneratedItem]
    ) -> list[ItemOutcome]:
        import asyncio

        return list(await asyncio.gather(*(self._verify_one(request, item) for item in items)))

    async def _verify_one(self, request: PlannedRequest, item: GeneratedItem) -> ItemOutcome:
        index = self.index()
        hits = index.search(item.question, self.plan.settings.top_k)
        checked = tuple(h.chunk_id for h in hits)
        contexts = [index.get(h.chunk_id).text for h in hits]
        try:
            result = await self.client.structured(
                scope_messages(self.plan.item_request(request), item, contexts),
                ScopeVerdict,
                prompt_version=SCOPE_VERIFY_VERSION,
                replay_invalid=True,
            )
        except LLMConfigError:
            raise
        except LLMError as exc:
            return ItemOutcome(None, _failure_reason(exc), checked=checked)
        verdict = result.value
        reason: DiscardReason | None = "answerable" if verdict.answerable else None
        return ItemOutcome(None, reason, verdict.confidence, result.usage, checked)


def _unusable(item: GeneratedItem, request: PlannedRequest) -> DiscardReason | None:
    """Why a generator's item cannot become a case; None when it can be verified."""
    if not item.question.strip():
        return "invalid_output"
    if request.gen_kind == "qa" and not (item.answer and item.answer.strip()):
        return "invalid_output"
    if echoes_prompt(item):
        return "prompt_text"
    return None


def _all(
    n: int, reason: DiscardReason, shares: list[Usage] | None = None
) -> tuple[ItemOutcome, ...]:
    usage = shares or [Usage()] * n
    return tuple(ItemOutcome(None, reason, usage=usage[i]) for i in range(n))


def execute(
    plan: GenerationPlan,
    client: LLMClient,
    *,
    requests: Sequence[PlannedRequest] | None = None,
    on_outcome: Progress | None = None,
) -> list[RequestOutcome]:
    """Run ``requests`` (default: every request of ``plan``); outcomes in their order."""
    import asyncio

    executor = _Executor(plan, client)

    async def main() -> list[RequestOutcome]:
        gate = asyncio.Semaphore(client.config.concurrency)

        async def one(request: PlannedRequest) -> RequestOutcome:
            async with gate:
                outcome = await executor.run(request)
            if on_outcome is not None:
                on_outcome(outcome)
            return outcome

        todo = plan.requests if requests is None else requests
        tasks = [asyncio.ensure_future(one(r)) for r in todo]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            # Stop the other chains now rather than letting them run to the end.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    return asyncio.run(main())
