"""Canonical JSON, the dataset hash, case digests and the frozen file layout.

The dataset hash is sha256 over ``ragproof.dataset/1`` + NUL + the canonical JSON
of the case list (sorted keys, compact separators, UTF-8, normalized values). Its
domain stays ``ragproof.dataset/1`` in every frozen format, so the same cases hash
the same whether frozen in format 1 or 2 (results and baselines keep comparing).

A case digest is sha256 over ``ragproof.case/1`` + NUL + the canonical JSON of one
case. Format ``ragproof.dataset/2`` stores one per case, beside its id, so a
modified file can be refused with the ids of the cases that changed.

A frozen file is laid out one case per line so that reviews diff well::

    {"format":"ragproof.dataset/2","schema_version":2,"sha256":"<hex>","cases":[
    {<case 1>},
    {<case 2>}
    ],"digests":[
    ["<id 1>","<digest 1>"],
    ["<id 2>","<digest 2>"]
    ]}

Format 1 (still read) ends after the cases with ``]}``. Loading compares the file
byte for byte with the layout its own parsed content would produce, so every
single-character change is refused: a change to a value fails the digests and the
hash, a change to layout or escaping fails the byte comparison.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

FORMAT = "ragproof.dataset/2"
FORMAT_V1 = "ragproof.dataset/1"
FORMATS = (FORMAT_V1, FORMAT)
HASH_DOMAIN = FORMAT_V1.encode("ascii") + b"\x00"
CASE_DOMAIN = b"ragproof.case/1\x00"

_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def _make_fast_encoder() -> Any:
    """The C encoder behind ``_ENCODER``, made once instead of on every call.

    ``JSONEncoder.encode`` builds a new C encoder per call, a third of the cost of
    encoding one case. Same output (the tests compare them); no circular-reference
    check, since canonical values come from normalization, which refuses cycles.
    """
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - a Python without the C accelerator
        return None
    return make(
        None, _ENCODER.default, encoder.encode_basestring, None, ":", ",", True, False, False
    )


_FAST = _make_fast_encoder()


def canonical_json(value: Any) -> str:
    """Canonical JSON text of a value: sorted keys, compact, UTF-8 characters kept."""
    if _FAST is None:  # pragma: no cover
        return _ENCODER.encode(value)
    return "".join(_FAST(value, 0))


def dataset_hash(case_jsons: Sequence[str]) -> str:
    """sha256 of the domain plus the canonical JSON list built from per-case texts."""
    digest = hashlib.sha256(HASH_DOMAIN + b"[")
    digest.update(",".join(case_jsons).encode("utf-8"))  # no concatenated copy of it all
    digest.update(b"]")
    return digest.hexdigest()


def case_digests(case_jsons: Sequence[str]) -> list[str]:
    """The digest of each case: sha256 of the case domain plus its canonical JSON."""
    seeded = hashlib.sha256(CASE_DOMAIN)  # copied per case: the domain is hashed once
    out = []
    for text in case_jsons:
        h = seeded.copy()
        h.update(text.encode("utf-8"))
        out.append(h.hexdigest())
    return out


def frozen_header(schema_version: int, sha256: str, fmt: str = FORMAT) -> str:
    return f'{{"format":"{fmt}","schema_version":{schema_version},"sha256":"{sha256}","cases":['


def digest_lines(ids: Sequence[Any], digests: Sequence[str]) -> str:
    """The ``digests`` entries of a format-2 file, one ``["<id>","<digest>"]`` per line."""
    if len(ids) != len(digests):
        raise ValueError("one digest per id")
    if all(type(case_id) is str for case_id in ids):
        joined = "".join(ids)
        # Printable ASCII without quote or backslash encodes as itself in quotes.
        if joined.isascii() and joined.isprintable() and '"' not in joined and "\\" not in joined:
            return ",\n".join([f'["{i}","{d}"]' for i, d in zip(ids, digests, strict=True)])
    encode = _ENCODER.encode
    return ",\n".join(
        [f'[{encode(case_id)},"{digest}"]' for case_id, digest in zip(ids, digests, strict=True)]
    )


def frozen_parts(
    case_jsons: Sequence[str],
    schema_version: int,
    sha256: str,
    ids: Sequence[Any] | None = None,
    *,
    fmt: str = FORMAT,
    digests: Sequence[str] | None = None,
) -> tuple[str, ...]:
    """The exact text of a frozen file, in parts that concatenate to it.

    ``ids`` (each case's id) is needed for format 2; when None it is read back from
    the case texts. ``digests`` may pass digests already computed.
    """
    header = frozen_header(schema_version, sha256, fmt) + "\n"
    cases = ",\n".join(case_jsons)
    if fmt == FORMAT_V1:
        return (header, cases, "\n]}\n")
    if ids is None:
        ids = [_id_of(text) for text in case_jsons]
    if digests is None:
        digests = case_digests(case_jsons)
    return (header, cases, '\n],"digests":[\n', digest_lines(ids, digests), "\n]}\n")


def _id_of(case_json: str) -> Any:
    value = json.loads(case_json)
    return value.get("id") if isinstance(value, dict) else None


def frozen_text(
    case_jsons: Sequence[str],
    schema_version: int,
    sha256: str,
    ids: Sequence[Any] | None = None,
    *,
    fmt: str = FORMAT,
    digests: Sequence[str] | None = None,
) -> str:
    """The exact text of a frozen file."""
    return "".join(frozen_parts(case_jsons, schema_version, sha256, ids, fmt=fmt, digests=digests))


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
