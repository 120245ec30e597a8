"""One cache entry: its key, its stored value and the checksum beside it.

``key`` is the xxh3_128 hex digest of a canonical JSON of (model, prompt version,
messages, parameters, response schema); ``value`` a small JSON array of the
completion text, its token usage and whether litellm knew its price; ``checksum``
the xxh3_64 of key and value. The store (:mod:`pytest_ragproof.llm.cache`) keeps
them; this module only says what they are. It never imports litellm.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import xxhash

#: The store's file name in the cache folder.
STORE_NAME = "llm-cache.sqlite3"
_KEY_DOMAIN = b"ragproof.llm.key/1\x00"
_SUM_DOMAIN = b"ragproof.llm.entry/2\x00"


@dataclass(frozen=True)
class CachedResponse:
    """What a cache entry holds: the completion text and what it cost in tokens.

    ``priced`` says whether litellm knew the price of the call that made the entry
    (None for entries written before this was recorded): a cached re-run reports
    the cost the same way as the run that paid for it.
    """

    text: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    priced: bool | None = None


def cache_key(
    *,
    model: str,
    prompt_version: str,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    schema_text: str | None = None,
) -> str:
    """The hex key of one request. Callers pass only non-secret parameters.

    The key hashes the canonical JSON (:func:`canonical_json`) of ``{"messages",
    "model", "params", "prompt_version", "schema"}``. It is written part by part in
    that key order, the same text as dumping the whole object, so that a caller
    sending one schema many times can pass its canonical text once made
    (``schema_text``, which must be ``canonical_json(schema)``).
    """
    canonical = "".join(
        (
            '{"messages":',
            canonical_json(list(messages)),
            ',"model":',
            canonical_json(model),
            ',"params":',
            canonical_json(dict(params)),
            ',"prompt_version":',
            canonical_json(prompt_version),
            ',"schema":',
            canonical_json(schema) if schema_text is None else schema_text,
            "}",
        )
    )
    return xxhash.xxh3_128_hexdigest(_KEY_DOMAIN + canonical.encode("utf-8"))


def canonical_json(value: Any) -> str:
    """``value`` as the key's JSON: keys sorted at every level, compact, not ASCII-escaped."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def entry_checksum(key: str, value: bytes) -> int:
    """The checksum stored beside an entry: xxh3_64 of key and value, as SQLite's int64."""
    digest = xxhash.xxh3_64_intdigest(_SUM_DOMAIN + key.encode("ascii") + b"\x00" + value)
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def encode_entry(response: CachedResponse) -> bytes:
    """The stored value of an entry (compact JSON)."""
    return json.dumps(
        [response.text, response.prompt_tokens, response.completion_tokens, response.priced],
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode("utf-8")


def decode_entry(value: bytes) -> CachedResponse | None:
    """The entry a stored value holds, or None when it is not one."""
    try:
        decoded = json.loads(value)
    except ValueError:
        return None
    if not isinstance(decoded, list) or len(decoded) != 4:
        return None
    text, prompt, completion, priced = decoded
    if not (text is None or isinstance(text, str)):
        return None
    if type(prompt) is not int or type(completion) is not int:
        return None
    if priced is not None and not isinstance(priced, bool):
        return None
    return CachedResponse(text, prompt, completion, priced)
