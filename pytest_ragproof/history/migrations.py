"""The migrations of a history store: each step spells out the DDL of its version.

A store records its schema version in ``schema_version`` (one row). :func:`upgrade`
creates that table in a new store (version 0) and runs the steps the store lacks, in
order, in the caller's transaction. Step ``i`` brings a store from version ``i`` to
``i + 1`` and states its own DDL: the tables, columns and indexes as they were at
that version, never the current tables of :mod:`.schema` (a column added later must
not be created by an earlier step, or the later step's ``ALTER`` would fail on a new
store). A released step is never edited; a change of the schema is a new step at the
end of :data:`MIGRATIONS`, with the same change in :class:`.schema.Tables` (the
tables queries read) and a line in docs/history.md. ``tests/history/test_migrations.py``
checks that a store built by the steps equals the current tables, and that a store
upgraded from version 1 equals a new one, on SQLite and PostgreSQL.

Imports SQLAlchemy: imported only when a store is opened.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "add_column", "upgrade"]


def add_column(conn: sa.Connection, table: str, column: sa.Column[object]) -> None:
    """``ALTER TABLE table ADD COLUMN column``, spelled by the connection's dialect."""
    sa.Table(table, sa.MetaData(), column)  # a column is compiled as part of a table
    spec = sa.schema.CreateColumn(column).compile(dialect=conn.dialect)
    quoted = conn.dialect.identifier_preparer.quote(table)
    conn.exec_driver_sql(f"ALTER TABLE {quoted} ADD COLUMN {spec}")


def _version_table(md: sa.MetaData) -> sa.Table:
    return sa.Table("schema_version", md, sa.Column("version", sa.Integer, nullable=False))


def _v1(conn: sa.Connection) -> None:
    """Version 1: ``runs``, ``case_results`` and ``aggregates`` with their two indexes."""
    md = sa.MetaData()
    runs = sa.Table(
        "runs",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(200), nullable=False, unique=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("time", sa.String(32), nullable=False),
        sa.Column("time_known", sa.Boolean, nullable=False),
        sa.Column("added_at", sa.String(32), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("n_cases", sa.Integer, nullable=False),
        sa.Column("n_passed", sa.Integer, nullable=False),
        sa.Column("n_failed", sa.Integer, nullable=False),
        sa.Column("n_error", sa.Integer, nullable=False),
        sa.Column("dataset_sha256", sa.Text, nullable=False),
        sa.Column("datasets", sa.Text, nullable=False),
        sa.Column("pipelines", sa.Text, nullable=False),
        sa.Column("git_commit", sa.String(64)),
        sa.Column("git_branch", sa.Text),
        sa.Column("ragproof_version", sa.String(64)),
        sa.Column("shard", sa.String(32)),
        sa.Column("redacted", sa.Boolean, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Column("thresholds", sa.Text, nullable=False),
        sa.Column("notes", sa.Text, nullable=False),
    )
    sa.Index("runs_time", runs.c.time)
    sa.Table(
        "case_results",
        md,
        sa.Column(
            "run", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("pipeline", sa.String(200), primary_key=True),
        sa.Column("case_id", sa.String(500), primary_key=True),
        sa.Column("dataset", sa.Text, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("question_type", sa.String(40), nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("error_type", sa.Text),
        sa.Column("latency_s", sa.Float),
        sa.Column("answer", sa.Text),
        sa.Column("failures", sa.Text, nullable=False),
        sa.Column("scores", sa.Text, nullable=False),
    )
    aggregates = sa.Table(
        "aggregates",
        md,
        sa.Column(
            "run", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("pipeline", sa.String(200), primary_key=True),
        sa.Column("selector", sa.String(200), primary_key=True),
        sa.Column("metric", sa.String(200), primary_key=True),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("n_error", sa.Integer, nullable=False),
        sa.Column("n_missing", sa.Integer, nullable=False),
        sa.Column("mean", sa.Float),
        sa.Column("stats", sa.Text, nullable=False),
        sa.Column("bound", sa.String(60)),
        sa.Column("verdict", sa.String(60)),
    )
    sa.Index(
        "aggregates_series",
        aggregates.c.metric,
        aggregates.c.selector,
        aggregates.c.pipeline,
        aggregates.c.run,
    )
    md.create_all(conn)


#: The migrations in order: step i brings a store from version i to version i + 1.
MIGRATIONS: tuple[Callable[[sa.Connection], None], ...] = (_v1,)
SCHEMA_VERSION = len(MIGRATIONS)


def upgrade(conn: sa.Connection, current: int | None, to: int | None = None) -> None:
    """Bring a store at version ``current`` (None: no ``schema_version`` table yet) to
    version ``to`` (default :data:`SCHEMA_VERSION`), in the caller's transaction."""
    target = SCHEMA_VERSION if to is None else to
    version_table = _version_table(sa.MetaData())
    if current is None:
        version_table.create(conn)
        conn.execute(sa.insert(version_table).values(version=0))
        current = 0
    for version in range(current, target):
        MIGRATIONS[version](conn)
        conn.execute(sa.update(version_table).values(version=version + 1))
