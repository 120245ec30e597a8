"""The case schema (docs/datasets.md) as frozen pydantic models.

Values arrive here already normalized (see ``normalize.py``); these models check
types, enumerations and the kind-specific rules. ``metadata`` is deeply
immutable: mappings become :class:`FrozenDict`, lists become tuples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator
from pydantic import model_validator as _model_validator

from pytest_ragproof.dataset.frozendict import CheckedFrozenDict, FrozenDict
from pytest_ragproof.dataset.messages import json_type
from pytest_ragproof.dataset.normalize import MAX_DEPTH

SCHEMA_VERSION = 2
"""Version of the case schema written into frozen files.

1 is the original RAGProof layout (seed 000): no question types, canaries,
conversation history, splits, provenance or review status. Version 1 files are
upgraded on load; newer versions are refused.
"""

Kind = Literal["qa", "unanswerable", "injection"]
QuestionType = Literal[
    "simple", "complex", "distracting", "situational", "double", "conversational", "out_of_scope"
]
Split = Literal["optimize", "validation", "test"]
ReviewStatus = Literal["pending", "approved", "edited", "rejected"]


NonEmptyStr = Annotated[str, Field(min_length=1)]


def freeze_json(value: Any, path: str = "metadata", depth: int = 0) -> Any:
    """Deep-freeze a JSON value; raise ValueError (value-free) on non-JSON or non-finite."""
    if type(value) is CheckedFrozenDict:
        return value  # built by normalization after the same checks
    if type(value) is dict:
        # Fast path for the common flat object of scalars (x - x == 0 only for finite x).
        for key, item in value.items():
            t = type(item)
            if type(key) is not str or not (
                t is str
                or t is int
                or t is bool
                or item is None
                or (t is float and item - item == 0)
            ):
                break
        else:
            return FrozenDict(value)
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} holds a non-finite number (NaN or Infinity)")
        return value
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        raise ValueError(
            f"metadata is nested more than {MAX_DEPTH} levels deep (or contains itself)"
        )
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{path} has a non-string key")
            out[key] = freeze_json(item, f"{path}.{key[:40]}", depth + 1)
        return FrozenDict(out)
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
    raise ValueError(f"{path} holds a {type(value).__name__}, which is not a JSON value")


class Message(BaseModel):
    """One turn of a conversation history."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    content: NonEmptyStr


class Usage(BaseModel):
    """Token usage of the provider calls that produced a generated case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: StrictInt = Field(ge=0)
    completion_tokens: StrictInt = Field(ge=0)


class ProvenanceEdit(BaseModel):
    """One change a reviewer made to a generated case (``ragproof review -o``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: Literal["question", "expected_answer", "expected_source_ids"]
    before: str | tuple[str, ...] | None
    reviewer: NonEmptyStr
    time: NonEmptyStr


class Provenance(BaseModel):
    """Where a generated case came from (docs/generation.md, "Output")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    document_id: NonEmptyStr
    chunk_id: NonEmptyStr | None = None
    span: tuple[StrictInt, StrictInt] | None = None
    model: NonEmptyStr
    prompt_version: NonEmptyStr
    generator_version: NonEmptyStr
    seed: StrictInt
    usage: Usage | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    edits: tuple[ProvenanceEdit, ...] | None = None

    @field_validator("span")
    @classmethod
    def _half_open(cls, span: tuple[int, int] | None) -> tuple[int, int] | None:
        if span is not None and not 0 <= span[0] <= span[1]:
            raise ValueError("span must be a half-open range [start, end) with 0 <= start <= end")
        return span


class Case(BaseModel):
    """One evaluation case. Frozen; unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: NonEmptyStr
    kind: Kind
    question: NonEmptyStr
    expected_answer: NonEmptyStr | None = None
    expected_source_ids: tuple[NonEmptyStr, ...] = ()
    reference_contexts: tuple[NonEmptyStr, ...] = ()
    adversarial_payload: NonEmptyStr | None = None
    canary: NonEmptyStr | None = None
    question_type: QuestionType = "simple"
    conversation_history: tuple[Message, ...] = ()
    tags: tuple[NonEmptyStr, ...] = ()
    metadata: FrozenDict = Field(default_factory=lambda: FrozenDict())
    split: Split | None = None
    synthetic: StrictBool = False
    provenance: Provenance | None = None
    review_status: ReviewStatus | None = None

    @field_validator("metadata", mode="plain")
    @classmethod
    def _metadata(cls, value: Any) -> FrozenDict:
        if type(value) is CheckedFrozenDict:
            return value  # built by normalization after the same checks
        if not isinstance(value, Mapping):
            raise ValueError(f"expected an object, got {json_type(value)}")
        frozen = freeze_json(value)
        assert isinstance(frozen, FrozenDict)
        return frozen

    @_model_validator(mode="after")
    def _kind_rules(self) -> Case:
        # Runs once per case of every load: fields are read from __dict__ once each.
        fields = self.__dict__
        kind = fields["kind"]
        source_ids = fields["expected_source_ids"]
        if kind == "injection":
            if fields["adversarial_payload"] is None:
                raise ValueError("an injection case needs adversarial_payload")
            if fields["canary"] is None:
                raise ValueError(
                    "no canary given and none could be derived from adversarial_payload; "
                    "add 'canary'"
                )
        else:
            # A pending qa case may lack them: a draft (an imported production trace) whose
            # reviewer says which sources are right; approving it needs them.
            if kind == "qa" and not source_ids and fields["review_status"] != "pending":
                raise ValueError("a qa case needs at least one expected_source_ids entry")
            if fields["adversarial_payload"] is not None or fields["canary"] is not None:
                name = (
                    "adversarial_payload" if fields["adversarial_payload"] is not None else "canary"
                )
                raise ValueError(f"{name} is only allowed on injection cases")
            if kind == "unanswerable" and source_ids:
                raise ValueError("an unanswerable case cannot have expected_source_ids")
        question_type = fields["question_type"]
        if question_type == "out_of_scope" and kind != "unanswerable":
            raise ValueError("question_type out_of_scope belongs to kind unanswerable")
        if question_type == "conversational" and not fields["conversation_history"]:
            raise ValueError("a conversational case needs a conversation_history")
        if len(source_ids) > 1 and len(set(source_ids)) != len(source_ids):
            raise ValueError("expected_source_ids holds the same id twice")
        return self

    def iter_strings(self) -> Iterator[str]:
        """Every free-text value of the case (for redaction checks)."""
        yield self.question
        for value in (self.expected_answer, self.adversarial_payload):
            if value is not None:
                yield value
        yield from self.reference_contexts
        for message in self.conversation_history:
            yield message.content
