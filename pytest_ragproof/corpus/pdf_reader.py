"""PDF files, through pypdf (the ``ingest`` extra), imported only inside :meth:`PdfFileReader.read`.

Pages are extracted in order, each normalized and stripped of outer whitespace,
and joined with a blank line so that a page break is also a paragraph break for
the chunker. The offset where each page starts is kept as ``page_starts``.
"""

from __future__ import annotations

import io

from pytest_ragproof.corpus.types import DocumentFormat, Extracted, ReadFailure
from pytest_ragproof.errors import MissingExtraError
from pytest_ragproof.textnorm import normalize_body

PAGE_SEPARATOR = "\n\n"


class PdfFileReader:
    """Reads the text layer of a PDF; scanned pages without one yield no text."""

    format: DocumentFormat = "pdf"
    extensions: tuple[str, ...] = (".pdf",)

    def read(self, data: bytes) -> Extracted:
        try:
            import pypdf
            from pypdf.errors import DependencyError
        except ImportError:
            raise MissingExtraError("ingest", "pypdf", "Reading PDF files") from None

        # Parsers of untrusted files fail with many exception types (KeyError,
        # ValueError, struct errors, ...); any of them means "corrupt", and only
        # the type name is reported, never the message, which may quote content.
        try:
            reader = pypdf.PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")
                except DependencyError:
                    raise ReadFailure(
                        "encrypted", "decrypting needs the 'cryptography' package"
                    ) from None
                # Many PDFs are encrypted only with an owner password (restricting
                # printing/editing) and open for everyone; those are read.
                if opened == pypdf.PasswordType.NOT_DECRYPTED:
                    raise ReadFailure("encrypted", "needs a password to open")
            pages = [page.extract_text() or "" for page in reader.pages]
        except ReadFailure:
            raise
        except Exception as exc:
            raise ReadFailure("corrupt", f"PDF parser error ({type(exc).__name__})") from None
        return join_pages(pages)


def join_pages(pages: list[str]) -> Extracted:
    """Normalize each page and join them, recording where every page starts."""
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for raw in pages:
        text = normalize_body(raw).strip()
        if parts:
            offset += len(PAGE_SEPARATOR)
        starts.append(offset)
        parts.append(text)
        offset += len(text)
    return Extracted(PAGE_SEPARATOR.join(parts), tuple(starts))
