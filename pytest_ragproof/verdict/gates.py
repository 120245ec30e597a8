"""Aggregates and aggregate gates over case records (pure; used by pytest and evaluate())."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol, TypeVar

from pytest_ragproof.metrics.selector import ALL, CaseLike, Selector
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.thresholds import Threshold, aggregate
from pytest_ragproof.vocabulary import KINDS


@dataclass
class Aggregate:
    pipeline: str
    selector: str
    metric: str
    n: int
    n_error: int
    n_missing: int
    values: dict[str, float] = field(default_factory=dict)  # mean, min, max, p50, p90, p95

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ThresholdResult:
    expression: str
    scope: str
    pipeline: str
    selector: str
    metric: str
    aggregator: str | None
    bound: str
    observed: float | None
    n: int
    # pass | fail | incomplete | no data | no cases | not selected | "n failed, n error"
    verdict: str
    gated: bool
    # The parsed threshold this row reports (not part of the results document).
    threshold: Threshold = field(repr=False, compare=False)
    # A failed aggregate: the cases that pulled it down most, as [case id, value].
    worst: list[list[Any]] = field(default_factory=list)
    # The cases of the row's population that were not scored (:func:`row_errors`).
    n_error: int = 0

    @property
    def failed(self) -> bool:
        return self.gated and (
            self.verdict in ("fail", "no data", INCOMPLETE)
            or self.verdict.endswith(UNJUDGED_VERDICT)
        )

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "threshold"}
        out["worst"] = [list(w) for w in self.worst]
        return out


class ScoredCase(CaseLike, Protocol):
    """A case's outcome as a threshold row reads it: a CaseRecord, or a case row of the
    history store."""

    @property
    def pipeline(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...


C = TypeVar("C", bound=ScoredCase)


def population(records: Iterable[C], t: Threshold, pipeline: str) -> list[C]:
    return [r for r in records if r.pipeline == pipeline and t.applies_to(r)]


def row_values(
    records: Iterable[ScoredCase], t: Threshold, scope: str, pipeline: str
) -> list[float]:
    """The values a threshold row is decided on, one rule for the verdict and every table
    that shows the row (the terminal summary, ``ragproof history show``).

    An aggregate takes every value its cases have, whatever else failed on a case (a
    case whose judge failed keeps its retrieval metrics); a case threshold is checked on
    the scored cases only: an error case was not checked, an xfail case is counted apart.
    """
    recs = population(records, t, pipeline)
    if scope == "case":
        recs = [r for r in recs if r.status != "error" and r.status not in XFAIL_STATUSES]
    return [r.metrics[t.metric] for r in recs if t.metric in r.metrics]


def row_errors(records: Iterable[ScoredCase], t: Threshold, scope: str, pipeline: str) -> int:
    """How many cases of a threshold row's population were not scored, one rule for the
    verdict and every table that shows the row: the error cases (an xfail case is counted
    apart). An aggregate counts an error case only when it lacks the row's metric (a case
    whose judge failed keeps its retrieval metrics: those were scored); a case threshold
    counts every error case (it was not checked)."""
    recs = [r for r in population(records, t, pipeline) if r.status == "error"]
    if scope == "case":
        return len(recs)
    return sum(1 for r in recs if t.metric not in r.metrics)


def _aggregates(
    pipeline: str, selector: str, recs: Sequence[CaseRecord], only: str | None = None
) -> list[Aggregate]:
    """The aggregate of every metric the records have (or of ``only``), in one pass."""
    names: set[str] = set() if only is None else {only}
    for r in recs:
        if only is None:
            names.update(r.metrics)
    out = []
    for m in sorted(names):
        # A value a case has was measured, whatever else failed on it: a case whose judge
        # failed keeps its retrieval metrics. An error case without the value is an error
        # of this metric; any other case without it is missing.
        vals = [r.metrics[m] for r in recs if m in r.metrics]
        n_error = sum(1 for r in recs if r.status == "error" and m not in r.metrics)
        n_missing = len(recs) - n_error - len(vals)
        stats = aggregate(vals) if vals else {}
        out.append(Aggregate(pipeline, selector, m, len(vals), n_error, n_missing, stats))
    return out


WORST_SHOWN = 5
#: Why a judged metric can be missing without the case saying anything about quality:
#: a gate on that metric cannot pass while such cases are left (a budget is no pass).
UNJUDGED = frozenset({"budget", "dry_run", "not_run"})
UNJUDGED_VERDICT = "not judged (budget or dry run)"
#: An aggregate gate whose population holds error cases without its metric: the value
#: is over the scored part only, so it is no pass (the error cases fail the run too).
INCOMPLETE = "incomplete"


def _unjudged(recs: Sequence[CaseRecord], metric: str) -> int:
    from pytest_ragproof.judges import judge_of

    judge = judge_of(metric)
    if judge is None:
        return 0
    return sum(1 for r in recs if r.status != "error" and r.not_judged.get(judge) in UNJUDGED)


# Statuses of cases pytest expected to fail (marked xfail): reported, never gating.
XFAIL_STATUSES = ("xfailed", "xpassed")


def _worst(recs: Sequence[CaseRecord], t: Threshold, limit: int = WORST_SHOWN) -> list[list[Any]]:
    """The cases that pulled a failed aggregate down most: the ``limit`` worst values of
    the metric (lowest when higher is better) among the cases that miss the bound."""
    from pytest_ragproof.metrics import registry

    metric = t.metric
    spec = registry.resolve(metric)
    scored = [
        (r.metrics[metric], r.id, r.kind)
        for r in recs
        if metric in r.metrics and not t.check(r.metrics[metric])
    ]

    def badness(item: tuple[float, str, str]) -> tuple[float, str]:
        value, cid, kind = item
        higher = True if spec is None else spec.higher_is_better_for(kind)
        return (value if higher else -value, cid)

    return [[cid, value] for value, cid, _ in sorted(scored, key=badness)[:limit]]


def evaluate_aggregates(
    records: Sequence[CaseRecord],
    thresholds: Sequence[Threshold],
    *,
    gated: bool,
    narrowed: bool = False,
) -> list[ThresholdResult]:
    """Verdicts of aggregate thresholds per pipeline.

    ``narrowed``: the run evaluates a chosen part of the dataset (kind, split or tag
    selection); a threshold whose population is then empty is reported as
    "not selected" instead of failing for lack of data.
    """
    pipelines = sorted({r.pipeline for r in records})
    out: list[ThresholdResult] = []
    for pipeline in pipelines:
        for t in thresholds:
            recs = population(records, t, pipeline)
            (agg,) = _aggregates(pipeline, t.selector, recs, only=t.metric)
            observed = agg.values.get(t.aggregator or "mean") if agg.n else None
            if observed is None:
                verdict = "not selected" if narrowed and not recs else "no data"
            else:
                verdict = "pass" if t.check(observed) else "fail"
            errors = row_errors(recs, t, "aggregate", pipeline)
            if errors and verdict == "pass":
                verdict = INCOMPLETE
            unjudged = _unjudged(recs, t.metric)
            if unjudged and verdict in ("pass", "no data", INCOMPLETE):
                verdict = f"{unjudged} {UNJUDGED_VERDICT}"
            worst = _worst(recs, t) if verdict == "fail" else []
            out.append(
                ThresholdResult(
                    t.expression,
                    "aggregate",
                    pipeline,
                    t.selector,
                    t.metric,
                    t.aggregator,
                    t.bound,
                    observed,
                    agg.n,
                    verdict,
                    gated and verdict != "not selected",
                    t,
                    worst,
                    errors,
                )
            )
    return out


def summarize_case_thresholds(
    records: Sequence[CaseRecord], thresholds: Sequence[Threshold]
) -> list[ThresholdResult]:
    """Per pipeline and case threshold: how many cases it failed (gated per item).

    A threshold whose selector matched no evaluated case reads ``no cases`` and is
    not gated: nothing was checked. Cases marked xfail are counted apart.
    """
    out: list[ThresholdResult] = []
    for pipeline in sorted({r.pipeline for r in records}):
        for t in thresholds:
            recs = population(records, t, pipeline)
            expected = [r for r in recs if r.status in XFAIL_STATUSES]
            recs = [r for r in recs if r.status not in XFAIL_STATUSES]
            scored = [r for r in recs if r.status != "error"]
            failed = sum(1 for r in scored if any(f.expression == t.expression for f in r.failures))
            values = row_values(scored, t, "case", pipeline)
            observed = min(values) if values else None
            errors = row_errors(recs, t, "case", pipeline)
            # A case that errored was not measured: it is not a pass of the threshold.
            parts = [f"{failed} failed"] if failed else []
            parts += [f"{errors} error"] if errors else []
            parts += [f"{len(expected)} xfailed"] if expected else []
            if not recs and not expected:
                verdict = "no cases"
            else:
                verdict = ", ".join(parts) or "pass"
            out.append(
                ThresholdResult(
                    t.expression,
                    "case",
                    pipeline,
                    t.selector,
                    t.metric,
                    None,
                    t.bound,
                    observed,
                    len(scored),
                    verdict,
                    verdict != "no cases",
                    threshold=t,
                    n_error=errors,
                )
            )
    return out


def all_aggregates(
    records: Sequence[CaseRecord], thresholds: Sequence[Threshold]
) -> list[Aggregate]:
    """Aggregates of every metric per pipeline for '*', each kind and each threshold selector."""
    out: list[Aggregate] = []
    selectors = [ALL, *(Selector(k) for k in KINDS)]
    for t in thresholds:
        if t.sel not in selectors:
            selectors.append(t.sel)
    for pipeline in sorted({r.pipeline for r in records}):
        mine = [r for r in records if r.pipeline == pipeline]
        for selector in selectors:
            recs = [r for r in mine if selector.matches(r)]
            if not recs:
                continue
            out.extend(_aggregates(pipeline, selector.text, recs))
    return out
