"""Claims a judge extracts must come from the text it was asked to split.

Small models sometimes answer a "split this text into claims" step with something
else: a line of the instructions or of the JSON schema, a claim about another topic.
Scoring such claims would be a made-up score, so a claim extracted from an answer or
a reference answer must share at least one content word with that text (or with the
question it answers: the prompts ask for standalone claims, so "Yes." may become "The
Seine flows through Paris."). Content words are the package's tokens (lower-cased
letter and digit runs, as for ``completeness``) after its text normalisation
(:func:`pytest_ragproof.textnorm.normalize_text`), minus the stop words
(:data:`pytest_ragproof.metrics.answer.STOPWORDS`) and single Latin letters. A text
without any content word cannot be checked and is not.

The check runs inside the schema's validation, so a reply that fails it is one more
invalid reply: repaired once by the LLM layer, then a judge error on the case. The
text a step splits is set around its call with :func:`claims_from` (a context
variable: each judge step runs in its own task, and validation runs in it).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from pytest_ragproof.metrics.answer import STOPWORDS, tokenize
from pytest_ragproof.textnorm import normalize_text


@functools.lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """The content words of ``text`` (see the module docstring).

    Memoised: a case's answer, question and reference are checked by several steps.
    """
    return frozenset(
        t
        for t in tokenize(normalize_text(text))
        if t not in STOPWORDS and not (len(t) == 1 and t.isascii() and t.isalpha())
    )


@dataclass(frozen=True)
class Source:
    """The text claims are extracted from, as the repair message names it."""

    name: str  # "answer" | "reference answer"
    words: frozenset[str]  # its content words and its question's


_SOURCE: ContextVar[Source | None] = ContextVar("ragproof_claims_source", default=None)


@contextlib.contextmanager
def claims_from(name: str, text: str, question: str) -> Iterator[None]:
    """Check the claims validated in this block against ``text`` (and ``question``)."""
    own = content_words(text)
    # A text without content words ("Yes.", "No.") cannot be checked: no source is set.
    source = Source(name, own | content_words(question)) if own else None
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def check(claims: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the claims that share no content word with the source.

    The message names the claims by number, never by their text: the text may be a line
    of our own prompt, which a repair request must not send back.
    """
    source = _SOURCE.get()
    if source is None:
        return
    stray = [i for i, claim in enumerate(claims, 1) if not content_words(claim) & source.words]
    if not stray:
        return
    which = ", ".join(str(i) for i in stray)
    named = f"claim {which} shares" if len(stray) == 1 else f"claims {which} share"
    raise ValueError(
        f"{named} no word with the {source.name}: each claim must restate part of the "
        f"{source.name} itself, not the instructions or the schema"
    )
