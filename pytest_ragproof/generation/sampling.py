"""Which chunks are asked for which questions: the seeded, deterministic plan.

1. Chunk order. A ``random.Random`` seeded with ``"ragproof.sample/<seed>"``
   shuffles the document ids, then the chunks of each document (documents in
   the shuffled order). Chunks are then taken round-robin: the first chunk of
   every document, then the second of every document that has one, and so on,
   so consecutive requests come from different documents.
2. Counts. ``--qa N`` is divided equally over the selected qa types, the
   remainder going to the first types (RAGET's rule); ``--unanswerable N`` the
   same over the unanswerable types; injection bases are qa ``simple`` items.
3. Requests. Each type's items are cut into pieces of ``items_per_request``
   (the last piece smaller) and each piece gets the next chunk of the order
   that this generator (kind and type) has not used yet. Once a generator has
   used every chunk, pieces join that generator's request on the next chunk in
   the order, so no two requests ever send the same prompt. A request may thus
   hold items for qa and injection cases at once (``allocation``).
4. Top-up rounds (:func:`plan_top_up`). The short counts of a round are cut
   into pieces the same way; each piece gets the first chunk of the order that
   no request of any round has sent yet, else the first one its generator has
   not been sent yet. There is no wrap-around: a piece with no such chunk is
   left unplanned (that generator has run out of corpus).
5. Distractors (``distracting`` questions): a chunk drawn with
   ``random.Random("ragproof.distractor/<seed>/<chunk id>")`` from the other
   documents' chunks, else from the document's other chunks, else none.

Seeding ``random.Random`` with a string is stable across Python versions and
platforms (it hashes the string with SHA-512), unlike ``hash()``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_ragproof.corpus.chunking import Chunk
from pytest_ragproof.generation.types import INJECTION_BASE_TYPE, GenKind

CaseKind = Literal["qa", "unanswerable", "injection"]


@dataclass(frozen=True)
class Need:
    """``n`` cases of one kind and question type."""

    kind: CaseKind
    question_type: str
    n: int

    @property
    def gen_kind(self) -> GenKind:
        return "unanswerable" if self.kind == "unanswerable" else "qa"

    @property
    def gen_type(self) -> str:
        return INJECTION_BASE_TYPE if self.kind == "injection" else self.question_type


@dataclass(frozen=True)
class PlannedRequest:
    """One generation request: one chunk, one generator, an exact number of items.

    ``allocation`` says which case kinds the items become, in item order: with
    ``(("qa", 2), ("injection", 1))`` the first two items are qa cases and the
    third the base of an injection case.
    """

    position: int
    gen_kind: GenKind
    question_type: str
    chunk: Chunk
    allocation: tuple[tuple[CaseKind, int], ...]
    distractor: Chunk | None = None

    @property
    def n_items(self) -> int:
        return sum(n for _, n in self.allocation)

    def kind_of_item(self, index: int) -> CaseKind:
        """The case kind item ``index`` (0-based) of this request becomes."""
        for kind, n in self.allocation:
            if index < n:
                return kind
            index -= n
        raise IndexError(index)


def split_evenly(total: int, names: Sequence[str]) -> dict[str, int]:
    """``total`` divided equally over ``names``, the remainder to the first ones."""
    if not names:
        return {}
    base, extra = divmod(total, len(names))
    return {name: base + (1 if i < extra else 0) for i, name in enumerate(names)}


def chunk_order(chunks: Sequence[Chunk], seed: int) -> list[Chunk]:
    """Every chunk once, in the seeded round-robin order of the module docstring."""
    rng = random.Random(f"ragproof.sample/{seed}")
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.document_id, []).append(chunk)
    doc_ids = list(by_doc)
    rng.shuffle(doc_ids)
    columns: list[list[Chunk]] = []
    for doc_id in doc_ids:
        own = list(by_doc[doc_id])
        rng.shuffle(own)
        columns.append(own)
    order: list[Chunk] = []
    depth = max((len(c) for c in columns), default=0)
    for row in range(depth):
        order.extend(column[row] for column in columns if row < len(column))
    return order


@dataclass
class _Draft:
    gen_kind: GenKind
    question_type: str
    chunk: Chunk
    allocation: dict[CaseKind, int] = field(default_factory=dict)


def plan_requests(
    chunks: Sequence[Chunk], needs: Sequence[Need], *, seed: int, items_per_request: int
) -> list[PlannedRequest]:
    """The requests for ``needs``, in need order (module docstring, step 3)."""
    if items_per_request < 1:
        raise ValueError("items_per_request must be at least 1")
    order = chunk_order(chunks, seed)
    if not order:
        return []
    drafts: list[_Draft] = []
    by_key: dict[tuple[GenKind, str, str], _Draft] = {}
    cursor = 0
    for need in needs:
        remaining = need.n
        while remaining > 0:
            piece = min(items_per_request, remaining)
            remaining -= piece
            chunk, cursor = _next_free(order, cursor, by_key, need.gen_kind, need.gen_type)
            key = (need.gen_kind, need.gen_type, chunk.id)
            draft = by_key.get(key)
            if draft is None:
                draft = _Draft(need.gen_kind, need.gen_type, chunk)
                by_key[key] = draft
                drafts.append(draft)
            draft.allocation[need.kind] = draft.allocation.get(need.kind, 0) + piece
    return _requests(drafts, chunks, seed, 0)


def _requests(
    drafts: Sequence[_Draft], chunks: Sequence[Chunk], seed: int, first_position: int
) -> list[PlannedRequest]:
    """The planned requests of ``drafts``, numbered from ``first_position``."""
    return [
        PlannedRequest(
            position=first_position + i,
            gen_kind=d.gen_kind,
            question_type=d.question_type,
            chunk=d.chunk,
            allocation=tuple(d.allocation.items()),
            distractor=pick_distractor(chunks, d.chunk, seed)
            if d.question_type == "distracting"
            else None,
        )
        for i, d in enumerate(drafts)
    ]


def plan_top_up(
    chunks: Sequence[Chunk],
    needs: Sequence[Need],
    *,
    seed: int,
    items_per_request: int,
    sent: Sequence[PlannedRequest],
    first_position: int,
) -> tuple[list[PlannedRequest], dict[tuple[CaseKind, str], int]]:
    """Requests for the short ``needs`` of a round (module docstring, step 4).

    ``sent`` are the requests of the earlier rounds. Returns the requests
    (positions from ``first_position``) and, per (kind, question type), the
    items no unused chunk was left for.
    """
    if items_per_request < 1:
        raise ValueError("items_per_request must be at least 1")
    picker = _TopUpPicker(chunk_order(chunks, seed), sent)
    drafts: list[_Draft] = []
    unplanned: dict[tuple[CaseKind, str], int] = {}
    for need in needs:
        remaining = need.n
        while remaining > 0:
            piece = min(items_per_request, remaining)
            chunk = picker.take(need.gen_kind, need.gen_type)
            if chunk is None:
                unplanned[(need.kind, need.question_type)] = remaining
                break
            remaining -= piece
            drafts.append(_Draft(need.gen_kind, need.gen_type, chunk, {need.kind: piece}))
    return _requests(drafts, chunks, seed, first_position), unplanned


class _TopUpPicker:
    """Step 4's choice in linear time overall: ``sent`` and ``used`` only grow, so
    the first unsent chunk and each generator's first unused chunk only move on."""

    def __init__(self, order: list[Chunk], sent: Sequence[PlannedRequest]) -> None:
        self.order = order
        self.used = {(r.gen_kind, r.question_type, r.chunk.id) for r in sent}
        self.sent_ids = {r.chunk.id for r in sent}
        self.fresh = 0  # every chunk before it has been sent
        self.cursors: dict[tuple[GenKind, str], int] = {}  # all before: sent to it

    def take(self, gen_kind: GenKind, gen_type: str) -> Chunk | None:
        order = self.order
        while self.fresh < len(order) and order[self.fresh].id in self.sent_ids:
            self.fresh += 1
        if self.fresh < len(order):
            chunk: Chunk | None = order[self.fresh]  # unsent, so unused by this generator
        else:
            i = self.cursors.get((gen_kind, gen_type), 0)
            while i < len(order) and (gen_kind, gen_type, order[i].id) in self.used:
                i += 1
            self.cursors[(gen_kind, gen_type)] = i
            chunk = order[i] if i < len(order) else None
        if chunk is not None:
            self.used.add((gen_kind, gen_type, chunk.id))
            self.sent_ids.add(chunk.id)
        return chunk


def _next_free(
    order: list[Chunk],
    cursor: int,
    used: dict[tuple[GenKind, str, str], _Draft],
    gen_kind: GenKind,
    gen_type: str,
) -> tuple[Chunk, int]:
    """The next chunk this generator has not used, else the chunk at the cursor."""
    size = len(order)
    for step in range(size):
        chunk = order[(cursor + step) % size]
        if (gen_kind, gen_type, chunk.id) not in used:
            return chunk, cursor + step + 1
    return order[cursor % size], cursor + 1


def pick_distractor(chunks: Sequence[Chunk], chunk: Chunk, seed: int) -> Chunk | None:
    """A distractor chunk for ``chunk`` (module docstring, step 4)."""
    others = [c for c in chunks if c.document_id != chunk.document_id]
    if not others:
        others = [c for c in chunks if c.id != chunk.id]
    if not others:
        return None
    return random.Random(f"ragproof.distractor/{seed}/{chunk.id}").choice(others)
