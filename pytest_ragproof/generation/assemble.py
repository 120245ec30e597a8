"""From request outcomes to cases: order, de-duplication, injection payloads, records.

Output order is fixed by the plan, never by completion: all qa cases, then
unanswerable, then injection; within a kind, round by round (top-up rounds,
see rounds.py), requests in plan order and items in reply order. Ids are
``gen-<seed>-<kind>-<n>`` with ``n`` counting written cases of that kind from
1. Rounds are assembled one after the other (each in kind order), so a later
round never changes an earlier round's cases: near-duplicates are checked
against every case kept before, in that order. Every case is normalized and validated exactly as
``load_dataset`` would; one that fails is discarded as ``invalid_output``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.dataset.normalize import RecordError, normalize_record
from pytest_ragproof.generation.dedup import NearDuplicateFilter
from pytest_ragproof.generation.injection import LIBRARY_VERSION, canary_for, style_for
from pytest_ragproof.generation.plan import GenerationPlan
from pytest_ragproof.generation.runner import ItemOutcome, RequestOutcome
from pytest_ragproof.generation.sampling import CaseKind, PlannedRequest
from pytest_ragproof.generation.types import INJECTION_BASE_TYPE, DiscardReason
from pytest_ragproof.textnorm import find_disallowed_control

#: Version of this orchestration (sampling, verification, assembly), in provenance.
GENERATOR_VERSION = "ragproof.generate/1"
KIND_ORDER: tuple[CaseKind, ...] = ("qa", "unanswerable", "injection")


@dataclass
class KindTally:
    """Requested, written and discarded items of one kind and question type."""

    requested: int = 0
    written: int = 0
    discarded: Counter[str] = field(default_factory=Counter)

    @property
    def shortfall(self) -> int:
        return max(0, self.requested - self.written)


@dataclass
class Assembly:
    """The cases of a run and the tally behind them, keyed by (kind, question type)."""

    cases: list[Case]
    tally: dict[tuple[str, str], KindTally]

    @property
    def shortfall(self) -> int:
        return sum(t.shortfall for t in self.tally.values())


def assemble(
    plan: GenerationPlan, rounds: Sequence[Sequence[RequestOutcome]], model: str
) -> Assembly:
    """Cases in output order plus the per kind/type tally, from the outcomes of each
    round (module docstring)."""
    tally: dict[tuple[str, str], KindTally] = {}
    for need in plan.needs:
        if not need.n:
            continue  # kinds and types not asked for stay out of the summary
        tally.setdefault((need.kind, need.question_type), KindTally()).requested += need.n
    seen = NearDuplicateFilter(plan.settings.dedup_threshold)
    canaries: set[str] = set()
    by_kind: dict[CaseKind, list[Case]] = {kind: [] for kind in KIND_ORDER}
    for outcomes, kind in ((o, k) for o in rounds for k in KIND_ORDER):
        kept = by_kind[kind]
        for outcome in outcomes:
            request = outcome.request
            for index, item_outcome in enumerate(outcome.items):
                if request.kind_of_item(index) != kind:
                    continue
                question_type = (
                    INJECTION_BASE_TYPE if kind == "injection" else request.question_type
                )
                entry = tally.setdefault((kind, question_type), KindTally())
                reason: DiscardReason | None = item_outcome.discard
                case: Case | None = None
                if reason is None:
                    case = _case(plan, outcome, item_outcome, kind, len(kept) + 1, model, canaries)
                    if case is None:
                        reason = "invalid_output"
                    elif not seen.admit(case.question, _user_turns(case)):
                        reason = "duplicate"
                if reason is not None or case is None:
                    entry.discarded[reason or "invalid_output"] += 1
                    continue
                entry.written += 1
                kept.append(case)
                if case.canary is not None:
                    canaries.add(case.canary)
    return Assembly([case for kind in KIND_ORDER for case in by_kind[kind]], tally)


def _user_turns(case: Case) -> list[str]:
    return [m.content for m in case.conversation_history if m.role == "user"]


def _case(
    plan: GenerationPlan,
    outcome: RequestOutcome,
    item_outcome: ItemOutcome,
    kind: CaseKind,
    n: int,
    model: str,
    canaries: set[str],
) -> Case | None:
    item = item_outcome.item
    if item is None:
        return None
    request = outcome.request
    chunk = request.chunk
    seed = plan.settings.seed
    metadata: dict[str, Any] = dict(item.metadata)
    metadata["generator"] = outcome.generator_name
    if chunk.topic:
        metadata["topic"] = chunk.topic
    if request.distractor is not None:
        metadata["distractor_chunk_id"] = request.distractor.id
    record: dict[str, Any] = {
        "id": f"gen-{seed}-{kind}-{n}",
        "kind": kind,
        "question": item.question,
        "question_type": INJECTION_BASE_TYPE if kind == "injection" else request.question_type,
        "conversation_history": [
            {"role": role, "content": content} for role, content in item.conversation_history
        ],
        "synthetic": True,
        "review_status": "pending",
        "provenance": {
            "document_id": chunk.document_id,
            "chunk_id": chunk.id,
            "span": [chunk.start, chunk.end],
            "model": model,
            "prompt_version": _prompt_version(outcome, request),
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "usage": {
                "prompt_tokens": item_outcome.usage.prompt_tokens,
                "completion_tokens": item_outcome.usage.completion_tokens,
            },
            "confidence": item_outcome.confidence,
        },
    }
    if kind == "unanswerable":
        metadata["checked_chunk_ids"] = list(item_outcome.checked)
    else:
        record["expected_answer"] = item.answer
        record["expected_source_ids"] = [chunk.document_id]
        record["reference_contexts"] = [_context(chunk.text)]
    if kind == "injection":
        style = style_for(n, seed)
        canary = canary_for(n, seed, canaries)
        record["adversarial_payload"] = style.payload(canary)
        record["canary"] = canary
        metadata["attack_style"] = style.name
        metadata["injection_library"] = LIBRARY_VERSION
    record["metadata"] = metadata
    try:
        return Case.model_validate(normalize_record(record))
    except (RecordError, ValidationError):
        return None


def _prompt_version(outcome: RequestOutcome, request: PlannedRequest) -> str:
    from pytest_ragproof.generation.verify import QA_VERIFY_VERSION, SCOPE_VERIFY_VERSION

    verify = QA_VERIFY_VERSION if request.gen_kind == "qa" else SCOPE_VERIFY_VERSION
    return f"{outcome.prompt_version}+{verify}"


def _context(text: str) -> str:
    # Corpus text may hold control characters the dataset rules refuse (form feeds
    # from PDFs); the reference copy replaces them with spaces rather than losing the case.
    if find_disallowed_control(text) is None:
        return text
    return "".join(" " if find_disallowed_control(ch) is not None else ch for ch in text)
