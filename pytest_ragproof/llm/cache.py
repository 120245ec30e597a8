"""The LLM response cache: one SQLite file, shared by processes, checked entry by entry.

Layout: ``<cache dir>/llm-cache.sqlite3``, a table of (key, value, checksum); what
each is lives in :mod:`pytest_ragproof.llm.entries` (re-exported here). Structured
calls store only replies that validated (see :mod:`pytest_ragproof.llm.client`).

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

Migration: a cache folder of the one-file-per-entry layout of earlier versions is
imported on first use (:mod:`pytest_ragproof.llm.legacy`).

Just over the 400-line habit: one responsibility, the store (opening and setting
aside, reads and writes with their busy retries, damage counting, notes), plus the
re-exports of :mod:`.entries` that keep ``pytest_ragproof.llm.cache`` the one import
path callers use. This module must never import litellm: a fully cached run does not
pay for it.
API keys, headers and the API base never enter keys or files.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.llm.entries import (
    STORE_NAME,
    CachedResponse,
    cache_key,
    canonical_json,
    decode_entry,
    encode_entry,
    entry_checksum,
)
from pytest_ragproof.llm.legacy import LEGACY_FORMAT, has_folder_cache, import_folder

__all__ = [
    "BUSY_RETRIES",
    "BUSY_TIMEOUT_S",
    "CACHE_ENV",
    "DEFAULT_DIR",
    "LEGACY_FORMAT",
    "STORE_FORMAT",
    "STORE_NAME",
    "CachedResponse",
    "ResponseCache",
    "add_cache_arguments",
    "cache_from_args",
    "cache_key",
    "canonical_json",
    "decode_entry",
    "encode_entry",
    "entry_checksum",
    "resolve_cache_dir",
]

if TYPE_CHECKING:  # argparse is only needed by CLIs, which import it themselves
    import argparse
    import sqlite3

CACHE_ENV = "RAGPROOF_CACHE_DIR"
DEFAULT_DIR = ".ragproof_cache"
STORE_FORMAT = "ragproof.llmcache/2"

#: How long one statement waits for another process's write lock (SQLite's busy
#: handler), and how often a still-busy write is tried again before it is dropped.
BUSY_TIMEOUT_S = 10.0
BUSY_RETRIES = 5

# SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xFF``).
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS entries ("
    "key TEXT PRIMARY KEY, value BLOB NOT NULL, checksum INTEGER NOT NULL) WITHOUT ROWID",
)


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
            if not create and not self.path.exists() and not has_folder_cache(self.root):
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
        """Import a one-file-per-entry folder cache once (see :mod:`.legacy`).

        Called with the lock held, before the connection serves anything."""
        imported, note = import_folder(conn, self.root)
        self.migrated_entries += imported
        if note is not None:
            self._events.append(note)


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
