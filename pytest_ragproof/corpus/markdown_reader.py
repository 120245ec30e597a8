"""Markdown files (``.md``, ``.markdown``): strict UTF-8, core install.

The source is kept verbatim (no rendering): ATX headings (``# Title``) stay in
the text so the chunker can split on them and record each chunk's heading path.
"""

from __future__ import annotations

from pytest_ragproof.corpus.text_reader import decode_utf8
from pytest_ragproof.corpus.types import DocumentFormat, Extracted
from pytest_ragproof.textnorm import normalize_body


class MarkdownReader:
    """Reads Markdown source as UTF-8 text; headings are interpreted by the chunker."""

    format: DocumentFormat = "markdown"
    extensions: tuple[str, ...] = (".md", ".markdown")

    def read(self, data: bytes) -> Extracted:
        return Extracted(normalize_body(decode_utf8(data)))
