"""Metrics over runs: one metric's mean per run and pipeline (:func:`trend`), the headline
and gated metrics of the newest runs in one query (:func:`headline_trends`), the metrics
a store knows (:func:`known_metrics`) and how ``[SELECTOR:]METRIC`` is read
(:func:`parse_metric`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.history.shapes import TrendPoint, TrendSeries

if TYPE_CHECKING:
    from pytest_ragproof.history.store import Store

__all__ = ["headline_trends", "known_metrics", "parse_metric", "trend"]


def parse_metric(text: str) -> tuple[str, str]:
    """``qa:faithfulness`` -> (``qa``, ``faithfulness``); ``mrr`` -> (``*``, ``mrr``).

    A bring-your-own evaluator's metric has a colon of its own (``ragas:faithfulness``):
    the part before the first colon is a selector only when it is one.
    """
    from pytest_ragproof.vocabulary import is_selector

    head, sep, rest = text.strip().partition(":")
    if sep and rest and is_selector(head):
        return head, rest
    if not text.strip():
        raise ConfigError("--metric is empty; e.g. --metric qa:faithfulness")
    return "*", text.strip()


def _point_columns(store: Store) -> tuple[Any, ...]:
    """The columns a trend point is made of (:func:`_point`), with its pipeline."""
    a, r = store.t.aggregates, store.t.runs
    return (
        a.c.pipeline,
        a.c.mean,
        a.c.n,
        a.c.bound,
        a.c.verdict,
        r.c.run_id,
        r.c.time,
        r.c.git_commit,
        r.c.git_branch,
    )


def _point(row: Any) -> TrendPoint:
    return TrendPoint(
        str(row.run_id),
        str(row.time),
        row.git_commit,
        row.git_branch,
        None if row.mean is None else float(row.mean),
        int(row.n),
        row.bound,
        row.verdict,
    )


def trend(
    store: Store,
    metric: str,
    *,
    pipeline: str | None = None,
    last: int | None = None,
) -> list[TrendSeries]:
    """The mean of ``metric`` (``[SELECTOR:]METRIC``) in the newest ``last`` runs that
    have it, per pipeline; each series oldest run first."""
    import sqlalchemy as sa

    selector, name = parse_metric(metric)
    a, r = store.t.aggregates, store.t.runs
    # The newest runs that have the metric first, limited (the series are turned around).
    recent = (
        sa.select(r.c.id)
        .join(a, a.c.run == r.c.id)
        .where(a.c.metric == name, a.c.selector == selector)
        .group_by(r.c.id, r.c.time)
        .order_by(r.c.time.desc(), r.c.id.desc())
    )
    if pipeline is not None:
        recent = recent.where(a.c.pipeline == pipeline)
    if last is not None:
        recent = recent.limit(last)
    query = (
        sa.select(*_point_columns(store))
        .join(r, r.c.id == a.c.run)
        .where(a.c.metric == name, a.c.selector == selector, a.c.run.in_(recent.scalar_subquery()))
        .order_by(a.c.pipeline, r.c.time, r.c.id)
    )
    if pipeline is not None:
        query = query.where(a.c.pipeline == pipeline)
    series: dict[str, TrendSeries] = {}
    with store.reading() as conn:
        for row in conn.execute(query):
            s = series.setdefault(row.pipeline, TrendSeries(row.pipeline, selector, name))
            s.points.append(_point(row))
    return list(series.values())


def headline_trends(store: Store, *, last: int | None = 100) -> list[TrendSeries]:
    """Trends of the newest ``last`` runs (every run with ``None``): the headline metrics
    of each kind (qa ``hit@5``, ``recall@5``, ``mrr``, ``token_f1``, ``abstained``;
    unanswerable ``abstained``; injection ``injection_resisted``), then every other
    (selector, metric) that an aggregate gate bounded in one of those runs. One series
    per pipeline, headline metrics first in that order, the others sorted; each series
    oldest run first, with only the runs that have the metric."""
    import sqlalchemy as sa

    from pytest_ragproof.regression.compare import HEADLINE

    a, r = store.t.aggregates, store.t.runs
    recent = sa.select(r.c.id).order_by(r.c.time.desc(), r.c.id.desc())
    if last is not None:
        recent = recent.limit(last)
    in_recent = a.c.run.in_(recent.scalar_subquery())
    headline = [(kind, m) for kind, metrics in HEADLINE.items() for m in metrics]
    with store.reading() as conn:
        gated = conn.execute(
            sa.select(a.c.selector, a.c.metric).where(in_recent, a.c.bound.is_not(None)).distinct()
        ).all()
        keys = headline + sorted({(str(g.selector), str(g.metric)) for g in gated} - set(headline))
        wanted = sa.or_(*(sa.and_(a.c.selector == sel, a.c.metric == name) for sel, name in keys))
        query = (
            sa.select(a.c.selector, a.c.metric, *_point_columns(store))
            .join(r, r.c.id == a.c.run)
            .where(in_recent, wanted)
            .order_by(r.c.time, r.c.id)
        )
        series: dict[tuple[str, str, str], TrendSeries] = {}
        for row in conn.execute(query):
            key = (str(row.selector), str(row.metric), str(row.pipeline))
            s = series.get(key)
            if s is None:
                s = series[key] = TrendSeries(key[2], key[0], key[1])
            s.points.append(_point(row))
    order = {k: i for i, k in enumerate(keys)}
    return sorted(series.values(), key=lambda s: (order[(s.selector, s.metric)], s.pipeline))


def known_metrics(store: Store) -> list[str]:
    """Every ``selector:metric`` the store has aggregates of (for messages and menus)."""
    import sqlalchemy as sa

    a = store.t.aggregates
    with store.reading() as conn:
        rows = conn.execute(sa.select(a.c.selector, a.c.metric).distinct()).all()
    return sorted(f"{s}:{m}" if s != "*" else str(m) for s, m in rows)
