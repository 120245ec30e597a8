"""On-disk cache of LLM responses, one small JSON file per request key.

Layout: ``<root>/<k[0:2]>/<k[2:4]>/<k>.json`` where ``k`` is the xxh3_128 hex
digest of a canonical JSON of (model, prompt version, messages, parameters,
response schema). The file holds the raw completion text, its token usage and
whether litellm knew its price. Structured calls store only replies that
validated (see :mod:`pytest_ragproof.llm.client`).

Why it is safe without locks: every write goes to a temporary file in the same
directory and is moved into place with ``os.replace``, which is atomic on POSIX
and Windows, so readers (other xdist workers, other processes) see either no
entry or a whole one. Two writers of the same key write the same request's answer;
the last one wins and nothing is lost. An unreadable entry is treated as a miss
and overwritten by the next successful call.

This module must never import litellm: a fully cached run does not pay for it.
API keys, headers and the API base never enter keys or files.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

if TYPE_CHECKING:  # argparse is only needed by CLIs, which import it themselves
    import argparse

CACHE_ENV = "RAGPROOF_CACHE_DIR"
DEFAULT_DIR = ".ragproof_cache"
ENTRY_FORMAT = "ragproof.llmcache/1"
_KEY_DOMAIN = b"ragproof.llm.key/1\x00"


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
) -> str:
    """The hex key of one request. Callers pass only non-secret parameters."""
    canonical = json.dumps(
        {
            "model": model,
            "prompt_version": prompt_version,
            "messages": list(messages),
            "params": dict(params),
            "schema": schema,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return xxhash.xxh3_128_hexdigest(_KEY_DOMAIN + canonical.encode("utf-8"))


class ResponseCache:
    """Reads and writes cache entries; a disabled cache misses and never writes.

    The directory is created on the first write only, so a run that never calls a
    model leaves no folder behind.
    """

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None, *, enabled: bool = True):
        self.root = resolve_cache_dir(cache_dir)
        self.enabled = enabled
        self.corrupt_entries = 0

    def __repr__(self) -> str:
        return f"ResponseCache(root={str(self.root)!r}, enabled={self.enabled})"

    def path_for(self, key: str) -> Path:
        return self.root / key[0:2] / key[2:4] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        """The entry for ``key``, or None when absent, disabled or unreadable."""
        if not self.enabled:
            return None
        try:
            raw = self.path_for(key).read_bytes()
        except OSError:
            return None
        entry = _parse_entry(raw, key)
        if entry is None:
            self.corrupt_entries += 1
        return entry

    def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response`` under ``key`` atomically (no-op when disabled)."""
        if not self.enabled:
            return
        target = self.path_for(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(
            {
                "format": ENTRY_FORMAT,
                "key": key,
                "priced": response.priced,
                "text": response.text,
                "usage": {
                    "prompt_tokens": response.prompt_tokens,
                    "completion_tokens": response.completion_tokens,
                },
            },
            ensure_ascii=False,
            sort_keys=True,
        ).encode("utf-8")
        # A unique name per process and attempt (O_EXCL), without importing tempfile:
        # a cache hit should cost as few imports as possible.
        tmp = target.parent / f".tmp-{os.getpid()}-{os.urandom(8).hex()}.json"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            # Never leave a half-written temp file behind, whatever interrupted us.
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _parse_entry(raw: bytes, key: str) -> CachedResponse | None:
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("format") != ENTRY_FORMAT:
        return None
    if entry.get("key") != key:
        return None
    text = entry.get("text")
    usage = entry.get("usage")
    if not (text is None or isinstance(text, str)) or not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    priced = entry.get("priced")
    if priced is not None and not isinstance(priced, bool):
        return None
    return CachedResponse(text, prompt, completion, priced)


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Explicit ``cache_dir`` > ``RAGPROOF_CACHE_DIR`` > ``./.ragproof_cache``."""
    if cache_dir is not None and str(cache_dir):
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path.cwd() / DEFAULT_DIR


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--cache-dir`` and ``--no-cache`` to a CLI parser."""
    parser.add_argument(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help=f"LLM response cache folder (default: ${CACHE_ENV} or ./{DEFAULT_DIR})",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the LLM response cache",
    )


def cache_from_args(args: argparse.Namespace) -> ResponseCache:
    """The cache selected by the options added with :func:`add_cache_arguments`."""
    return ResponseCache(
        getattr(args, "cache_dir", None), enabled=not getattr(args, "no_cache", False)
    )
