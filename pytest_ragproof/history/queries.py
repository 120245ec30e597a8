"""What is asked of a history store, as plain data: the CLI prints it, the review app draws it.

* :func:`list_runs`: every run, newest first, with its verdict, datasets and commit;
* :func:`resolve_run`: a run named by its id, a unique prefix, ``latest`` or ``-N``;
* :func:`trend`: one metric's mean per run (oldest to newest), per pipeline, with the
  aggregate gate's bound;
* :func:`headline_trends`: the same for every headline metric (the ones a baseline
  always compares) and every metric a gate bounded, in the newest runs, in one query;
* :func:`run_cases`: one run's cases (filterable) and aggregates;
* :func:`compare_runs`: two runs through the baseline comparison (paired tests, case
  flips, the terminal's verdict lines) plus the per-case answer and score differences.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError, HistoryError

if TYPE_CHECKING:
    import sqlalchemy as sa

    from pytest_ragproof.history.store import Store
    from pytest_ragproof.regression.compare import Comparison

__all__ = [
    "CaseDiff",
    "CaseRow",
    "RunComparison",
    "RunDetail",
    "RunSummary",
    "TrendPoint",
    "TrendSeries",
    "compare_runs",
    "headline_trends",
    "list_runs",
    "parse_metric",
    "resolve_run",
    "run_cases",
    "trend",
]


@dataclass(frozen=True)
class RunSummary:
    """One run as the runs list shows it."""

    run_id: str
    time: str  # UTC ISO 8601: the run's time, or when it was added (time_known False)
    time_known: bool
    passed: bool
    n_cases: int
    n_passed: int
    n_failed: int
    n_error: int
    datasets: list[dict[str, Any]]
    pipelines: list[str]
    git_commit: str | None
    git_branch: str | None
    shard: str | None
    source: str
    ragproof_version: str | None

    @property
    def verdict(self) -> str:
        return "passed" if self.passed else "failed"

    @property
    def dataset_label(self) -> str:
        """Datasets as ``name@sha12``, comma-separated (the dataset version shown)."""
        return ", ".join(
            f"{str(d.get('path', '')).rsplit('/', 1)[-1]}@{str(d.get('sha256', ''))[:12]}"
            for d in self.datasets
        )


@dataclass(frozen=True)
class TrendPoint:
    run_id: str
    time: str
    git_commit: str | None
    git_branch: str | None
    mean: float | None
    n: int
    bound: str | None
    verdict: str | None


@dataclass
class TrendSeries:
    """One metric's mean over runs for one pipeline and selector, oldest run first."""

    pipeline: str
    selector: str
    metric: str
    points: list[TrendPoint] = field(default_factory=list)

    @property
    def bound(self) -> str | None:
        """The gate's bound of the newest run that had one (e.g. ``>= 0.8``)."""
        return next((p.bound for p in reversed(self.points) if p.bound), None)

    @property
    def bound_value(self) -> tuple[str, float] | None:
        """:attr:`bound` parsed: (operator, number), for drawing it."""
        if self.bound is None:
            return None
        op, _, number = self.bound.partition(" ")
        try:
            return op, float(number)
        except ValueError:
            return None


@dataclass(frozen=True)
class CaseRow:
    pipeline: str
    case_id: str
    dataset: str
    kind: str
    question_type: str
    tags: list[str]
    status: str
    error_type: str | None
    latency_s: float | None
    answer: str | None
    failures: list[str]
    scores: dict[str, float]


@dataclass
class RunDetail:
    run: RunSummary
    cases: list[CaseRow]
    aggregates: list[dict[str, Any]]
    thresholds: list[dict[str, Any]]
    notes: list[str]


@dataclass(frozen=True)
class CaseDiff:
    """A case in both runs (or one) whose status, answer or a score differs."""

    pipeline: str
    case_id: str
    kind: str
    status_a: str | None
    status_b: str | None
    answer_a: str | None
    answer_b: str | None
    scores: dict[str, tuple[float | None, float | None]]  # metric -> (a, b), differing only


@dataclass
class RunComparison:
    """Run B compared with run A (A is the baseline)."""

    a: RunSummary
    b: RunSummary
    comparison: Comparison
    lines: list[str]
    cases: list[CaseDiff]


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


def _summary(row: Any) -> RunSummary:
    return RunSummary(
        run_id=str(row.run_id),
        time=str(row.time),
        time_known=bool(row.time_known),
        passed=bool(row.passed),
        n_cases=int(row.n_cases),
        n_passed=int(row.n_passed),
        n_failed=int(row.n_failed),
        n_error=int(row.n_error),
        datasets=json.loads(row.datasets),
        pipelines=json.loads(row.pipelines),
        git_commit=row.git_commit,
        git_branch=row.git_branch,
        shard=row.shard,
        source=str(row.source),
        ragproof_version=row.ragproof_version,
    )


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
    branch: str | None = None,
    dataset_sha256: str | None = None,
) -> list[RunSummary]:
    """The runs, newest first (by run time, then by the order they were added)."""
    import sqlalchemy as sa

    r = store.t.runs
    query = sa.select(*_summary_columns(store)).order_by(r.c.time.desc(), r.c.id.desc())
    if branch is not None:
        query = query.where(r.c.git_branch == branch)
    if dataset_sha256 is not None:
        query = query.where(r.c.dataset_sha256.contains(dataset_sha256))
    if limit is not None:
        query = query.limit(limit)
    with store.reading() as conn:
        return [_summary(row) for row in conn.execute(query)]


def _resolve(conn: sa.Connection, store: Store, ref: str) -> Any:
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
        return _summary(_resolve(conn, store, ref))


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
        sa.select(
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
            s.points.append(
                TrendPoint(
                    str(row.run_id),
                    str(row.time),
                    row.git_commit,
                    row.git_branch,
                    None if row.mean is None else float(row.mean),
                    int(row.n),
                    row.bound,
                    row.verdict,
                )
            )
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
            sa.select(
                a.c.pipeline,
                a.c.selector,
                a.c.metric,
                a.c.mean,
                a.c.n,
                a.c.bound,
                a.c.verdict,
                r.c.run_id,
                r.c.time,
                r.c.git_commit,
                r.c.git_branch,
            )
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
            s.points.append(
                TrendPoint(
                    str(row.run_id),
                    str(row.time),
                    row.git_commit,
                    row.git_branch,
                    None if row.mean is None else float(row.mean),
                    int(row.n),
                    row.bound,
                    row.verdict,
                )
            )
    order = {k: i for i, k in enumerate(keys)}
    return sorted(series.values(), key=lambda s: (order[(s.selector, s.metric)], s.pipeline))


def known_metrics(store: Store) -> list[str]:
    """Every ``selector:metric`` the store has aggregates of (for messages and menus)."""
    import sqlalchemy as sa

    a = store.t.aggregates
    with store.reading() as conn:
        rows = conn.execute(sa.select(a.c.selector, a.c.metric).distinct()).all()
    return sorted(f"{s}:{m}" if s != "*" else str(m) for s, m in rows)


def _case(row: Any) -> CaseRow:
    return CaseRow(
        pipeline=str(row.pipeline),
        case_id=str(row.case_id),
        dataset=str(row.dataset),
        kind=str(row.kind),
        question_type=str(row.question_type),
        tags=json.loads(row.tags),
        status=str(row.status),
        error_type=row.error_type,
        latency_s=row.latency_s,
        answer=row.answer,
        failures=json.loads(row.failures),
        scores=json.loads(row.scores),
    )


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
    query = sa.select(c).where(c.c.run == pk).order_by(c.c.pipeline, c.c.dataset, c.c.case_id)
    if kind is not None:
        query = query.where(c.c.kind == kind)
    if status is not None:
        query = query.where(c.c.status == status)
    if pipeline is not None:
        query = query.where(c.c.pipeline == pipeline)
    return [_case(row) for row in conn.execute(query)]


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
        row = _resolve(conn, store, ref)
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
        _summary(row), cases, aggregates, json.loads(extra.thresholds), json.loads(extra.notes)
    )


def _stored_document(conn: sa.Connection, store: Store, row: Any) -> tuple[dict[str, Any], Any]:
    import sqlalchemy as sa

    from pytest_ragproof.history.rows import document

    r, c = store.t.runs, store.t.case_results
    full = conn.execute(sa.select(r).where(r.c.id == row.id)).one()
    cases = conn.execute(
        sa.select(c).where(c.c.run == row.id).order_by(c.c.pipeline, c.c.case_id)
    ).all()
    return document(dict(full._mapping), [dict(x._mapping) for x in cases]), cases


def _case_diffs(cases_a: Sequence[Any], cases_b: Sequence[Any]) -> list[CaseDiff]:
    by_a = {(x.pipeline, x.case_id): x for x in cases_a}
    by_b = {(x.pipeline, x.case_id): x for x in cases_b}
    out: list[CaseDiff] = []
    for key in sorted(set(by_a) | set(by_b)):
        x, y = by_a.get(key), by_b.get(key)
        sa_: Mapping[str, float] = json.loads(x.scores) if x is not None else {}
        sb: Mapping[str, float] = json.loads(y.scores) if y is not None else {}
        scores = {
            m: (sa_.get(m), sb.get(m))
            for m in sorted(set(sa_) | set(sb))
            if m != "latency_s" and sa_.get(m) != sb.get(m)
        }
        status_a = None if x is None else str(x.status)
        status_b = None if y is None else str(y.status)
        answer_a = None if x is None else x.answer
        answer_b = None if y is None else y.answer
        if status_a == status_b and answer_a == answer_b and not scores:
            continue
        kind = str(y.kind) if y is not None else str(x.kind) if x is not None else ""
        out.append(CaseDiff(key[0], key[1], kind, status_a, status_b, answer_a, answer_b, scores))
    return out


def compare_runs(
    store: Store,
    ref_a: str,
    ref_b: str,
    *,
    tolerances: Sequence[str] = (),
    alpha: float = 0.05,
    allow_dataset_change: bool = False,
    fail_on_case_regression: bool = False,
) -> RunComparison:
    """Run ``ref_b`` compared with run ``ref_a`` as its baseline: the same comparison,
    gates and verdict lines as ``--ragproof-baseline`` (latency never compared)."""
    from pytest_ragproof.regression.compare import compare
    from pytest_ragproof.verdict.baseline import baseline_document, summary_lines

    with store.reading() as conn:
        row_a = _resolve(conn, store, ref_a)
        row_b = _resolve(conn, store, ref_b)
        doc_a, cases_a = _stored_document(conn, store, row_a)
        doc_b, cases_b = _stored_document(conn, store, row_b)
    comparison = compare(
        doc_b,
        baseline_document(doc_a),
        tolerances=tolerances,
        alpha=alpha,
        allow_dataset_change=allow_dataset_change,
        fail_on_case_regression=fail_on_case_regression,
    )
    lines = summary_lines(comparison, str(row_a.run_id))
    return RunComparison(
        _summary(row_a), _summary(row_b), comparison, lines, _case_diffs(cases_a, cases_b)
    )
