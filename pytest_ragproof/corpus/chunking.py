"""Deterministic chunking: a document's text becomes chunks with stable ids and spans.

Pure functions, no I/O, no randomness: the same text and settings always give
the same chunks. The algorithm (docs/corpus.md has the long form):

1. Sections. For heading-aware formats (Markdown, and DOCX whose headings the
   reader renders as Markdown) the text is split before every ATX heading line
   (``#`` to ``######``) outside fenced code blocks. A section holding only its
   heading is merged into the next one, so a heading is never a chunk alone.
   Other formats are one section. Chunks never cross a section boundary.
2. A section that fits in ``chunk_size`` characters is one chunk. A longer one
   is cut greedily: each cut is the last paragraph break (blank line) that
   leaves a chunk of at least half the target size; failing that the last
   sentence end, then line break, then whitespace; a hard cut at exactly
   ``chunk_size`` characters is the last resort.
3. Overlap: the next chunk starts up to ``chunk_overlap`` characters before the
   previous chunk's end, at the first sentence start in that window, else the
   first word start, else exactly ``chunk_overlap`` characters back.
4. Every chunk is trimmed of outer whitespace, so none is empty or blank, and
   ``text == document_text[start:end]`` for its half-open span.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError

DEFAULT_CHUNK_SIZE = defaults.CHUNK_SIZE
DEFAULT_CHUNK_OVERLAP = defaults.CHUNK_OVERLAP
# Formats whose text carries Markdown ATX headings the chunker should follow.
HEADING_FORMATS = frozenset({"markdown", "docx"})

_HEADING_OR_FENCE = re.compile(
    r"^ {0,3}(?:(?P<fence>`{3,}|~{3,})|(?P<hashes>#{1,6})(?=[ \t]|$)(?P<title>[^\n]*))",
    re.MULTILINE,
)
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SPACES = re.compile(r"\s+")

# Boundary patterns, best first. The ``sep`` group is the separator: the chunk's
# content ends where it starts, the next content may begin where it ends.
_PARAGRAPH = re.compile(r"(?P<sep>\n[ \t]*\n)")
# Latin-style full stops need whitespace after them ("3.14", "e.g.x" are not
# ends); CJK full stops do not, as those scripts use no spaces.
_SENTENCE = re.compile(r"(?:[.!?…][)\]\"'’”»]*(?=\s)|[。！？][」』）”]*)(?P<sep>\s?)")
_LINE = re.compile(r"(?P<sep>\n)")
_WORD = re.compile(r"(?P<sep>\s)")
_BOUNDARIES = (_PARAGRAPH, _SENTENCE, _LINE, _WORD)
# A paragraph break straddling the limit still counts: look this far past it.
_LOOKAHEAD = 16


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous piece of one document.

    ``id`` is ``<document id>#<index>``, ``index`` counts from 0 in document
    order, and ``[start, end)`` is the half-open span in the document's
    normalized text with ``text == document_text[start:end]``.
    ``heading_path`` lists the enclosing headings, outermost first.
    """

    id: str
    document_id: str
    index: int
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...] = ()

    @property
    def topic(self) -> str | None:
        """The heading path joined with `` > ``, or None when the chunk has no heading."""
        return " > ".join(self.heading_path) if self.heading_path else None


class ChunkSource(Protocol):
    """What the chunker needs from a document (``ingest.Document`` satisfies it)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def format(self) -> str: ...


def resolve_settings(chunk_size: int, chunk_overlap: int | None) -> tuple[int, int]:
    """Validated (size, overlap); a None overlap means 100 capped at half the size.

    Raises ConfigError unless ``chunk_size >= 1`` and
    ``0 <= chunk_overlap <= chunk_size // 2``. The overlap cap keeps every chunk
    advancing by about half a chunk, so the number of chunks stays
    proportional to the text length.
    """
    if chunk_overlap is None:
        if isinstance(chunk_size, int) and not isinstance(chunk_size, bool):
            chunk_overlap = min(DEFAULT_CHUNK_OVERLAP, max(chunk_size, 0) // 2)
        else:
            chunk_overlap = 0
    for name, value in (("chunk_size", chunk_size), ("chunk_overlap", chunk_overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be an integer, got {type(value).__name__}")
    if chunk_size < 1:
        raise ConfigError(f"chunk_size must be at least 1, got {chunk_size}")
    if not 0 <= chunk_overlap <= chunk_size // 2:
        raise ConfigError(
            f"chunk_overlap must be between 0 and chunk_size // 2 ({chunk_size // 2}), "
            f"got {chunk_overlap}"
        )
    return chunk_size, chunk_overlap


def chunk_document(
    document: ChunkSource,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int | None = None,
) -> list[Chunk]:
    """Chunk one document; headings are followed for Markdown and DOCX."""
    return chunk_text(
        document.text,
        document.id,
        headings=document.format in HEADING_FORMATS,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )


def chunk_corpus(
    documents: Iterable[ChunkSource],
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int | None = None,
) -> list[Chunk]:
    """Chunk every document, in the given order (``Corpus.documents`` is sorted by id)."""
    chunk_size, chunk_overlap = resolve_settings(chunk_size, chunk_overlap)
    out: list[Chunk] = []
    for doc in documents:
        out.extend(chunk_document(doc, chunk_size=chunk_size, chunk_overlap=chunk_overlap))
    return out


def chunk_text(
    text: str,
    document_id: str,
    *,
    headings: bool = False,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    chunk_overlap: int | None = None,
) -> list[Chunk]:
    """Chunk ``text`` (already normalized) as the document ``document_id``."""
    chunk_size, chunk_overlap = resolve_settings(chunk_size, chunk_overlap)
    sections = _sections(text) if headings else [(0, len(text), ())]
    chunks: list[Chunk] = []
    for sec_start, sec_end, path in sections:
        for start, end in _split(text, sec_start, sec_end, chunk_size, chunk_overlap):
            n = len(chunks)
            chunks.append(
                Chunk(f"{document_id}#{n}", document_id, n, start, end, text[start:end], path)
            )
    return chunks


def _sections(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """Split at ATX headings outside fenced code; each section carries its heading path."""
    heads: list[tuple[int, int, str]] = []  # (line start, level, title)
    fence: str | None = None
    for m in _HEADING_OR_FENCE.finditer(text):
        marker = m.group("fence")
        if marker is not None:
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
        elif fence is None:
            title = _CLOSING_HASHES.sub("", m.group("title"))
            heads.append((m.start(), len(m.group("hashes")), _SPACES.sub(" ", title).strip()))

    sections: list[tuple[int, int, tuple[str, ...]]] = []
    first = heads[0][0] if heads else len(text)
    if first > 0:
        sections.append((0, first, ()))
    stack: list[tuple[int, str]] = []
    pending: int | None = None  # start of heading-only sections waiting to merge
    for i, (start, level, title) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        line_end = text.find("\n", start, end)
        body_blank = line_end == -1 or not text[line_end:end].strip()
        sec_start = start if pending is None else pending
        if body_blank and i + 1 < len(heads):
            pending = sec_start
            continue
        pending = None
        sections.append((sec_start, end, tuple(t for _, t in stack if t)))
    return sections


def _split(text: str, start: int, end: int, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """Yield trimmed (start, end) spans covering the content of ``text[start:end]``."""
    pos = _skip_space(text, start, end)
    stop = _trim_end(text, pos, end)
    prev_end = -1
    fresh = pos  # where the current chunk would start without overlap
    while pos < stop:
        if stop - pos <= size:
            yield pos, stop
            return
        content_end, resume = _find_cut(text, pos, stop, size)
        chunk_end = _trim_end(text, pos, content_end)
        if chunk_end <= prev_end:
            # Only whitespace followed the previous chunk inside this window, so
            # the overlapped chunk would add nothing new: start fresh instead.
            pos = fresh
            continue
        yield pos, chunk_end
        prev_end = chunk_end
        fresh = _skip_space(text, resume, stop)
        back = _overlap_start(text, pos, chunk_end, overlap) if overlap else None
        pos = fresh if back is None else min(back, fresh)


def _find_cut(text: str, pos: int, stop: int, size: int) -> tuple[int, int]:
    """Where to end the chunk starting at ``pos`` and where the next may begin."""
    limit = pos + size
    lowest = pos + max(1, size // 2)
    window_end = min(stop, limit + _LOOKAHEAD)
    for pattern in _BOUNDARIES:
        best: tuple[int, int] | None = None
        for m in pattern.finditer(text, lowest, window_end):
            if m.start("sep") > limit:
                break
            best = (m.start("sep"), m.end("sep"))
        if best is not None:
            return best
    cut = limit
    # Do not separate a combining mark from its base character unless forced.
    while cut > lowest and unicodedata.combining(text[cut]):
        cut -= 1
    return cut, cut


def _overlap_start(text: str, pos: int, chunk_end: int, overlap: int) -> int | None:
    """First sentence start, else word start, in the last ``overlap`` characters of the chunk.

    None when the window holds no character to start at (only whitespace).
    """
    lo = max(chunk_end - overlap, pos + 1)
    if lo >= chunk_end:
        return None
    for pattern in (_SENTENCE, _WORD):
        # Start a little before ``lo`` so a sentence end just before it is seen.
        for m in pattern.finditer(text, max(pos, lo - _LOOKAHEAD), chunk_end):
            q = _skip_space(text, m.end("sep"), chunk_end)
            if lo <= q < chunk_end:
                return q
    q = _skip_space(text, lo, chunk_end)
    return q if q < chunk_end else None


def _skip_space(text: str, i: int, end: int) -> int:
    while i < end and text[i].isspace():
        i += 1
    return i


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
