"""The runs of a history store: the list (:func:`list_runs`), a run named by its id, a
unique prefix, ``latest`` or ``-N`` (:func:`resolve_run`), and one run's cases and
aggregates (:func:`run_cases`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import HistoryError
from pytest_ragproof.history.shapes import CaseRow, RunDetail, RunSummary, case_of, summary_of
from pytest_ragproof.textnorm import natural_key

if TYPE_CHECKING:
    import sqlalchemy as sa

    from pytest_ragproof.history.store import Store

__all__ = ["list_runs", "resolve_row", "resolve_run", "run_cases"]


def _summary_columns(store: Store) -> list[Any]:
    r = store.t.runs
    return [
        r.c.id,
        r.c.run_id,
        r.c.time,
        r.c.time_known,
        r.c.passed,
        r.c.n_cases,
        r.c.n_passed,
        r.c.n_failed,
        r.c.n_error,
        r.c.datasets,
        r.c.pipelines,
        r.c.git_commit,
        r.c.git_branch,
        r.c.shard,
        r.c.source,
        r.c.ragproof_version,
    ]


def list_runs(
    store: Store,
    *,
    limit: int | None = None,
    offset: int = 0,
    branch: str | None = None,
    dataset_sha256: str | None = None,
) -> list[RunSummary]:
    """The runs, newest first (by run time, then by the order they were added);
    ``offset`` skips that many of the newest (a page of the review app's Runs page)."""
    import sqlalchemy as sa

    r = store.t.runs
    query = sa.select(*_summary_columns(store)).order_by(r.c.time.desc(), r.c.id.desc())
    if branch is not None:
        query = query.where(r.c.git_branch == branch)
    if dataset_sha256 is not None:
        query = query.where(r.c.dataset_sha256.contains(dataset_sha256))
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    with store.reading() as conn:
        return [summary_of(row) for row in conn.execute(query)]


def count_runs(store: Store) -> int:
    """How many runs the store holds."""
    import sqlalchemy as sa

    with store.reading() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(store.t.runs)).scalar_one())


def resolve_row(conn: sa.Connection, store: Store, ref: str) -> Any:
    import sqlalchemy as sa

    r = store.t.runs
    text = ref.strip()
    ordered = sa.select(*_summary_columns(store)).order_by(r.c.time.desc(), r.c.id.desc())
    back = 1 if text == "latest" else None
    if text.startswith("-") and text[1:].isdigit() and int(text[1:]) >= 1:
        back = int(text[1:])
    if back is not None:
        row = conn.execute(ordered.offset(back - 1).limit(1)).first()
        if row is None:
            total = conn.execute(sa.select(sa.func.count()).select_from(r)).scalar_one()
            raise HistoryError(
                f"run {text}: the store holds {total} run(s); `ragproof history list` shows them"
            )
        return row
    row = conn.execute(ordered.where(r.c.run_id == text)).first()
    if row is not None:
        return row
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    found = conn.execute(ordered.where(r.c.run_id.like(escaped + "%", escape="\\")).limit(6)).all()
    if len(found) == 1:
        return found[0]
    if not found:
        raise HistoryError(
            f"no run {text!r} in the store; give a run id, a unique prefix of one, 'latest' or "
            "-N (`ragproof history list` shows the runs)"
        )
    shown = ", ".join(str(f.run_id) for f in found[:5])
    raise HistoryError(f"run {text!r} is ambiguous: {shown}…; give more of the run id")


def resolve_run(store: Store, ref: str) -> RunSummary:
    """The run ``ref`` names: a run id, a unique prefix, ``latest`` or ``-N`` (N-th newest)."""
    with store.reading() as conn:
        return summary_of(resolve_row(conn, store, ref))


def _cases(
    conn: sa.Connection,
    store: Store,
    pk: int,
    *,
    kind: str | None = None,
    status: str | None = None,
    pipeline: str | None = None,
) -> list[CaseRow]:
    import sqlalchemy as sa

    c = store.t.case_results
    query = sa.select(c).where(c.c.run == pk)  # ordered below, naturally
    if kind is not None:
        query = query.where(c.c.kind == kind)
    if status is not None:
        query = query.where(c.c.status == status)
    if pipeline is not None:
        query = query.where(c.c.pipeline == pipeline)
    cases = [case_of(row) for row in conn.execute(query)]
    # SQL orders ids as text (qa-1, qa-11, qa-3); people read them naturally
    return sorted(cases, key=lambda c: (c.pipeline, c.dataset, natural_key(c.case_id)))


def run_cases(
    store: Store,
    ref: str,
    *,
    kind: str | None = None,
    status: str | None = None,
    pipeline: str | None = None,
) -> RunDetail:
    """One run: its summary, its cases (filtered by kind, status, pipeline), aggregates,
    threshold rows and notes."""
    import sqlalchemy as sa

    a, r = store.t.aggregates, store.t.runs
    with store.reading() as conn:
        row = resolve_row(conn, store, ref)
        cases = _cases(conn, store, row.id, kind=kind, status=status, pipeline=pipeline)
        aggs = conn.execute(
            sa.select(a).where(a.c.run == row.id).order_by(a.c.pipeline, a.c.selector, a.c.metric)
        ).all()
        extra = conn.execute(sa.select(r.c.thresholds, r.c.notes).where(r.c.id == row.id)).one()
    aggregates = [
        {
            "pipeline": g.pipeline,
            "selector": g.selector,
            "metric": g.metric,
            "n": g.n,
            "n_error": g.n_error,
            "n_missing": g.n_missing,
            "mean": g.mean,
            **json.loads(g.stats),
            "bound": g.bound,
            "verdict": g.verdict,
        }
        for g in aggs
    ]
    return RunDetail(
        summary_of(row), cases, aggregates, json.loads(extra.thresholds), json.loads(extra.notes)
    )
