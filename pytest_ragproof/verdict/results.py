"""The results file (``ragproof.results/1``): building, writing and reading it."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_ragproof.verdict.gates import Aggregate, ThresholdResult
from pytest_ragproof.verdict.record import CaseRecord

RESULTS_FORMAT = "ragproof.results/1"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("pytest-ragproof", "pytest"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover - bare checkout
            out[dist] = "unknown"
    return out


def dataset_entry(path: str, dataset: Any, evaluated: int) -> dict[str, Any]:
    """One entry of the results' ``datasets`` list."""
    return {
        "path": path,
        "sha256": dataset.sha256,
        "frozen": dataset.frozen,
        "cases": len(dataset.cases),
        "evaluated": evaluated,
    }


def build_results(
    *,
    passed: bool,
    datasets: Sequence[dict[str, Any]],
    records: Sequence[CaseRecord],
    aggregates: Sequence[Aggregate],
    thresholds: Sequence[ThresholdResult],
    settings: dict[str, Any],
    redact: bool,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    from pytest_ragproof.reporting.components import component_scores

    ordered = sorted(records, key=lambda r: (r.pipeline, r.dataset, r.id))
    cases = [(r.redacted() if redact else r).to_dict() for r in ordered]
    return {
        "format": RESULTS_FORMAT,
        "passed": passed,
        "redacted": redact,
        "datasets": list(datasets),
        "versions": versions(),
        "settings": settings,
        "pipelines": sorted({r.pipeline for r in records}),
        "cases": cases,
        "components": component_scores(cases),
        "aggregates": [a.to_dict() for a in aggregates],
        "thresholds": [t.to_dict() for t in thresholds],
        "notes": list(notes),
    }


def dumps(results: dict[str, Any]) -> str:
    """Deterministic, diff-friendly JSON: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(results, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_results(results: dict[str, Any], path: Path) -> None:
    from pytest_ragproof.fileio import write_atomic

    write_atomic(path, dumps(results))


def read_results(path: Path) -> dict[str, Any]:
    from pytest_ragproof.errors import ConfigError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read results file {path}: {type(exc).__name__}") from None
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ConfigError(f"{path} is not a ragproof results file (format {RESULTS_FORMAT})")
    return data
