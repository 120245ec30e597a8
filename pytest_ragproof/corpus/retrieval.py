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
import operator
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
    if text.isascii():
        # Same result, faster: ASCII lowercasing never changes where runs split.
        return _TOKEN.findall(text.lower())
    text = unicodedata.normalize("NFC", text)
    # Split first, then lowercase: lowercasing can add non-alphanumeric
    # characters ("İ" becomes "i" + U+0307) that would split a word.
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

    Each posting stores its precomputed term score (the "impact"), so a query
    only adds floats. Chunks are kept sorted by id, which makes "lower position"
    the tie-breaker. Build it once per corpus; ``search`` is read-only and may
    be called from several threads. ``get(chunk_id)`` returns the original chunk.
    """

    def __init__(self, chunks: Iterable[T], *, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._chunks: list[T] = sorted(chunks, key=lambda c: c.id)
        self._position: dict[str, int] = {}
        for i, chunk in enumerate(self._chunks):
            if chunk.id in self._position:
                raise ValueError(f"duplicate chunk id in BM25 index: {chunk.id!r}")
            self._position[chunk.id] = i
        # term -> (chunk positions ascending, term frequencies)
        raw: dict[str, tuple[list[int], list[int]]] = {}
        lengths: list[int] = []
        for i, chunk in enumerate(self._chunks):
            tokens = tokenize(chunk.text)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                entry = raw.get(term)
                if entry is None:
                    raw[term] = ([i], [tf])
                else:
                    entry[0].append(i)
                    entry[1].append(tf)
        n = len(lengths)
        self.avgdl = sum(lengths) / n if n else 0.0
        avg = self.avgdl or 1.0
        norm = [k1 * (1.0 - b + b * length / avg) for length in lengths]
        self._postings: dict[str, tuple[list[int], list[float]]] = {}
        for term, (positions, tfs) in raw.items():
            w = idf(n, len(positions))
            impacts = [
                w * tf * (k1 + 1.0) / (tf + norm[i]) for i, tf in zip(positions, tfs, strict=True)
            ]
            self._postings[term] = (positions, impacts)
        # (score, -position) tuples compare in C: higher score first, then lower position.
        self._neg_positions = range(0, -n, -1)

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
        return {self._chunks[-neg].id: s for s, neg in self._scored(query) if s > 0.0}

    def search(self, query: str, k: int | None = 10) -> list[Hit]:
        """The ``k`` best chunks for ``query`` (all matching chunks when k is None).

        Chunks sharing no term with the query score 0 and are not returned.
        """
        if k is not None and k < 0:
            raise ValueError(f"k must be >= 0 or None, got {k}")
        scored = self._scored(query)
        ranked = sorted(scored, reverse=True) if k is None else heapq.nlargest(k, scored)
        out: list[Hit] = []
        for score, neg in ranked:
            if score <= 0.0:
                break
            chunk = self._chunks[-neg]
            out.append(Hit(chunk.id, chunk.document_id, score))
        return out

    def _scored(self, query: str) -> Iterable[tuple[float, int]]:
        """(score, -position) pairs for the chunks the query's postings touch (maybe more)."""
        lists = [self._postings[t] for t in tokenize(query) if t in self._postings]
        touched = sum(len(p) for p, _ in lists)
        if not lists:
            return ()
        # Both paths add a chunk's term scores in query order starting from 0.0,
        # so they give bit-identical scores; they differ only in speed.
        if touched * 4 >= len(self._chunks):
            dense = [0.0] * len(self._chunks)
            for positions, impacts in lists:
                for i, s in zip(positions, impacts, strict=True):
                    dense[i] += s
            return zip(dense, self._neg_positions, strict=True)
        sparse: dict[int, float] = {}
        for positions, impacts in lists:
            get = sparse.get
            for i, s in zip(positions, impacts, strict=True):
                sparse[i] = get(i, 0.0) + s
        return zip(sparse.values(), map(operator.neg, sparse), strict=True)
