"""``--ragproof-baseline``: write a baseline, or compare the run with one.

Called by the session at ``pytest_sessionfinish`` on the controller, which has
every case's record in ``results["cases"]`` (also under xdist).

* With ``--ragproof-baseline-update`` the results document is written at the
  baseline path and nothing is gated. The file is made diff-friendly: sorted
  keys, cases in (pipeline, dataset, id) order, and no volatile timing fields —
  each case's ``latency_s`` (top level and in ``metrics``), latency aggregates
  and latency threshold rows are dropped, so re-running an unchanged pipeline
  rewrites an identical file apart from what the pipeline itself answered.
  Latency is therefore never compared with a baseline (it depends on the
  machine); latency thresholds still gate every run on their own.
* Otherwise the baseline is read and compared (:func:`pytest_ragproof.regression.compare`),
  ``results["baseline"]`` is set, and the outcome carries the gate failures and
  the lines of the terminal summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.regression.compare import AggregateChange, Comparison, compare
from pytest_ragproof.runner.results import read_results, write_results

__all__ = ["BaselineOutcome", "apply_baseline", "baseline_document", "summary_lines"]

VOLATILE_METRICS = frozenset({"latency_s"})
_LIST_LIMIT = 10


@dataclass
class BaselineOutcome:
    """What the session does with a baseline: gate failures and summary lines."""

    gate_failures: list[str] = field(default_factory=list)
    summary_lines: list[str] = field(default_factory=list)


def baseline_document(results: Mapping[str, Any]) -> dict[str, Any]:
    """The results document as committed at the baseline path (volatile fields removed)."""
    doc = {k: v for k, v in results.items() if k != "baseline"}
    cases = []
    for case in results.get("cases") or []:
        case = {k: v for k, v in case.items() if k not in VOLATILE_METRICS}
        metrics = case.get("metrics") or {}
        case["metrics"] = {k: v for k, v in metrics.items() if k not in VOLATILE_METRICS}
        cases.append(case)
    doc["cases"] = cases
    doc["aggregates"] = [
        a for a in results.get("aggregates") or [] if a.get("metric") not in VOLATILE_METRICS
    ]
    doc["thresholds"] = [
        t for t in results.get("thresholds") or [] if t.get("metric") not in VOLATILE_METRICS
    ]
    return doc


def _path(config: pytest.Config) -> Path:
    return (config.invocation_params.dir / str(options.get(config, "baseline"))).resolve()


def _how_to_create(config: pytest.Config, path: Path) -> str:
    shown = options.get(config, "baseline")
    return (
        f"create it from a good run with `pytest --ragproof-baseline={shown} "
        f"--ragproof-baseline-update` and commit {path.name}"
    )


def _alpha(config: pytest.Config) -> float:
    raw = options.get(config, "regression_alpha")
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(
            f"--ragproof-regression-alpha must be a number between 0 and 1, got {raw!r}; "
            "e.g. --ragproof-regression-alpha 0.05"
        ) from None


def apply_baseline(config: pytest.Config, results: dict[str, Any]) -> BaselineOutcome:
    """Write the baseline (``--ragproof-baseline-update``) or compare the run with it."""
    path = _path(config)
    if options.get(config, "baseline_update"):
        doc = baseline_document(results)
        write_results(doc, path)
        results["baseline"] = {"updated": str(path)}
        line = f"ragproof baseline: written to {path} ({len(doc['cases'])} case record(s))"
        if not results.get("passed", True):
            line += "; this run did not pass, so the baseline records its failures"
        return BaselineOutcome([], [line, "ragproof baseline: commit it to compare later runs"])
    if not path.is_file():
        return BaselineOutcome(
            [f"baseline {path} does not exist; {_how_to_create(config, path)}"], []
        )
    try:
        baseline = read_results(path)
    except ConfigError as exc:
        return BaselineOutcome([f"baseline: {exc}; {_how_to_create(config, path)}"], [])
    try:
        comparison = compare(
            results,
            # A plain --ragproof-report file may serve as a baseline: drop its timings
            # too, so latency is never compared across machines.
            baseline_document(baseline),
            tolerances=options.get(config, "regression_tolerance"),
            alpha=_alpha(config),
            allow_dataset_change=bool(options.get(config, "baseline_allow_dataset_change")),
            fail_on_case_regression=bool(options.get(config, "fail_on_case_regression")),
        )
    except ConfigError as exc:
        return BaselineOutcome([f"baseline comparison not run: {exc}"], [])
    results["baseline"] = {"path": str(path), **comparison.to_dict()}
    return BaselineOutcome(list(comparison.gate_failures), summary_lines(comparison, path.name))


def _ids(flips: Sequence[Any]) -> str:
    shown = ", ".join(
        f.id if f.before is None or f.now is None else f"{f.id} ({f.before} -> {f.now})"
        for f in flips[:_LIST_LIMIT]
    )
    more = len(flips) - _LIST_LIMIT
    return shown + (f", … (+{more})" if more > 0 else "")


def _num(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _table(rows: Sequence[AggregateChange]) -> str:
    from tabulate import tabulate

    body = [
        [
            a.pipeline,
            a.selector,
            a.metric,
            a.n,
            _num(a.baseline_mean),
            _num(a.current_mean),
            _num(a.delta, "+.3f"),
            f"{a.tolerance:g}",
            "-" if a.test is None else f"{a.test.p_value:.3g}",
            a.verdict.upper() if a.failed else a.verdict,
        ]
        for a in rows
    ]
    headers = ["pipeline", "selector", "metric", "n", "baseline", "now", "delta", "tol", "p"]
    return tabulate(body, headers=[*headers, "verdict"], tablefmt="simple", disable_numparse=True)


def summary_lines(comparison: Comparison, name: str) -> list[str]:
    """The terminal summary of a comparison (the gate failures are printed by the session)."""
    if comparison.refused is not None:
        return [f"ragproof baseline {name}: not compared (dataset changed)"]
    lines = [f"ragproof baseline {name} (alpha {comparison.alpha:g}):"]
    pipelines = sorted(
        {f.pipeline for f in comparison.flips} | {a.pipeline for a in comparison.aggregates}
    )
    for pipeline in pipelines:
        counts = {
            change: comparison.flips_of(change, pipeline)
            for change in ("improved", "regressed", "new", "removed")
        }
        lines.append(
            f"  cases [{pipeline}]: "
            + ", ".join(f"{len(flips)} {change}" for change, flips in counts.items())
        )
        for change, flips in counts.items():
            if flips:
                lines.append(f"    {change}: {_ids(flips)}")
    if comparison.aggregates:
        lines.extend("  " + row for row in _table(comparison.aggregates).splitlines())
    if comparison.flips_of("regressed") and not comparison.fail_on_case_regression:
        lines.append(
            "  case flips do not gate the run (--ragproof-fail-on-case-regression makes them)"
        )
    lines.extend(f"  note: {note}" for note in comparison.notes)
    return lines
