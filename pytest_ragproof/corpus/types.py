"""The data a corpus ingest produces, and the contract every format reader meets.

Kept free of pypdf, python-docx and pydantic so that importing it costs nothing:
the chunker and the CLI import these types, and the format libraries load only
inside the reader that needs them.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, get_args

from pytest_ragproof import defaults

DocumentFormat = Literal["text", "markdown", "pdf", "docx"]

# A small fixed vocabulary so reports can be counted, filtered and compared
# across runs; the free-form part lives in ``SkippedFile.detail``.
SkipReason = Literal[
    "hidden",
    "unknown_extension",
    "not_regular_file",
    "too_large",
    "unreadable",
    "missing_extra",
    "encrypted",
    "corrupt",
    "not_utf8",
    "no_text",
]
SKIP_REASONS: tuple[SkipReason, ...] = get_args(SkipReason)

SKIP_REASON_HELP: dict[SkipReason, str] = {
    "hidden": "name starts with '.' (hidden files and folders are never read)",
    "unknown_extension": "no reader for this file extension",
    "not_regular_file": "not a regular file (symlinked folder, FIFO, socket, device)",
    "too_large": "file is over the size cap (--max-file-bytes)",
    "unreadable": "the operating system refused to read it (permissions, I/O error)",
    "missing_extra": "the reader needs an optional extra: pip install 'pytest-ragproof[ingest]'",
    "encrypted": "encrypted PDF that does not open with an empty password",
    "corrupt": "the file could not be parsed",
    "not_utf8": "not UTF-8 text",
    "no_text": "no text after extraction and normalization",
}


@dataclass(frozen=True, slots=True)
class Document:
    """One readable corpus file, as normalized text.

    ``id`` is the path relative to the corpus root with ``/`` separators (NFC),
    or the file name when the corpus is a single file. ``text`` follows the
    dataset rules (NFC, LF line endings, no leading BOM) so chunk spans index
    exactly this string. ``page_starts`` holds, for paged formats (PDF), the
    offset in ``text`` where each page begins: page ``i + 1`` starts at
    ``page_starts[i]``. It is empty for formats without pages.
    """

    id: str
    text: str
    format: DocumentFormat
    size_bytes: int
    page_starts: tuple[int, ...] = ()

    @property
    def page_count(self) -> int | None:
        """Number of pages for paged formats, None otherwise."""
        return len(self.page_starts) if self.page_starts else None

    def page_at(self, offset: int) -> int | None:
        """The 1-based page holding character ``offset`` of ``text``, or None if unpaged."""
        if not self.page_starts:
            return None
        if not 0 <= offset <= len(self.text):
            raise ValueError(f"offset {offset} is outside the document (0..{len(self.text)})")
        return max(1, bisect.bisect_right(self.page_starts, offset))


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A path under the corpus root that contributes nothing, and why.

    ``detail`` is short and value-free: it may name an exception type, a size
    or a byte offset, never any text from the file.
    """

    id: str
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class Corpus:
    """Everything :func:`load_corpus` found: documents and skips, both sorted by id."""

    root: Path
    documents: tuple[Document, ...]
    skipped: tuple[SkippedFile, ...]
    max_file_bytes: int = field(default=defaults.MAX_FILE_BYTES)

    def skip_counts(self) -> dict[SkipReason, int]:
        """Skipped paths per reason, in the fixed vocabulary order, zero counts left out."""
        counts = Counter(s.reason for s in self.skipped)
        return {reason: counts[reason] for reason in SKIP_REASONS if counts[reason]}

    def document(self, document_id: str) -> Document:
        """The document with this id; KeyError when there is none."""
        for doc in self.documents:
            if doc.id == document_id:
                return doc
        raise KeyError(document_id)


@dataclass(frozen=True, slots=True)
class Extracted:
    """What a reader returns: raw text in reading order, plus page offsets for paged formats.

    Readers return text already normalized with ``textnorm.normalize_body`` so
    that ``page_starts`` index the final document text.
    """

    text: str
    page_starts: tuple[int, ...] = ()


class ReadFailure(Exception):
    """Raised by a reader when a file cannot contribute; becomes a :class:`SkippedFile`."""

    def __init__(self, reason: SkipReason, detail: str) -> None:
        self.reason: SkipReason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}")


class Reader(Protocol):
    """One file format. ``read`` turns a file's bytes into normalized text.

    A reader raises :class:`ReadFailure` for files it cannot use and
    :class:`~pytest_ragproof.errors.MissingExtraError` when its optional
    library is not installed; it never prints and never puts file text into
    an error.
    """

    @property
    def format(self) -> DocumentFormat: ...

    @property
    def extensions(self) -> tuple[str, ...]: ...

    def read(self, data: bytes) -> Extracted: ...
