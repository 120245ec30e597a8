"""The pydantic schema of every judge step, with verdict tokens normalised.

A verdict is a yes/no: ``yes``/``no``, ``true``/``false``, booleans and a few
judge-specific words (``supported``, ``relevant``...), in any case and with
trailing punctuation. Words of doubt (``idk``, ``unclear``, ``unknown``, ``not
sure``) are a *no*: a claim the judge cannot confirm is not supported. Anything
else fails validation, which the LLM layer answers with one repair request.

Claims a step extracts from a text (the answer's, the reference answer's) must share a
content word with that text (:mod:`pytest_ragproof.judges.grounding`): a reply that
splits something else is invalid too, repaired once, then an error.

Lists whose length is fixed by the input (one verdict per claim, per context) are
built per length by :func:`fixed` (cached), so the JSON schema sent to the model
states the count and a reply with the wrong count is repaired once, then an error
-- never padded.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, field_validator

from pytest_ragproof.judges import grounding

_YES = frozenset(
    {
        "yes",
        "y",
        "true",
        "1",
        "supported",
        "relevant",
        "attributed",
        "declined",
        "followed",
        "covered",
        "correct",
        "present",
    }
)
_NO = frozenset(
    {
        "no",
        "n",
        "false",
        "0",
        "unsupported",
        "not supported",
        "irrelevant",
        "not relevant",
        "not attributed",
        "answered",
        "resisted",
        "not followed",
        "not covered",
        "incorrect",
        "absent",
        "contradicted",
        "idk",
        "i don't know",
        "unknown",
        "unclear",
        "not sure",
        "uncertain",
        "maybe",
    }
)
_TRIM = re.compile(r"^[\s\"'`*]+|[\s\"'`*.!?,;:]+$")


def normalise_verdict(value: Any) -> Any:
    """``'Yes.'`` -> True, ``'idk'`` -> False; other values are left for validation to refuse."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        token = _TRIM.sub("", value).lower()
        if token in _YES:
            return True
        if token in _NO:
            return False
    return value


Verdict = Annotated[bool, BeforeValidator(normalise_verdict)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


_ANSWER_CLAIMS = "the answer's claims, each restating part of the answer"
_REFERENCE_CLAIMS = "the reference answer's claims, each restating part of the reference answer"


class Claims(_Strict):
    """``answer-claims``: the standalone factual claims of an answer."""

    claims: list[Annotated[str, Field(min_length=1)]] = Field(description=_ANSWER_CLAIMS)

    @field_validator("claims")
    @classmethod
    def _from_the_answer(cls, claims: list[str]) -> list[str]:
        grounding.check(claims)
        return claims


class ClaimVerdict(_Strict):
    verdict: Verdict
    context: int | None = Field(default=None, description="number of the supporting context")


class PlainVerdict(_Strict):
    verdict: Verdict


class ReferenceClaim(_Strict):
    claim: Annotated[str, Field(min_length=1)]
    verdict: Verdict


class AttributedClaim(_Strict):
    claim: Annotated[str, Field(min_length=1)]
    verdict: Verdict
    context: int | None = None


class OneVerdict(_Strict):
    """``abstained`` / ``injection``: one yes/no about the whole answer."""

    verdict: Verdict


class _FromReference(_Strict):
    """A reply holding the reference answer's claims: they must be the reference's."""

    @field_validator("reference_claims", check_fields=False)
    @classmethod
    def _from_the_reference(
        cls, claims: list[ReferenceClaim] | list[AttributedClaim]
    ) -> list[ReferenceClaim] | list[AttributedClaim]:
        grounding.check([c.claim for c in claims])
        return claims


class ContextRecall(_FromReference):
    """``context-recall``: the reference's claims, each attributed to a context or not."""

    reference_claims: Annotated[
        list[AttributedClaim], Field(min_length=1, description=_REFERENCE_CLAIMS)
    ]


@functools.cache
def fixed(item: type[BaseModel], n: int, field: str = "verdicts") -> type[BaseModel]:
    """A model ``{field: [item] * n}`` whose list must have exactly ``n`` items."""
    name = f"{item.__name__}List{n}"
    definitions: dict[str, Any] = {
        field: (Annotated[list[item], Field(min_length=n, max_length=n)], ...)  # type: ignore[valid-type]
    }
    model: type[BaseModel] = create_model(name, __base__=_Strict, **definitions)
    return model


@functools.cache
def correctness(n: int) -> type[BaseModel]:
    """``answer-correctness``: one verdict per answer claim, and the reference's claims."""
    model: type[BaseModel] = create_model(
        f"Correctness{n}",
        __base__=_FromReference,
        answer_claims=(Annotated[list[PlainVerdict], Field(min_length=n, max_length=n)], ...),
        reference_claims=(
            Annotated[list[ReferenceClaim], Field(min_length=1, description=_REFERENCE_CLAIMS)],
            ...,
        ),
    )
    return model
