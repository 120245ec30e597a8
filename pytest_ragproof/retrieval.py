"""The built-in lexical retriever: Okapi BM25 over chunks, pure Python.

Used by generation (to check that unanswerable questions are not answerable
from the top contexts) and by the offline example pipeline from a user's
conftest, so it imports nothing beyond the standard library: no pydantic.

Scoring, for a query Q and a chunk D::

    score(D, Q) = Σ_{t in Q} idf(t) · tf(t, D) · (k1 + 1)
                               / (tf(t, D) + k1 · (1 − b + b · |D| / avgdl))
    idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))

with k1 = 1.5, b = 0.75, N the number of chunks, n(t) the number of chunks
holding t, |D| the chunk's token count and avgdl the mean over all chunks.
Every query token counts, so a term repeated in the query weighs double.
Hits are ordered by score descending, then chunk id ascending.

Tokenizer: the text is NFC-normalized, split into maximal runs of Unicode
alphanumeric characters (``str.isalnum``; underscore and punctuation split),
and each run is lowercased. No stemming, no stop words.
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

K1 = 1.5
B = 0.75

# \w is alphanumeric plus underscore in Python's Unicode regexes; [^\W_] drops the underscore.
_TOKEN = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lowercased runs of Unicode alphanumeric characters, in text order."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return [tok.lower() for tok in _TOKEN.findall(text)]


def idf(n_chunks: int, doc_freq: int) -> float:
    """BM25 inverse document frequency, always positive: ln(1 + (N − n + 0.5) / (n + 0.5))."""
    return math.log(1.0 + (n_chunks - doc_freq + 0.5) / (doc_freq + 0.5))


class Indexable(Protocol):
    """What the index needs from a chunk (``chunking.Chunk`` satisfies it)."""

    @property
    def id(self) -> str: ...

    @property
    def document_id(self) -> str: ...

    @property
    def text(self) -> str: ...


T = TypeVar("T", bound=Indexable)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: which chunk, of which document, with what score."""

    chunk_id: str
    document_id: str
    score: float


class BM25Index(Generic[T]):
    """An inverted index over chunks: a query touches only the postings of its terms.

    Build it once per corpus; ``search`` is read-only and may be called from
    several threads. ``get(chunk_id)`` returns the original chunk object.
    """

    def __init__(self, chunks: Iterable[T], *, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._chunks: list[T] = list(chunks)
        self._position: dict[str, int] = {}
        for i, chunk in enumerate(self._chunks):
            if chunk.id in self._position:
                raise ValueError(f"duplicate chunk id in BM25 index: {chunk.id!r}")
            self._position[chunk.id] = i
        # term -> (chunk positions, term frequencies), positions ascending.
        postings: dict[str, tuple[list[int], list[int]]] = {}
        lengths: list[int] = []
        for i, chunk in enumerate(self._chunks):
            tokens = tokenize(chunk.text)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                entry = postings.get(term)
                if entry is None:
                    postings[term] = ([i], [tf])
                else:
                    entry[0].append(i)
                    entry[1].append(tf)
        self._postings = postings
        self._lengths = lengths
        n = len(lengths)
        self.avgdl = sum(lengths) / n if n else 0.0
        self._idf = {term: idf(n, len(pos)) for term, (pos, _) in postings.items()}
        # Per-chunk length normalization k1 · (1 − b + b·|D|/avgdl), computed once.
        avg = self.avgdl or 1.0
        self._norm = [k1 * (1.0 - b + b * length / avg) for length in lengths]

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings)

    def get(self, chunk_id: str) -> T:
        """The chunk indexed under ``chunk_id``; KeyError when unknown."""
        return self._chunks[self._position[chunk_id]]

    def scores(self, query: str) -> dict[str, float]:
        """Score of every chunk sharing at least one term with ``query``, by chunk id."""
        return {self._chunks[i].id: s for i, s in self._accumulate(query).items()}

    def search(self, query: str, k: int | None = 10) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (all matching chunks when k is None).

        Chunks sharing no term with the query score 0 and are not returned.
        """
        if k is not None and k < 0:
            raise ValueError(f"k must be >= 0 or None, got {k}")
        acc = self._accumulate(query)
        keyed = ((-s, self._chunks[i].id, i) for i, s in acc.items())
        ranked = sorted(keyed) if k is None else heapq.nsmallest(k, keyed)
        return [Hit(cid, self._chunks[i].document_id, -neg) for neg, cid, i in ranked]

    def _accumulate(self, query: str) -> dict[int, float]:
        acc: dict[int, float] = {}
        k1_plus_1 = self.k1 + 1.0
        norm = self._norm
        for term in tokenize(query):
            entry = self._postings.get(term)
            if entry is None:
                continue
            weight = self._idf[term] * k1_plus_1
            for i, tf in zip(entry[0], entry[1], strict=True):
                acc[i] = acc.get(i, 0.0) + weight * tf / (tf + norm[i])
        return acc
