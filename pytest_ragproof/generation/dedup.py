"""Near-duplicate questions: the later of two similar questions is dropped.

Normalization: NFKC, then the BM25 tokenizer (lowercased runs of letters and
digits, punctuation dropped). For conversational questions the user turns of
the history come first, so "What is its capital?" about France and about Peru
differ. Two questions are near-duplicates when the Jaccard similarity of their
token sets is at least the threshold (default 0.8); two questions whose token
sets are both empty are duplicates when their normalized texts are equal.

Candidates are checked in output order against the questions already kept,
across all kinds, so the first occurrence wins and the result is deterministic.
An inverted index limits each check to kept questions sharing a token.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from pytest_ragproof.corpus.retrieval import tokenize

DEFAULT_THRESHOLD = 0.8


def question_tokens(question: str, history_user_turns: Iterable[str] = ()) -> frozenset[str]:
    """The normalized token set compared by :class:`NearDuplicateFilter`."""
    text = "\n".join([*history_user_turns, question])
    return frozenset(tokenize(unicodedata.normalize("NFKC", text)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class NearDuplicateFilter:
    """Remembers kept questions; :meth:`admit` says whether a new one is new enough."""

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self._kept: list[frozenset[str]] = []
        self._empty_texts: set[str] = set()
        self._by_token: dict[str, list[int]] = {}

    def admit(self, question: str, history_user_turns: Iterable[str] = ()) -> bool:
        """Keep and return True when no kept question is a near-duplicate, else False."""
        tokens = question_tokens(question, history_user_turns)
        if not tokens:
            key = unicodedata.normalize("NFKC", question).strip().casefold()
            if key in self._empty_texts:
                return False
            self._empty_texts.add(key)
            return True
        candidates: set[int] = set()
        for token in tokens:
            candidates.update(self._by_token.get(token, ()))
        for index in sorted(candidates):
            if jaccard(tokens, self._kept[index]) >= self.threshold:
                return False
        index = len(self._kept)
        self._kept.append(tokens)
        for token in tokens:
            self._by_token.setdefault(token, []).append(index)
        return True
