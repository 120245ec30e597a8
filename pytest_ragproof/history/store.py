"""A history store: one SQL layer (SQLAlchemy Core) over SQLite and PostgreSQL.

:func:`open_store` connects, refuses what is not a store of ours (a file that is not
a SQLite database, a schema newer than this code), brings an older schema up to
date (:mod:`.schema`) and returns a :class:`Store`. :meth:`Store.add` records one
results document in one transaction: a process killed in the middle (``kill -9``)
leaves the store as it was before, readable.

SQLite settings, per connection: WAL journal (readers never wait for the writer),
a busy timeout (two writers, e.g. two pytest processes, queue instead of failing),
foreign keys on, and ``BEGIN IMMEDIATE`` for every write transaction (the writer
takes the lock up front, so two writers never deadlock upgrading a read lock).
Commands that only read (``create=False``) open a SQLite store read-only
(``mode=ro``): they never write into it, and a store on a read-only mount can be
read. A WAL database read-only needs its ``-shm`` file, which a read-only file
system cannot create; there the file is opened ``immutable=1`` (nothing can change
it), refused if a non-empty ``-wal`` file holds writes not yet folded in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import HistoryError, MissingExtraError
from pytest_ragproof.history.integrity import check_sqlite_file, version_row
from pytest_ragproof.history.target import Target

if TYPE_CHECKING:
    from pathlib import Path

    import sqlalchemy as sa

    from pytest_ragproof.history.schema import Tables
    from pytest_ragproof.results.models import Results

__all__ = ["Added", "Store", "open_store"]

BUSY_TIMEOUT_MS = 30_000
_WRITE = "ragproof_write"


@dataclass(frozen=True)
class Added:
    """What :meth:`Store.add` did: the run's id, and whether it was new to the store."""

    run_id: str
    new: bool
    cases: int


def _import_sqlalchemy() -> None:
    """MissingExtraError, with the install command, when SQLAlchemy is not installed."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        raise MissingExtraError("history", "sqlalchemy", "The run history") from None


def _on_read_only_fs(path: Path) -> bool:
    import os

    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def _read_only_uri(target: Target) -> str:
    """The SQLite URI that opens ``target`` read-only (see the module docstring)."""
    assert target.path is not None
    path = target.path.resolve()
    uri = path.as_uri() + "?mode=ro"
    if _on_read_only_fs(path):
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise HistoryError(
                f"history store {target.shown} is on a read-only file system with writes not "
                f"yet folded into it ({wal.name}); open it once where it is writable"
            )
        uri += "&immutable=1"
    return uri


def _read_only_engine(target: Target) -> sa.Engine:
    import sqlite3

    import sqlalchemy as sa

    uri = _read_only_uri(target)

    def connect() -> sqlite3.Connection:
        # The pool hands a connection to one thread at a time (the review app's workers).
        conn = sqlite3.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        conn.isolation_level = None
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return conn

    engine = sa.create_engine("sqlite://", creator=connect, poolclass=sa.pool.QueuePool)

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine


def _engine(target: Target, *, read_only: bool = False) -> sa.Engine:
    _import_sqlalchemy()
    import sqlalchemy as sa

    if target.is_sqlite:
        check_sqlite_file(target)
        if read_only and target.path is not None:
            return _read_only_engine(target)
        if target.path is not None and target.path.exists() and _on_read_only_fs(target.path):
            raise HistoryError(
                f"history store {target.shown} is on a read-only file system: ragproof history "
                "list, show, trend and compare read it, but no run can be recorded into it; "
                "give a store path you can write"
            )
        if target.path is not None:
            # The store's folder, asked for by naming the store (e.g. .ragproof/).
            try:
                target.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HistoryError(
                    f"history store {target.shown}: cannot create its folder "
                    f"{target.path.parent}: {exc.strerror or type(exc).__name__}; give a store "
                    "path in a folder you can write"
                ) from None
        engine = sa.create_engine(target.url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})

        @sa.event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            # pysqlite's own BEGIN handling is off; the "begin" hook below issues it.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys = ON")
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.close()

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            write = conn.get_execution_options().get(_WRITE, False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    try:
        return sa.create_engine(target.url, pool_pre_ping=True)
    except ImportError as exc:  # the driver: psycopg
        raise MissingExtraError("history", exc.name or "psycopg", "A PostgreSQL history") from None


class Store:
    """An open history store (use :func:`open_store`); close it when done."""

    def __init__(
        self, target: Target, engine: sa.Engine, tables: Tables, *, read_only: bool = False
    ) -> None:
        self.target = target
        self.engine = engine
        self.t = tables
        self.read_only = read_only

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def reading(self) -> Iterator[sa.Connection]:
        """A connection for queries, in one read transaction (a consistent snapshot)."""
        with self._errors("read"), self.engine.connect() as conn, conn.begin():
            yield conn

    @contextlib.contextmanager
    def writing(self) -> Iterator[sa.Connection]:
        """One write transaction: committed on leaving, rolled back on an exception."""
        with (
            self._errors("write"),
            self.engine.connect().execution_options(**{_WRITE: True}) as conn,
            conn.begin(),
        ):
            yield conn

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        from sqlalchemy.exc import IntegrityError, OperationalError

        try:
            yield
        except IntegrityError:
            raise
        except OperationalError as exc:
            reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
            raise HistoryError(
                f"history store {self.target.shown}: cannot {what}: {reason}"
            ) from None

    def add(self, doc: Mapping[str, Any], source: str, model: Results | None = None) -> Added:
        """Record one results document (checked on read; ``model``: its typed model, when
        the caller has it) in one transaction.

        The same document already in the store (by its content digest) is not added
        again: ``Added.new`` is False and the stored run's id is returned.
        """
        import sqlalchemy as sa
        from sqlalchemy.exc import IntegrityError

        from pytest_ragproof.history.rows import run_rows

        rows = run_rows(doc, source, model)
        runs = self.t.runs
        digest = rows.run["digest"]
        for _attempt in range(2):
            try:
                with self.writing() as conn:
                    found = conn.execute(
                        sa.select(runs.c.run_id, runs.c.n_cases).where(runs.c.digest == digest)
                    ).first()
                    if found is not None:
                        return Added(str(found.run_id), False, int(found.n_cases))
                    clash = conn.execute(
                        sa.select(runs.c.id).where(runs.c.run_id == rows.run["run_id"])
                    ).first()
                    if clash is not None:
                        raise HistoryError(
                            f"{source}: run {rows.run['run_id']} is already in the store with "
                            "other content (an edited copy of its results file?); add the "
                            "file pytest-ragproof wrote"
                        )
                    key = conn.execute(sa.insert(runs).values(**rows.run)).inserted_primary_key
                    assert key is not None
                    pk = key[0]
                    if rows.cases:
                        conn.execute(
                            sa.insert(self.t.case_results), [{"run": pk, **c} for c in rows.cases]
                        )
                    if rows.aggregates:
                        conn.execute(
                            sa.insert(self.t.aggregates),
                            [{"run": pk, **a} for a in rows.aggregates],
                        )
                return Added(str(rows.run["run_id"]), True, len(rows.cases))
            except IntegrityError:
                # Another writer added the same document between our check and insert
                # (PostgreSQL; SQLite's BEGIN IMMEDIATE serialises writers): look again.
                continue
        raise HistoryError(
            f"history store {self.target.shown}: cannot add {source}: a conflicting run "
            "was written at the same time; add it again"
        )


def _newer(store: Store, current: int) -> HistoryError:
    from pytest_ragproof.history import migrations

    return HistoryError(
        f"history store {store.target.shown} has schema version {current}, newer than "
        f"this pytest-ragproof's {migrations.SCHEMA_VERSION}: upgrade pytest-ragproof to read it "
        "(pip install -U 'pytest-ragproof[history]')"
    )


def _migrate(store: Store) -> None:
    """Bring the store to the current schema version (:mod:`.migrations`), or refuse a
    newer one."""
    import sqlalchemy as sa

    from pytest_ragproof.history import migrations

    latest = migrations.SCHEMA_VERSION
    with store.reading() as conn:
        current = version_row(conn, store.target)
    if current == latest:
        return
    if store.read_only and current is not None and current > latest:
        raise _newer(store, current)
    if store.read_only and current is None:
        raise HistoryError(
            f"history store {store.target.shown} holds no run history (no schema_version "
            "table); record runs into it with pytest --ragproof-history or ragproof history add"
        )
    if store.read_only:
        raise HistoryError(
            f"history store {store.target.shown} has schema version {current}, older than "
            f"this pytest-ragproof's {latest}, and reading never changes it: record "
            "a run into it (pytest --ragproof-history or ragproof history add) to upgrade it"
        )
    with store.writing() as conn:
        if store.engine.dialect.name == "postgresql":
            # One migrating process at a time; the others wait, then find it done.
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(2718281828)"))
        current = version_row(conn, store.target)
        if current is not None and current > latest:
            raise _newer(store, current)
        migrations.upgrade(conn, current)


def open_store(target: Target, *, create: bool = True) -> Store:
    """Open (creating or migrating) the store at ``target``; HistoryError when it cannot.

    ``create=False``: a SQLite file that does not exist is an error, not a new store
    (commands that only read never create a file or a folder).
    """
    from sqlalchemy.exc import DatabaseError, SQLAlchemyError

    from pytest_ragproof.history.schema import tables

    if not create and target.path is not None and not target.path.exists():
        raise HistoryError(
            f"no history store at {target.shown}; record runs into it with "
            "pytest --ragproof-history or ragproof history add results.json"
        )
    read_only = not create and target.is_sqlite and target.path is not None
    engine = _engine(target, read_only=read_only)
    store = Store(target, engine, tables(), read_only=read_only)
    try:
        _migrate(store)
    except DatabaseError as exc:
        store.close()
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
        raise HistoryError(f"history store {target.shown}: cannot open: {reason}") from None
    except SQLAlchemyError as exc:
        store.close()
        raise HistoryError(
            f"history store {target.shown}: cannot open: {type(exc).__name__}"
        ) from None
    except BaseException:
        store.close()
        raise
    return store
