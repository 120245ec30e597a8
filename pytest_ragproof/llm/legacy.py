"""The one-file-per-entry folder cache of earlier versions, imported once.

Layout ``<dir>/<k[0:2]>/<k[2:4]>/<k>.json`` (format ``ragproof.llmcache/1``): every
entry file is read, its entries written into the store in one transaction (an entry
the store already has is newer and kept), then the entry files are removed and the
shard folders once empty, so the migration happens once. Files of any other name
are left alone; unreadable entry files are dropped and counted.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragproof.llm.entries import STORE_NAME, CachedResponse, encode_entry, entry_checksum

if TYPE_CHECKING:
    import sqlite3

#: The entry format of the one-file-per-entry folder cache, read by the migration.
LEGACY_FORMAT = "ragproof.llmcache/1"
_HEX = frozenset("0123456789abcdef")


def has_folder_cache(root: Path) -> bool:
    """Does ``root`` hold ``<k[0:2]>`` folders of a folder cache (usually not)?"""
    return bool(_hex_dirs(root))


def import_folder(conn: sqlite3.Connection, root: Path) -> tuple[int, str | None]:
    """Import the folder cache in ``root`` into the store of ``conn``, if there is one.

    Returns the number of entries imported and the note to show (None when there was
    nothing of ours to import).
    """
    shards = _hex_dirs(root)
    if not shards:
        return 0, None
    import sqlite3

    rows: list[tuple[str, bytes, int]] = []
    done: list[Path] = []
    unreadable = 0
    for outer in shards:
        for inner in _hex_dirs(outer):
            for entry in _scandir(inner):
                name = entry.name
                path = Path(entry.path)
                if name.startswith(".tmp-") and name.endswith(".json"):
                    done.append(path)  # a write of the old layout that was cut short
                    continue
                key = name[:-5]
                if not (
                    name.endswith(".json")
                    and len(key) == 32
                    and set(key) <= _HEX
                    and key[:2] == outer.name
                    and key[2:4] == inner.name
                    and entry.is_file(follow_symlinks=False)
                ):
                    continue  # not ours: left alone
                try:
                    old = _parse_legacy(path.read_bytes(), key)
                except OSError:
                    continue
                done.append(path)
                if old is None:
                    unreadable += 1
                    continue
                value = encode_entry(old)
                rows.append((key, value, entry_checksum(key, value)))
    if not done:
        return 0, None  # only files that are not ours: nothing to import, nothing to remove
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # An entry the store already has is newer than the folder's.
            conn.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error:
        return 0, (
            f"LLM cache {root}: the entries of the folder cache could not be imported "
            "now; they stay in place and are tried again next run"
        )
    for path in done:
        with contextlib.suppress(OSError):
            path.unlink()
    for outer in shards:
        for inner in _hex_dirs(outer):
            with contextlib.suppress(OSError):
                inner.rmdir()  # only once empty
        with contextlib.suppress(OSError):
            outer.rmdir()
    skipped = f", {unreadable} unreadable one(s) dropped" if unreadable else ""
    return len(rows), (
        f"LLM cache {root}: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} of the "
        f"folder cache of earlier versions imported into {STORE_NAME}{skipped}; "
        "their files were removed"
    )


def _scandir(folder: Path | os.DirEntry[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _hex_dirs(folder: Path) -> list[Path]:
    return [
        Path(e.path)
        for e in _scandir(folder)
        if len(e.name) == 2 and set(e.name) <= _HEX and e.is_dir(follow_symlinks=False)
    ]


def _parse_legacy(raw: bytes, key: str) -> CachedResponse | None:
    """An entry file of the folder layout (``ragproof.llmcache/1``), or None."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("format") != LEGACY_FORMAT:
        return None
    if entry.get("key") != key:
        return None
    text = entry.get("text")
    usage = entry.get("usage")
    if not (text is None or isinstance(text, str)) or not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    if type(prompt) is not int or type(completion) is not int:
        return None
    priced = entry.get("priced")
    if priced is not None and not isinstance(priced, bool):
        return None
    return CachedResponse(text, prompt, completion, priced)
