"""Corpus ingest: turn a folder (or one file) into normalized documents.

TXT and Markdown are read by the core install; PDF (pypdf) and DOCX
(python-docx) need ``pip install 'pytest-ragproof[ingest]'`` and are imported
only when a file of that format is read. See docs/corpus.md.
"""

from __future__ import annotations

from pytest_ragproof.corpus.loader import DEFAULT_MAX_FILE_BYTES, READERS, load_corpus, reader_for
from pytest_ragproof.corpus.types import (
    SKIP_REASON_HELP,
    SKIP_REASONS,
    Corpus,
    Document,
    DocumentFormat,
    Extracted,
    Reader,
    ReadFailure,
    SkippedFile,
    SkipReason,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "READERS",
    "SKIP_REASONS",
    "SKIP_REASON_HELP",
    "Corpus",
    "Document",
    "DocumentFormat",
    "Extracted",
    "ReadFailure",
    "Reader",
    "SkipReason",
    "SkippedFile",
    "load_corpus",
    "reader_for",
]
