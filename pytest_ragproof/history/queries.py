"""What is asked of a history store, as plain data: the CLI prints it, the review app draws it.

* :func:`list_runs`: every run (or a page of them), newest first, with its verdict,
  datasets and commit; :func:`count_runs`: how many there are;
* :func:`resolve_run`: a run named by its id, a unique prefix, ``latest`` or ``-N``;
* :func:`trend`: one metric's mean per run (oldest to newest), per pipeline, with the
  aggregate gate's bound;
* :func:`headline_trends`: the same for every headline metric (the ones a baseline
  always compares) and every metric a gate bounded, in the newest runs, in one query;
* :func:`run_cases`: one run's cases (filterable) and aggregates;
* :func:`compare_runs`: two runs through the baseline comparison (paired tests, case
  flips, the terminal's verdict lines) plus the per-case answer and score differences.

This module is their import path: the answers' shapes are in :mod:`.shapes`, the
runs in :mod:`.runs`, the trends in :mod:`.trends`, the comparison in :mod:`.compare`.
"""

from __future__ import annotations

from pytest_ragproof.history.compare import compare_runs
from pytest_ragproof.history.runs import count_runs, list_runs, resolve_run, run_cases
from pytest_ragproof.history.shapes import (
    CaseDiff,
    CaseRow,
    RunComparison,
    RunDetail,
    RunSummary,
    TrendPoint,
    TrendSeries,
)
from pytest_ragproof.history.trends import headline_trends, known_metrics, parse_metric, trend

__all__ = [
    "CaseDiff",
    "CaseRow",
    "RunComparison",
    "RunDetail",
    "RunSummary",
    "TrendPoint",
    "TrendSeries",
    "compare_runs",
    "count_runs",
    "headline_trends",
    "known_metrics",
    "list_runs",
    "parse_metric",
    "resolve_run",
    "run_cases",
    "trend",
]
