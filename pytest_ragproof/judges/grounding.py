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

Two shapes are invalid whatever words they share, because they are pieces of a reply
rather than claims: a claim carrying JSON syntax (``{"claims": ["The Day Pass costs``,
a reply cut off at its token limit and copied back by the model after a repair), and a
claim that is the text cut off inside a word (``The Day Pass costs €9 and is v`` of an
answer that goes on "... valid for a day."): it ends with a letter or digit that the
text continues with another one.

The check runs inside the schema's validation, so a reply that fails it is one more
invalid reply: repaired once by the LLM layer, then a judge error on the case. The
text a step splits is set around its call with :func:`claims_from` (a context
variable: each judge step runs in its own task, and validation runs in it).
"""

from __future__ import annotations

import contextlib
import functools
import re
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
    text: str = ""  # the text itself, normalised and lower-cased (cut-off claims)


_SOURCE: ContextVar[Source | None] = ContextVar("ragproof_claims_source", default=None)


@contextlib.contextmanager
def claims_from(name: str, text: str, question: str) -> Iterator[None]:
    """Check the claims validated in this block against ``text`` (and ``question``)."""
    own = content_words(text)
    # A text without content words ("Yes.", "No.") cannot be checked: no source is set.
    source = Source(name, own | content_words(question), _plain(text)) if own else None
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


#: JSON syntax no claim written as a sentence has: a brace or bracket opening a string or
#: closing one, a quoted key, or a claim that opens with a brace or a bracket.
_JSON_SYNTAX = re.compile(r'^\s*[\[{]|[\[{]\s*"|"\s*[\]}]|"[^"\s]{1,40}"\s*:')


def _plain(text: str) -> str:
    return " ".join(normalize_text(text).lower().split())


def _cut_off(claim: str, text: str) -> bool:
    """Is ``claim`` a piece of ``text`` that stops inside a word of it?"""
    piece = _plain(claim)
    if len(piece) < 2 or not piece[-1].isalnum():
        return False
    at = text.find(piece)
    while at >= 0:
        end = at + len(piece)
        if not (end < len(text) and text[end].isalnum()):
            return False  # it also occurs whole: a claim restating that part
        at = text.find(piece, at + 1)
    return piece in text


def _numbers(found: Sequence[int], one: str, many: str) -> str:
    which = ", ".join(str(i) for i in found)
    return f"claim {which} {one}" if len(found) == 1 else f"claims {which} {many}"


def check(claims: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the claims that are pieces of a reply (JSON syntax, cut
    off inside a word) or share no content word with the source.

    The message names the claims by number, never by their text: the text may be a line
    of our own prompt, which a repair request must not send back.
    """
    syntax = [i for i, claim in enumerate(claims, 1) if _JSON_SYNTAX.search(claim)]
    if syntax:
        named = _numbers(syntax, "carries", "carry")
        raise ValueError(f"{named} JSON syntax: each claim is one plain sentence, not a reply")
    source = _SOURCE.get()
    if source is None:
        return
    cut = [i for i, claim in enumerate(claims, 1) if _cut_off(claim, source.text)]
    if cut:
        named = _numbers(cut, "stops", "stop")
        raise ValueError(
            f"{named} inside a word of the {source.name}: each claim is a whole statement"
        )
    stray = [i for i, claim in enumerate(claims, 1) if not content_words(claim) & source.words]
    if not stray:
        return
    which = ", ".join(str(i) for i in stray)
    named = f"claim {which} shares" if len(stray) == 1 else f"claims {which} share"
    raise ValueError(
        f"{named} no word with the {source.name}: each claim must restate part of the "
        f"{source.name} itself, not the instructions or the schema"
    )
