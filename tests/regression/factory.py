"""Results documents (``ragproof.results/1``) built by hand for unit tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

SHA_A = "a" * 64
SHA_B = "b" * 64


def case(
    cid: str,
    metrics: dict[str, float] | None = None,
    *,
    status: str = "passed",
    kind: str = "qa",
    pipeline: str = "p",
    question_type: str = "simple",
    tags: Sequence[str] = (),
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": cid,
        "dataset": "cases.frozen.json",
        "nodeid": f"cases.frozen.json::{cid}",
        "kind": kind,
        "question_type": question_type,
        "tags": list(tags),
        "pipeline": pipeline,
        "status": status,
        "metrics": dict(metrics or {}),
        "failures": [],
        "latency_s": 0.01,
        "error_type": "ValueError" if status == "error" else None,
        **extra,
    }


def threshold(metric: str, selector: str = "qa", pipeline: str = "p") -> dict[str, Any]:
    return {
        "expression": f"{selector}:{metric}>=0",
        "scope": "aggregate",
        "pipeline": pipeline,
        "selector": selector,
        "metric": metric,
        "aggregator": "mean",
        "bound": ">= 0",
        "observed": 0.5,
        "n": 1,
        "verdict": "pass",
        "gated": True,
    }


def results(
    cases: Iterable[dict[str, Any]],
    *,
    sha: str = SHA_A,
    thresholds: Iterable[dict[str, Any]] = (),
    passed: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    cases = list(cases)
    return {
        "format": "ragproof.results/1",
        "passed": passed,
        "redacted": False,
        "datasets": [
            {
                "path": "cases.frozen.json",
                "sha256": sha,
                "frozen": True,
                "cases": len({c["id"] for c in cases}),
                "evaluated": len({c["id"] for c in cases}),
            }
        ],
        "versions": {"python": "3.11"},
        "settings": {"k": [1, 3, 5, 10]},
        "pipelines": sorted({c["pipeline"] for c in cases}),
        "cases": cases,
        "aggregates": [],
        "thresholds": list(thresholds),
        "notes": [],
        **extra,
    }
