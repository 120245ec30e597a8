"""Text normalization shared by datasets and corpus ingest, and the natural order of ids.

The rules (docs/datasets.md): line endings become LF, Unicode becomes NFC, outer
whitespace and leading byte-order marks are stripped. Disallowed control
characters are *reported*, never rewritten: Unicode category Cc except tab and
line feed (carriage returns are normalized to LF first), and the bidi controls
U+202A–U+202E and U+2066–U+2069.
"""

from __future__ import annotations

import re
import unicodedata

BOM = "\ufeff"

# Cc = U+0000–U+001F and U+007F–U+009F; tab (09) and LF (0A) are allowed.
_DISALLOWED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_text(text: str) -> str:
    """Return ``text`` with LF line endings, NFC, outer whitespace and leading BOMs removed."""
    text = normalize_newlines(text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    text = text.strip()
    while text.startswith(BOM):
        text = text[1:].strip()
    return text


def normalize_body(text: str) -> str:
    """Like :func:`normalize_text` but keeps outer whitespace (document bodies, spans)."""
    text = normalize_newlines(text)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    while text.startswith(BOM):
        text = text[1:]
    return text


def find_disallowed_control(text: str) -> int | None:
    """Index of the first disallowed control character in ``text``, or None."""
    m = _DISALLOWED.search(text)
    return None if m is None else m.start()


def describe_char(ch: str) -> str:
    """A value-free description of one character, e.g. ``U+202E``."""
    return f"U+{ord(ch):04X}"


_NUMBER = re.compile(r"([0-9]+)")


def natural_key(text: str) -> tuple[tuple[str | int, ...], str]:
    """A sort key that orders the numbers inside ids by value: ``qa-1, qa-3, qa-11``.

    Text parts compare case-folded, digit runs as integers (text and numbers alternate
    at fixed positions, so they never meet); ids equal that way (``qa-01``, ``qa-1``)
    fall back to the plain text, so the order is total and stable.
    """
    parts = _NUMBER.split(text)
    return tuple(int(p) if i % 2 else p.casefold() for i, p in enumerate(parts)), text
