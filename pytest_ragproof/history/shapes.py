"""The plain data the history queries answer with, and how a stored row becomes it.

A run as the runs list shows it (:class:`RunSummary`), a metric over runs
(:class:`TrendSeries` of :class:`TrendPoint`), one run's cases (:class:`RunDetail` of
:class:`CaseRow`) and two runs compared (:class:`RunComparison` with its
:class:`CaseDiff` rows): the CLI prints them, the review app draws them, nothing of
SQLAlchemy leaks out. :func:`summary_of` and :func:`case_of` shape one row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragproof.regression.compare import Comparison
    from pytest_ragproof.results.models import Dataset, ThresholdRow
    from pytest_ragproof.verdict.thresholds import Threshold

__all__ = [
    "CaseDiff",
    "CaseRow",
    "RunComparison",
    "RunDetail",
    "RunSummary",
    "TrendPoint",
    "TrendSeries",
    "case_of",
    "summary_of",
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
    def dataset_entries(self) -> list[Dataset]:
        """The run's datasets as the results document's model types them."""
        from pytest_ragproof.results.models import Dataset

        return [Dataset.model_validate(d) for d in self.datasets]

    @property
    def dataset_label(self) -> str:
        """Datasets as ``name@sha12``, comma-separated (the dataset version shown)."""
        return ", ".join(
            f"{d.path.rsplit('/', 1)[-1]}@{d.sha256[:12]}" for d in self.dataset_entries
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

    @property
    def metrics(self) -> dict[str, float]:
        """The scores under the name a case record gives them (the verdict's rules read it)."""
        return self.scores


@dataclass
class RunDetail:
    run: RunSummary
    cases: list[CaseRow]
    aggregates: list[dict[str, Any]]
    thresholds: list[dict[str, Any]]
    notes: list[str]

    def threshold_rows(self) -> list[ThresholdRow]:
        """The run's threshold rows, typed (as its results document held them, but for
        each failed aggregate's worst cases)."""
        from pytest_ragproof.results.models import ThresholdRow

        return [ThresholdRow.model_validate(t) for t in self.thresholds]

    def threshold_values(self) -> list[list[float]]:
        """Per threshold row, the values the run decided it on, from the stored case rows
        by the run's own rule (:func:`pytest_ragproof.verdict.gates.row_values`); empty for
        a row whose expression this version cannot read. Needs every case of the run."""
        from pytest_ragproof.verdict.gates import row_values

        return [
            [] if parsed is None else row_values(self.cases, parsed, scope, pipeline)
            for parsed, scope, pipeline in self._parsed_thresholds()
        ]

    def threshold_errors(self) -> list[int | None]:
        """Per threshold row, the cases of its population the run did not score, from the
        stored case rows by the run's own rule (:func:`pytest_ragproof.verdict.gates.row_errors`;
        runs recorded before rows carried the count have it too); ``None`` for a row whose
        expression this version cannot read. Needs every case of the run."""
        from pytest_ragproof.verdict.gates import row_errors

        return [
            None if parsed is None else row_errors(self.cases, parsed, scope, pipeline)
            for parsed, scope, pipeline in self._parsed_thresholds()
        ]

    def _parsed_thresholds(self) -> list[tuple[Threshold | None, str, str]]:
        from pytest_ragproof.errors import ConfigError
        from pytest_ragproof.verdict.thresholds import parse_threshold

        out: list[tuple[Threshold | None, str, str]] = []
        for t in self.threshold_rows():
            scope, pipeline = str(t.scope), str(t.pipeline)
            try:
                out.append((parse_threshold(str(t.expression), scope), scope, pipeline))
            except ConfigError:
                out.append((None, scope, pipeline))
        return out


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


def summary_of(row: Any) -> RunSummary:
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


def case_of(row: Any) -> CaseRow:
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
