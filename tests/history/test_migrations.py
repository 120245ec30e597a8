"""The migrations of a history store, on SQLite and on a real PostgreSQL server.

Each step spells out the DDL of its version (history/migrations.py): the steps build
the current tables; a store created at version 1 by version 1's DDL and then upgraded
equals a new store (tables, columns, types, defaults, keys, indexes, schema version);
and a step added later (here a column with a default and an index on it, added to the
current tables as a change of the schema would) works on a new store and on one
upgraded from version 1 with a run in it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from pytest_ragproof.history import migrations, schema
from pytest_ragproof.history.queries import list_runs
from pytest_ragproof.history.store import Store, open_store
from pytest_ragproof.history.target import resolve_target
from tests.history.runs import document


@pytest.fixture(params=["sqlite", "postgresql"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A maker of new, empty stores of one kind: a SQLite file path, or the URL of a new
    database on the test session's PostgreSQL server."""
    if request.param == "postgresql":
        maker: Callable[[], str] = request.getfixturevalue("postgres_databases")
        return maker
    names = iter(range(1, 1000))
    return lambda: str(tmp_path / f"store{next(names)}.sqlite")


@pytest.fixture(scope="module")
def results() -> list[dict[str, Any]]:
    return [document(), document(halved={"qa-001"}, answer_suffix=" later")]


def _url(value: str) -> str:
    return resolve_target(value, Path.cwd()).url


def _open(value: str) -> Store:
    return open_store(resolve_target(value, Path.cwd()))


def _schema(value: str) -> dict[str, Any]:
    """What a database holds as schema: per table its columns (name, type, nullable,
    default), primary key, foreign keys, unique constraints and indexes; and the rows of
    ``schema_version`` when it has that table."""
    engine = sa.create_engine(_url(value))
    try:
        with engine.connect() as conn:
            inspector = sa.inspect(conn)
            tables: dict[str, Any] = {}
            for name in sorted(inspector.get_table_names()):
                tables[name] = {
                    "columns": [
                        (c["name"], str(c["type"]), c["nullable"], c["default"])
                        for c in inspector.get_columns(name)
                    ],
                    "primary_key": inspector.get_pk_constraint(name),
                    "foreign_keys": sorted(map(repr, inspector.get_foreign_keys(name))),
                    "unique": sorted(map(repr, inspector.get_unique_constraints(name))),
                    "indexes": sorted(map(repr, inspector.get_indexes(name))),
                }
            version = None
            if "schema_version" in tables:
                version = conn.execute(sa.text("SELECT version FROM schema_version")).all()
            ddl = None
            if conn.dialect.name == "sqlite":
                query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
                ddl = [tuple(row) for row in conn.exec_driver_sql(query)]
    finally:
        engine.dispose()
    return {"tables": tables, "version": version, "sqlite_master": ddl}


def _current_tables(value: str) -> dict[str, Any]:
    """The schema of :mod:`.schema`'s tables as SQLAlchemy creates them in ``value``."""
    engine = sa.create_engine(_url(value))
    try:
        with engine.begin() as conn:
            schema.tables().metadata.create_all(conn)
    finally:
        engine.dispose()
    built: dict[str, Any] = _schema(value)["tables"]
    return built


def _at_version(value: str, version: int) -> None:
    """A store at ``version``, built by the steps up to it (no run in it)."""
    engine = sa.create_engine(_url(value))
    try:
        with engine.begin() as conn:
            migrations.upgrade(conn, None, to=version)
    finally:
        engine.dispose()


def test_the_steps_build_the_current_tables(new_store: Callable[[], str]) -> None:
    fresh, reference = new_store(), new_store()
    _open(fresh).close()
    built = _schema(fresh)
    assert built["tables"] == _current_tables(reference)
    assert built["version"] == [(migrations.SCHEMA_VERSION,)]
    assert set(built["tables"]) == {"schema_version", "runs", "case_results", "aggregates"}


def test_a_store_created_at_version_1_and_upgraded_equals_a_new_one(
    new_store: Callable[[], str], results: list[dict[str, Any]]
) -> None:
    old, fresh = new_store(), new_store()
    _at_version(old, 1)
    assert _schema(old)["version"] == [(1,)]
    with _open(old) as store:
        store.add(results[0], "old.json")
    _open(fresh).close()
    upgraded, new = _schema(old), _schema(fresh)
    assert upgraded == new
    assert upgraded["version"] == [(migrations.SCHEMA_VERSION,)]


def _flavour() -> sa.Column[Any]:
    return sa.Column("flavour", sa.Text, nullable=False, server_default="plain")


def _future_step(conn: sa.Connection) -> None:
    """A later version: ``runs.flavour`` (NOT NULL, default 'plain') and an index on it."""
    migrations.add_column(conn, "runs", _flavour())
    runs = sa.Table("runs", sa.MetaData(), _flavour())
    sa.Index("runs_flavour", runs.c.flavour).create(conn)


@pytest.fixture
def release_future(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Makes the code as it would be with the future step released (until the test
    ends): the step appended to the migrations, the column and its index in the current
    tables. Returns the new schema version."""

    def release() -> int:
        tables = schema.Tables()
        tables.runs.append_column(_flavour())
        sa.Index("runs_flavour", tables.runs.c.flavour)
        steps = (*migrations.MIGRATIONS, _future_step)
        monkeypatch.setattr(schema, "_TABLES", tables)
        monkeypatch.setattr(migrations, "MIGRATIONS", steps)
        monkeypatch.setattr(migrations, "SCHEMA_VERSION", len(steps))
        return len(steps)

    return release


def _flavours(value: str) -> list[str]:
    with _open(value) as store, store.reading() as conn:
        return [str(v) for v in conn.execute(sa.select(store.t.runs.c.flavour)).scalars()]


def test_a_future_step_builds_a_new_store(
    new_store: Callable[[], str],
    results: list[dict[str, Any]],
    release_future: Callable[[], int],
) -> None:
    version = release_future()
    fresh, reference = new_store(), new_store()
    with _open(fresh) as store:
        added = store.add(results[0], "a.json")
        assert [r.run_id for r in list_runs(store)] == [added.run_id]
    built = _schema(fresh)
    assert built["version"] == [(version,)]
    assert built["tables"] == _current_tables(reference)
    assert _flavours(fresh) == ["plain"]


def test_a_future_step_upgrades_a_store_of_version_1(
    new_store: Callable[[], str],
    results: list[dict[str, Any]],
    release_future: Callable[[], int],
) -> None:
    old, fresh = new_store(), new_store()
    with _open(old) as store:  # the released code: version 1, one run
        first = store.add(results[0], "a.json")
    assert _schema(old)["version"] == [(1,)]
    version = release_future()
    with _open(old) as store:
        second = store.add(results[1], "b.json")
        listed = sorted(r.run_id for r in list_runs(store))
    assert listed == sorted([first.run_id, second.run_id])
    assert _flavours(old) == ["plain", "plain"]
    _open(fresh).close()
    upgraded, new = _schema(old), _schema(fresh)
    assert upgraded == new
    assert upgraded["version"] == [(version,)]
