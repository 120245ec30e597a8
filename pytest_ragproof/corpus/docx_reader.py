"""DOCX files, through python-docx (the ``ingest`` extra), imported only inside the reader.

The body is walked in reading order (paragraphs and tables interleaved as in
the file). Headings become Markdown ATX lines (``## Title``) so the chunker can
follow them like Markdown; list paragraphs get a ``- `` marker; each table row
becomes one line of cells separated by `` | ``. Blocks are separated by a blank
line. Headers, footers, footnotes, comments and text boxes are not read.
"""

from __future__ import annotations

import io
import re
from typing import Any

from pytest_ragproof.corpus.types import DocumentFormat, Extracted, ReadFailure
from pytest_ragproof.errors import MissingExtraError
from pytest_ragproof.textnorm import normalize_body

_HEADING_STYLE = re.compile(r"heading\s*([1-9])$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


class DocxFileReader:
    """Reads paragraphs, headings and tables of a Word document body."""

    format: DocumentFormat = "docx"
    extensions: tuple[str, ...] = (".docx",)

    def read(self, data: bytes) -> Extracted:
        try:
            import docx
            from docx.table import Table
        except ImportError:
            raise MissingExtraError("ingest", "python-docx", "Reading DOCX files") from None

        # Broken zips and XML raise many exception types; see pdf_reader.
        try:
            document = docx.Document(io.BytesIO(data))
            blocks: list[str] = []
            for item in document.iter_inner_content():
                block = _table(item) if isinstance(item, Table) else _paragraph(item)
                if block.strip():
                    blocks.append(block)
        except Exception as exc:
            raise ReadFailure("corrupt", f"DOCX parser error ({type(exc).__name__})") from None
        return Extracted(normalize_body("\n\n".join(blocks)))


def _style_name(paragraph: Any) -> str:
    style = paragraph.style
    return str(style.name) if style is not None and style.name else ""


def _paragraph(paragraph: Any) -> str:
    # A heading spread over lines would end at its first line in Markdown.
    text = str(paragraph.text).strip()
    if not text:
        return ""
    style = _style_name(paragraph)
    if style.lower() == "title":
        return "# " + _SPACES.sub(" ", text)
    match = _HEADING_STYLE.match(style)
    if match:
        level = min(int(match.group(1)), 6)
        return "#" * level + " " + _SPACES.sub(" ", text)
    if style.lower().startswith("list"):
        return "- " + text
    return text


def _table(table: Any) -> str:
    lines: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        previous: Any = None
        for cell in row.cells:
            # python-docx repeats a horizontally merged cell once per grid column.
            if previous is not None and cell._tc is previous._tc:
                continue
            previous = cell
            cells.append(_SPACES.sub(" ", str(cell.text)).strip())
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)
