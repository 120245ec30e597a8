"""The terminal summary: one table per run, errors, flaky cases, worst cases, latency."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pytest_ragproof.verdict.gates import INCOMPLETE, ThresholdResult, row_errors, row_values
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.thresholds import aggregate


def fmt_score(value: float | None) -> str:
    """A score as the summary's tables print it: 3 decimals, ``-`` when there is none."""
    return "-" if value is None else f"{value:.3f}"


class ThresholdRowLike(Protocol):
    """A threshold row as the table reads it: the run's :class:`ThresholdResult`, or the
    typed row of a results document (:class:`pytest_ragproof.results.models.ThresholdRow`)."""

    @property
    def pipeline(self) -> str | None: ...
    @property
    def selector(self) -> str | None: ...
    @property
    def metric(self) -> str | None: ...
    @property
    def scope(self) -> str | None: ...
    @property
    def aggregator(self) -> str | None: ...
    @property
    def bound(self) -> str | None: ...
    @property
    def n(self) -> int | None: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def gated(self) -> bool: ...


def threshold_table(results: Sequence[ThresholdResult], records: Sequence[CaseRecord]) -> str:
    """The summary's threshold table of a run (its rows and its case records)."""
    return format_threshold_rows(
        results,
        # The values each row's verdict was decided on (an aggregate's error cases keep
        # the values they have: the row of a passed gate never reads "-").
        [row_values(records, r.threshold, r.scope, r.pipeline) for r in results],
        [row_errors(records, r.threshold, r.scope, r.pipeline) for r in results],
    )


def format_threshold_rows(
    rows: Sequence[ThresholdRowLike],
    values: Sequence[Sequence[float]],
    errors: Sequence[int | None],
) -> str:
    """The threshold table from threshold rows (the run's, or a results document's) and, per
    row, the values it was decided on (:func:`~pytest_ragproof.verdict.gates.row_values`)
    and the cases of its population not scored (:func:`~pytest_ragproof.verdict.gates.row_errors`;
    ``None``: not known): the terminal summary and ``ragproof history show`` print the same
    table."""
    from tabulate import tabulate

    table = []
    for r, vals, n_error in zip(rows, values, errors, strict=True):
        stats = aggregate(list(vals)) if vals else {}
        scope = r.scope
        bound = r.bound if scope == "case" else f"{r.aggregator} {r.bound}"
        verdict = str(r.verdict)
        if verdict in ("pass", "fail", INCOMPLETE):
            verdict = verdict.upper()
        if scope == "aggregate" and not r.gated:
            verdict += " (not gated)"
        table.append(
            [
                r.pipeline,
                r.selector,
                r.metric,
                r.n,
                fmt_score(stats.get("mean")),
                fmt_score(stats.get("min")),
                f"{bound} ({scope})",
                verdict,
                "-" if n_error is None else (f"{n_error} error" if n_error else ""),
            ]
        )
    headers = ["pipeline", "selector", "metric", "n", "mean", "min", "threshold", "verdict"]
    return tabulate(
        table,
        headers=[*headers, "not scored"],
        tablefmt="simple",
        disable_numparse=True,
    )


def worst_cases(records: Sequence[CaseRecord], limit: int) -> list[str]:
    failing = [r for r in records if r.status != "passed"]
    failing.sort(key=lambda r: (r.status != "error", -len(r.failures), r.pipeline, r.id))
    lines = []
    for r in failing[:limit]:
        if r.status == "error":
            detail = f"error {r.error_type}"
        else:
            detail = "; ".join(f.line() for f in r.failures)
        lines.append(f"{r.pipeline} {r.nodeid}: {detail}")
    return lines


FLAKY_SHOWN = 10


def flaky_line(records: Sequence[CaseRecord]) -> str | None:
    """``--ragproof-repeat``: the cases some but not all of whose repeats passed."""
    from pytest_ragproof.results.document import is_flaky

    flaky = [r for r in records if is_flaky(r)]
    if not flaky:
        return None
    several = len({r.pipeline for r in records}) > 1
    shown = []
    for r in flaky[:FLAKY_SHOWN]:
        repeats = r.repeats or {}
        where = f" [{r.pipeline}]" if several else ""
        shown.append(f"{r.id}{where} {repeats['passed']}/{repeats['n']} ({r.status})")
    more = f", … (+{len(flaky) - FLAKY_SHOWN})" if len(flaky) > FLAKY_SHOWN else ""
    return f"flaky (0 < pass rate < 1): {len(flaky)} case(s): " + ", ".join(shown) + more


def latency_line(records: Sequence[CaseRecord]) -> str | None:
    parts = []
    for pipeline in sorted({r.pipeline for r in records}):
        values = [
            r.latency_s for r in records if r.pipeline == pipeline and r.latency_s is not None
        ]
        if values:
            stats = aggregate(values)
            parts.append(f"{pipeline} p50 {stats['p50']:.3f}s p95 {stats['p95']:.3f}s")
    return ("latency: " + "; ".join(parts)) if parts else None
