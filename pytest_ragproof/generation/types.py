"""The vocabulary of generation: kinds, question types, discard reasons, and the
contract a question generator meets (:class:`QuestionGenerator`).

A generator turns ONE request -- one chunk, one question type, an exact number of
items -- into chat messages, and the model's validated reply back into
:class:`GeneratedItem` values. Everything else (sampling, verification,
de-duplication, injection payloads, ids, provenance, output order) is done by the
orchestration around it, the same way for built-in and custom generators.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, get_args, runtime_checkable

from pytest_ragproof.vocabulary import QUESTION_TYPES

if TYPE_CHECKING:
    from pydantic import BaseModel

    from pytest_ragproof.corpus.chunking import Chunk

#: Kinds a question generator writes. Injection cases are verified ``qa`` items
#: with a payload attached, so no generator writes them directly.
GenKind = Literal["qa", "unanswerable"]

#: qa question types in the style of Giskard RAGET, in their default order: every
#: question type but ``out_of_scope``, which belongs to unanswerable cases.
QA_TYPES: tuple[str, ...] = tuple(t for t in QUESTION_TYPES if t != "out_of_scope")
#: Types of unanswerable questions: on a chunk's subject but not answered by the
#: corpus (``simple``), or plausible for the assistant yet outside the corpus
#: (``out_of_scope``, RAGET's name).
UNANSWERABLE_TYPES: tuple[str, ...] = ("simple", "out_of_scope")
#: The question type of the verified qa items injection payloads are attached to.
INJECTION_BASE_TYPE = "simple"

DiscardReason = Literal[
    "invalid_output",
    "prompt_text",
    "count_mismatch",
    "not_answerable",
    "wrong_answer",
    "answerable",
    "duplicate",
    "provider_error",
]
#: Why a requested item did not become a case, in the order summaries show them.
DISCARD_REASONS: tuple[DiscardReason, ...] = get_args(DiscardReason)
DISCARD_REASON_HELP: dict[DiscardReason, str] = {
    "invalid_output": "the reply did not validate (after one repair), or an item was unusable",
    "prompt_text": "a generated field repeats text of our prompts (instructions, schema, "
    "repair request)",
    "count_mismatch": "the reply held another number of items or verdicts than asked",
    "not_answerable": "verification: the question cannot be answered from its chunk",
    "wrong_answer": "verification: the answer is not right according to its chunk",
    "answerable": "unanswerable question that the top BM25 contexts do answer",
    "duplicate": "near-duplicate of an earlier question (token Jaccard >= threshold)",
    "provider_error": "the provider failed beyond the retry budget (type and status only)",
}


@dataclass(frozen=True)
class ItemRequest:
    """What a generator is asked for: ``n_items`` items of one type from one chunk.

    ``distractor`` is another chunk (from another document when the corpus has
    one) for ``distracting`` questions, None otherwise. ``language`` is a code
    such as ``en`` or whatever the user passed; ``language_name`` its English
    name when known (else the same string).
    """

    kind: GenKind
    question_type: str
    chunk: Chunk
    n_items: int
    language: str
    language_name: str
    agent_description: str | None = None
    distractor: Chunk | None = None


@dataclass(frozen=True)
class GeneratedItem:
    """One question a generator produced, before verification.

    ``answer`` is required for qa items and ignored for unanswerable ones.
    ``conversation_history`` holds ``(role, content)`` turns (roles ``user`` and
    ``assistant``) that come before ``question``. ``metadata`` is copied into the
    case's metadata (string values; keep it short and free of secrets).
    """

    question: str
    answer: str | None = None
    conversation_history: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class QuestionGenerator(Protocol):
    """Writes the questions of some question types of one kind.

    * ``name``: a short identifier, recorded in case metadata and provenance.
    * ``kind``: ``"qa"`` or ``"unanswerable"``.
    * ``question_types``: the types it writes; it replaces the built-in generator
      of each (an unanswerable generator may claim ``out_of_scope``).
    * ``prompt_version``: change it whenever the messages change: it is part of
      the cache key and of every case's provenance.
    * ``schema``: the pydantic model the reply must validate against. Structural
      rules belong here so that a bad reply gets the one repair request.
    * ``build_messages(request)``: the chat messages (``role``/``content``) sent
      for one request. They must ask for exactly ``request.n_items`` items.
    * ``parse_items(reply, request)``: the items of a validated reply, in order.
      Return however many the reply held: the orchestration discards the whole
      request as ``count_mismatch`` when that is not ``request.n_items``. Raise
      ``ValueError`` (message free of generated text) for an unusable reply.
    """

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> GenKind: ...

    @property
    def question_types(self) -> tuple[str, ...]: ...

    @property
    def prompt_version(self) -> str: ...

    @property
    def schema(self) -> type[BaseModel]: ...

    def build_messages(self, request: ItemRequest) -> list[dict[str, str]]: ...

    def parse_items(self, reply: BaseModel, request: ItemRequest) -> list[GeneratedItem]: ...
