"""Canonical JSON, the dataset hash and the frozen file layout (PRODUCT.md §2).

The hash is sha256 over ``ragproof.dataset/1`` + NUL + the canonical JSON of the
case list (sorted keys, compact separators, UTF-8, normalized values).

A frozen file is laid out one case per line so that reviews diff well::

    {"format":"ragproof.dataset/1","schema_version":2,"sha256":"<hex>","cases":[
    {<case 1>},
    {<case 2>}
    ]}

Loading compares the file byte for byte with the layout its own parsed content
would produce, so every single-character change is refused: a change to a value
fails the hash, a change to layout or escaping fails the byte comparison.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

FORMAT = "ragproof.dataset/1"
HASH_DOMAIN = FORMAT.encode("ascii") + b"\x00"

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> str:
    """Canonical JSON text of a value: sorted keys, compact, UTF-8 characters kept."""
    return _ENCODER.encode(value)


def dataset_hash(case_jsons: Sequence[str]) -> str:
    """sha256 of the domain plus the canonical JSON list built from per-case texts."""
    digest = hashlib.sha256(HASH_DOMAIN + b"[")
    digest.update(",".join(case_jsons).encode("utf-8"))  # no concatenated copy of it all
    digest.update(b"]")
    return digest.hexdigest()


def frozen_header(schema_version: int, sha256: str) -> str:
    return f'{{"format":"{FORMAT}","schema_version":{schema_version},"sha256":"{sha256}","cases":['


def frozen_parts(case_jsons: Sequence[str], schema_version: int, sha256: str) -> tuple[str, ...]:
    """The exact text of a frozen file, in parts that concatenate to it."""
    return (frozen_header(schema_version, sha256) + "\n", ",\n".join(case_jsons), "\n]}\n")


def frozen_text(case_jsons: Sequence[str], schema_version: int, sha256: str) -> str:
    """The exact text of a frozen file."""
    return "".join(frozen_parts(case_jsons, schema_version, sha256))


# Unicode whitespace that str.strip() removes, beyond ASCII space (raw tabs and
# newlines cannot occur inside JSON strings, they are escaped).
_UNICODE_SPACES = tuple(chr(c) for c in range(0x80, 0x3001) if chr(c).isspace())
_SUSPECT_ESCAPES = ("\\r", "\\b", "\\f", "\\u00", '"\\n', '"\\t', '\\n"', '\\t"')
_NON_ASCII_CONTROLS = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")


def _unescaped_quote_before(text: str, pos: int) -> bool:
    """Is ``text[pos]`` (a quote) preceded by an even number of backslashes?"""
    n = 0
    while pos - n - 1 >= 0 and text[pos - n - 1] == "\\":
        n += 1
    return n % 2 == 0


def values_may_be_non_canonical(text: str) -> bool:
    """Cheap whole-text screen of a canonical frozen file's string values.

    Returns False only when no string value can hold outer whitespace, a
    disallowed control character, a BOM or a non-NFC sequence. True means
    "check each record exactly" (false alarms only cost time). This relies on the
    text already matching the canonical layout: compact JSON, ``ensure_ascii=False``.
    """
    if ' "' in text:
        return True
    # Every other suspect pattern holds a backslash: one scan usually rules them out.
    if "\\" in text and any(s in text for s in _SUSPECT_ESCAPES):
        return True
    # '" ' is an opening quote followed by a space unless the quote is escaped.
    start = text.find('" ')
    while start != -1:
        if _unescaped_quote_before(text, start):
            return True
        start = text.find('" ', start + 1)
    if text.isascii():
        return False
    if not unicodedata.is_normalized("NFC", text):
        return True
    if _NON_ASCII_CONTROLS.search(text):
        return True
    return any(ch in text for ch in _UNICODE_SPACES)
