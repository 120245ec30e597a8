"""The tables of a history store as the current schema version has them.

These are the tables queries and :meth:`.store.Store.add` read and write. A store is
built and upgraded by the steps of :mod:`.migrations`, each spelling out its own DDL
(never these tables): opening a store runs the steps it lacks, in order, in one
transaction with the new version; a store written by a newer pytest-ragproof (a
higher version) is refused, never read half-understood. To change the schema, append
a step to :data:`.migrations.MIGRATIONS` (never edit a released one), make the same
change here, and describe it in docs/history.md (``tests/history/test_migrations.py``
checks that the two agree).

Version 1:

* ``runs``: one row per run: its id and the digest of its results document (the
  same document added twice is one run), time, verdict, case counts, datasets,
  pipelines, git commit and branch, ragproof version, settings, thresholds.
* ``case_results``: one row per case and pipeline of a run: kind, question type,
  tags, status, latency, the answer (absent in redacted runs), the failed threshold
  expressions and the scores as one JSON object. One row per case-run, not a row per
  metric: a run of 1,000 cases with 25 metrics each is 1,000 rows, not 25,000
  (docs/history.md gives the store sizes ``benchmarks/bench_history.py`` measured).
* ``aggregates``: per run, pipeline, selector (``*``, a kind or a threshold's
  selector) and metric: n, mean and the other statistics, and the aggregate gate's
  bound and verdict when a mean threshold named it. Trends read this table only.

Imports SQLAlchemy: imported only when a store is opened.
"""

from __future__ import annotations

import sqlalchemy as sa

from pytest_ragproof.history.migrations import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "Tables", "tables"]


class Tables:
    """The current schema's tables on one MetaData."""

    def __init__(self) -> None:
        self.metadata = md = sa.MetaData()
        self.schema_version = sa.Table(
            "schema_version", md, sa.Column("version", sa.Integer, nullable=False)
        )
        self.runs = sa.Table(
            "runs",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("run_id", sa.String(200), nullable=False, unique=True),
            sa.Column("digest", sa.String(64), nullable=False, unique=True),
            # The run's time (UTC, ISO 8601), from its run id; else when it was added.
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
            sa.Column("datasets", sa.Text, nullable=False),  # JSON list
            sa.Column("pipelines", sa.Text, nullable=False),  # JSON list
            sa.Column("git_commit", sa.String(64)),
            sa.Column("git_branch", sa.Text),
            sa.Column("ragproof_version", sa.String(64)),
            sa.Column("shard", sa.String(32)),
            sa.Column("redacted", sa.Boolean, nullable=False),
            sa.Column("settings", sa.Text, nullable=False),  # JSON object
            sa.Column("thresholds", sa.Text, nullable=False),  # JSON list
            sa.Column("notes", sa.Text, nullable=False),  # JSON list
        )
        sa.Index("runs_time", self.runs.c.time)
        self.case_results = sa.Table(
            "case_results",
            md,
            sa.Column(
                "run",
                sa.Integer,
                sa.ForeignKey("runs.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("pipeline", sa.String(200), primary_key=True),
            sa.Column("case_id", sa.String(500), primary_key=True),
            sa.Column("dataset", sa.Text, nullable=False),
            sa.Column("kind", sa.String(20), nullable=False),
            sa.Column("question_type", sa.String(40), nullable=False),
            sa.Column("tags", sa.Text, nullable=False),  # JSON list
            sa.Column("status", sa.String(10), nullable=False),
            sa.Column("error_type", sa.Text),
            sa.Column("latency_s", sa.Float),
            sa.Column("answer", sa.Text),
            sa.Column("failures", sa.Text, nullable=False),  # JSON list of expressions
            sa.Column("scores", sa.Text, nullable=False),  # JSON object metric -> value
        )
        self.aggregates = sa.Table(
            "aggregates",
            md,
            sa.Column(
                "run",
                sa.Integer,
                sa.ForeignKey("runs.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("pipeline", sa.String(200), primary_key=True),
            sa.Column("selector", sa.String(200), primary_key=True),
            sa.Column("metric", sa.String(200), primary_key=True),
            sa.Column("n", sa.Integer, nullable=False),
            sa.Column("n_error", sa.Integer, nullable=False),
            sa.Column("n_missing", sa.Integer, nullable=False),
            sa.Column("mean", sa.Float),
            sa.Column("stats", sa.Text, nullable=False),  # JSON: min, max, p50, p90, p95
            sa.Column("bound", sa.String(60)),  # the mean gate's bound, e.g. ">= 0.8"
            sa.Column("verdict", sa.String(60)),  # that gate's verdict
        )
        sa.Index(
            "aggregates_series",
            self.aggregates.c.metric,
            self.aggregates.c.selector,
            self.aggregates.c.pipeline,
            self.aggregates.c.run,
        )


_TABLES: Tables | None = None


def tables() -> Tables:
    """The schema's tables (built once per process)."""
    global _TABLES
    if _TABLES is None:
        _TABLES = Tables()
    return _TABLES
