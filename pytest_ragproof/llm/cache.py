"""The LLM response cache: one SQLite file, shared by processes, checked entry by entry.

Layout: ``<cache dir>/llm-cache.sqlite3``, a table of (key, value, checksum) where
``key`` is the xxh3_128 hex digest of a canonical JSON of (model, prompt version,
messages, parameters, response schema), ``value`` a small JSON of the completion text,
its token usage and whether litellm knew its price, and ``checksum`` the xxh3_64 of
key and value. Structured calls store only replies that validated (see
:mod:`pytest_ragproof.llm.client`).

Sharing: the store runs in SQLite's WAL mode, so readers never wait for a writer and
xdist workers, parallel processes and CI jobs that restored the same cache can use it
at once. Every write is one short transaction (``INSERT OR REPLACE`` of one entry),
atomic by SQLite's own journal; a writer that finds the store busy waits
(``busy_timeout``) and retries a few times, and a write that still cannot be made is
dropped and counted (a cache write never fails a run). When its last connection
closes, SQLite folds the WAL back into the one file.

Damage: an entry whose checksum does not match, whose value does not parse, or whose
page SQLite reports as corrupt (a truncated or damaged file) is a miss, counted in
:attr:`ResponseCache.corrupt_entries` and reported by :meth:`ResponseCache.notes`;
it is never served. A file that SQLite cannot open as a database at all is ours (it
has our name in our cache folder): it is set aside as ``llm-cache.sqlite3.corrupt``
and a new store is started. A SQLite database that is not a ragproof cache (no
``ragproof.llmcache/2`` marker) is never touched: the cache is off for the run, with
a note.

Migration: a cache folder of the one-file-per-entry layout of earlier versions
(``<dir>/<k[0:2]>/<k[2:4]>/<k>.json``) is imported on first use; each imported (or
unreadable) entry file is then removed, and the shard folders once empty, so the
migration happens once and the folder ends up holding the one file. Files of any
other name are left alone.

This module must never import litellm: a fully cached run does not pay for it.
API keys, headers and the API base never enter keys or files.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

if TYPE_CHECKING:  # argparse is only needed by CLIs, which import it themselves
    import argparse
    import sqlite3

CACHE_ENV = "RAGPROOF_CACHE_DIR"
DEFAULT_DIR = ".ragproof_cache"
STORE_NAME = "llm-cache.sqlite3"
STORE_FORMAT = "ragproof.llmcache/2"
#: The entry format of the one-file-per-entry folder cache, read by the migration.
LEGACY_FORMAT = "ragproof.llmcache/1"
_KEY_DOMAIN = b"ragproof.llm.key/1\x00"
_SUM_DOMAIN = b"ragproof.llm.entry/2\x00"

#: How long one statement waits for another process's write lock (SQLite's busy
#: handler), and how often a still-busy write is tried again before it is dropped.
BUSY_TIMEOUT_S = 10.0
BUSY_RETRIES = 5

# SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``).
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26
_HEX = frozenset("0123456789abcdef")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS entries ("
    "key TEXT PRIMARY KEY, value BLOB NOT NULL, checksum INTEGER NOT NULL) WITHOUT ROWID",
)


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


class _Unusable(Exception):
    """The store cannot be used for this run (the message is the note)."""


_OPEN: weakref.WeakSet[ResponseCache] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # A store closed by its last connection is one file again (the WAL folded back).
    for cache in list(_OPEN):
        cache.close()


class ResponseCache:
    """Reads and writes cache entries; a disabled cache misses and never writes.

    The folder and the store are created on the first write only, so a run that never
    calls a model leaves nothing behind. Safe to use from several threads.
    """

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None, *, enabled: bool = True):
        self.root = resolve_cache_dir(cache_dir)
        self.path = self.root / STORE_NAME
        self.enabled = enabled
        #: Entries found damaged (checksum, value or SQLite page): served as misses.
        self.corrupt_entries = 0
        #: Writes dropped because the store stayed busy or is damaged.
        self.dropped_writes = 0
        #: Entries imported from a folder cache of an earlier version.
        self.migrated_entries = 0
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._unusable: str | None = None
        self._events: list[str] = []

    def __repr__(self) -> str:
        return f"ResponseCache(root={str(self.root)!r}, enabled={self.enabled})"

    # -- entries ------------------------------------------------------------
    def get(self, key: str) -> CachedResponse | None:
        """The entry for ``key``, or None when absent, disabled or damaged."""
        if not self.enabled:
            return None
        conn = self._conn or self._open(create=False)
        if conn is None:
            return None
        import sqlite3

        row: Any = None
        for attempt in range(BUSY_RETRIES + 1):
            try:
                with self._lock:
                    row = conn.execute(
                        "SELECT value, checksum FROM entries WHERE key = ?", (key,)
                    ).fetchone()
                break
            except sqlite3.ProgrammingError:
                return None  # closed meanwhile (the end of the run): a miss
            except sqlite3.Error as exc:
                if _is_busy(exc):
                    if attempt < BUSY_RETRIES:
                        _pause(attempt)
                        continue
                    return None  # still busy: a miss, asked again
                self.corrupt_entries += 1  # an unreadable page: a miss
                return None
        if row is None:
            return None
        value, checksum = row
        if not isinstance(value, bytes) or checksum != entry_checksum(key, value):
            self.corrupt_entries += 1
            return None
        entry = decode_entry(value)
        if entry is None:
            self.corrupt_entries += 1
        return entry

    def put(self, key: str, response: CachedResponse) -> None:
        """Store ``response`` under ``key`` in one transaction (no-op when disabled)."""
        if not self.enabled:
            return
        conn = self._conn or self._open(create=True)
        if conn is None:
            return
        import sqlite3

        value = encode_entry(response)
        row = (key, value, entry_checksum(key, value))
        for attempt in range(BUSY_RETRIES + 1):
            try:
                with self._lock:
                    conn.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)", row)
                return
            except sqlite3.ProgrammingError:
                # Closed meanwhile by another thread: open it again for this write.
                reopened = self._open(create=True)
                if reopened is None or attempt == BUSY_RETRIES:
                    self.dropped_writes += 1
                    return
                conn = reopened
            except sqlite3.Error as exc:
                if _is_busy(exc) and attempt < BUSY_RETRIES:
                    _pause(attempt)
                    continue
                self.dropped_writes += 1
                return

    def close(self) -> None:
        """Close the store (the last connection to close folds the WAL into the file)."""
        with self._lock:  # no statement of another thread runs while it closes
            conn, self._conn = self._conn, None
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        _OPEN.discard(self)

    def notes(self) -> list[str]:
        """What went wrong or was done to the store, in a sentence each (for summaries)."""
        out = list(self._events)
        if self._unusable is not None:
            out.append(self._unusable)
        if self.corrupt_entries:
            out.append(
                f"LLM cache {self.path}: {self.corrupt_entries} damaged entr"
                f"{'y was' if self.corrupt_entries == 1 else 'ies were'} not served "
                "(checksum or SQLite page); treated as misses and asked again"
            )
        if self.dropped_writes:
            out.append(
                f"LLM cache {self.path}: {self.dropped_writes} answer(s) could not be "
                "stored (the store stayed busy or is damaged); a re-run asks for them again"
            )
        return out

    # -- the store ----------------------------------------------------------
    def _open(self, *, create: bool) -> sqlite3.Connection | None:
        """The connection, opened on first use; None while there is nothing to read."""
        with self._lock:
            if self._conn is not None:
                return self._conn
            if self._unusable is not None:
                return None
            if not create and not self.path.exists() and not _legacy_shards(self.root):
                return None  # nothing to read yet (another process may create it)
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                conn = self._connect()
            except _Unusable as exc:
                self._unusable = str(exc)
                return None
            self._migrate(conn)  # before any other thread reads through this connection
            self._conn = conn
            _OPEN.add(self)
        return conn

    def _connect(self) -> sqlite3.Connection:
        import sqlite3

        for attempt in range(BUSY_RETRIES + 2):
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                _prepare(conn, self.path)
                return conn
            except sqlite3.Error as exc:
                conn.close()
                if _is_busy(exc) and attempt < BUSY_RETRIES:
                    _pause(attempt)
                    continue
                code = _code(exc)
                if code not in (_SQLITE_NOTADB, _SQLITE_CORRUPT) or attempt > BUSY_RETRIES:
                    raise _Unusable(
                        f"LLM cache {self.path} cannot be opened ({_errname(exc)}): the cache is "
                        "off for this run"
                    ) from None
                self._set_aside()
            except BaseException:
                conn.close()
                raise
        raise _Unusable(f"LLM cache {self.path} cannot be opened: the cache is off for this run")

    def _set_aside(self) -> None:
        """Move a store SQLite cannot open (and its WAL files) aside, once per damaged file.

        Processes that find the same damaged file at once take turns on an ``flock``
        of it; a later one finds the path already holding another file and leaves it.
        """
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return  # another process moved it already
        except OSError as exc:
            raise _Unusable(
                f"LLM cache {self.path} is not a usable database and cannot be read "
                f"({type(exc).__name__}): the cache is off for this run"
            ) from None
        try:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows: the rename below fails instead
                pass
            else:
                fcntl.flock(fd, fcntl.LOCK_EX)
            mine = os.fstat(fd)
            try:
                now = os.stat(self.path)
            except FileNotFoundError:
                return
            if (mine.st_dev, mine.st_ino) != (now.st_dev, now.st_ino):
                return  # already replaced by a new store
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            os.replace(self.path, aside)
        except OSError as exc:
            raise _Unusable(
                f"LLM cache {self.path} is not a usable database and could not be set aside "
                f"({type(exc).__name__}): the cache is off for this run"
            ) from None
        finally:
            os.close(fd)
        self._events.append(
            f"LLM cache {self.path} was not a usable database (damaged or truncated): "
            f"set aside as {aside.name} and a new cache started"
        )

    # -- migration of the folder layout -------------------------------------
    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Import a one-file-per-entry folder cache once, then remove its entry files.

        Called with the lock held, before the connection serves anything."""
        shards = _legacy_shards(self.root)
        if not shards:
            return
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
            return  # only files that are not ours: nothing to import, nothing to remove
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
            self._events.append(
                f"LLM cache {self.root}: the entries of the folder cache could not be imported "
                "now; they stay in place and are tried again next run"
            )
            return
        for path in done:
            with contextlib.suppress(OSError):
                path.unlink()
        for outer in shards:
            for inner in _hex_dirs(outer):
                with contextlib.suppress(OSError):
                    inner.rmdir()  # only once empty
            with contextlib.suppress(OSError):
                outer.rmdir()
        self.migrated_entries += len(rows)
        skipped = f", {unreadable} unreadable one(s) dropped" if unreadable else ""
        self._events.append(
            f"LLM cache {self.root}: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} of the "
            f"folder cache of earlier versions imported into {STORE_NAME}{skipped}; "
            "their files were removed"
        )


def _prepare(conn: sqlite3.Connection, path: Path) -> None:
    """Check the store is ours (or empty, then make it ours) and switch it to WAL."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (STORE_FORMAT,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        tables = {"meta", "entries"}
    marker = None
    if {"meta", "entries"} <= tables:
        row = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        marker = None if row is None else row[0]
    if marker != STORE_FORMAT:
        what = "another format" if marker is None else f"format {marker}"
        raise _Unusable(
            f"LLM cache {path} is a SQLite database of {what}, not a ragproof "
            f"{STORE_FORMAT} cache: it is left untouched and the cache is off for this run "
            "(point --cache-dir / --ragproof-cache-dir elsewhere)"
        )
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    # WAL with synchronous=NORMAL: a commit is atomic and never corrupts the store; a
    # power cut may lose the last answers, which a cache can ask for again.
    conn.execute("PRAGMA synchronous=NORMAL")


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def _errname(exc: BaseException) -> str:
    return str(getattr(exc, "sqlite_errorname", None) or type(exc).__name__)


def _is_busy(exc: BaseException) -> bool:
    return _code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _pause(attempt: int) -> None:
    time.sleep(min(0.01 * 2**attempt, 0.5))


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


def _legacy_shards(root: Path) -> list[Path]:
    """The ``<k[0:2]>`` folders of a one-file-per-entry cache in ``root`` (usually none)."""
    return _hex_dirs(root)


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
