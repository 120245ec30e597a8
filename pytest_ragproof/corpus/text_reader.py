"""Plain text files (``.txt``, ``.text``): strict UTF-8, core install."""

from __future__ import annotations

from pytest_ragproof.corpus.types import DocumentFormat, Extracted, ReadFailure
from pytest_ragproof.textnorm import normalize_body


def decode_utf8(data: bytes) -> str:
    """Decode ``data`` as strict UTF-8 (a leading BOM is allowed) or raise ReadFailure.

    Guessing another encoding would silently produce mojibake that then ends up
    in generated questions; refusing with a byte offset lets the user re-encode.
    A NUL byte is valid UTF-8 but means the file is binary in disguise.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadFailure("not_utf8", f"invalid UTF-8 at byte {exc.start}") from None
    if "\x00" in text:
        raise ReadFailure("not_utf8", "contains NUL bytes (binary file?)")
    return text


class TextReader:
    """Reads UTF-8 text as is: no structure, no headings."""

    format: DocumentFormat = "text"
    extensions: tuple[str, ...] = (".txt", ".text")

    def read(self, data: bytes) -> Extracted:
        return Extracted(normalize_body(decode_utf8(data)))
