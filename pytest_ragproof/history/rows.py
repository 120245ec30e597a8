"""A results document (``ragproof.results/1``) as the rows of a history store.

Pure (no SQLAlchemy): :func:`run_rows` turns one document into its ``runs`` row,
its ``case_results`` rows and its ``aggregates`` rows; :func:`document` turns the
rows back into the slim results document a comparison reads (cases with their kind,
question type, tags, status and scores; datasets, settings, thresholds).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pytest_ragproof.results.document import RESULTS_FORMAT

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Results, ThresholdRow

__all__ = ["RunRows", "content_digest", "document", "run_rows", "run_time"]

#: The release that wrote a document, in its ``versions``; an aggregate's mean in its values.
VERSION_KEY = "pytest-ragproof"
MEAN = "mean"
_RUN_ID_TIME = re.compile(r"^(\d{8}T\d{6}Z)-")


def dumps(value: Any) -> str:
    """Compact, deterministic JSON for the store's JSON columns."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_digest(doc: Mapping[str, Any]) -> str:
    """sha256 of the whole document as canonical JSON: the same results file added twice
    (or a copy of it downloaded again) is one run."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_time(run_id: str | None) -> str | None:
    """The UTC time a run id carries (``20260101T120000Z-…`` -> ``2026-01-01T12:00:00Z``)."""
    match = _RUN_ID_TIME.match(run_id or "")
    if match is None:
        return None
    when = datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class RunRows:
    """One run as rows (without the run's primary key, known only once it is inserted)."""

    run: dict[str, Any]
    cases: list[dict[str, Any]]
    aggregates: list[dict[str, Any]]


def _mean_gates(doc: Results) -> dict[tuple[str, str, str], ThresholdRow]:
    """The aggregate thresholds on a mean, by (pipeline, selector, metric): first one wins."""
    out: dict[tuple[str, str, str], ThresholdRow] = {}
    for t in doc.thresholds:
        if t.scope != "aggregate" or t.aggregator not in (None, "mean"):
            continue
        out.setdefault((str(t.pipeline), str(t.selector), str(t.metric)), t)
    return out


def run_rows(parsed: Mapping[str, Any], source: str, model: Results | None = None) -> RunRows:
    """The rows of one results document (checked on read: :func:`read_results`);
    ``model``: its typed model when the caller has it (else built here)."""
    from pytest_ragproof.results.schema import as_model

    doc = as_model(parsed if model is None else model, source)
    digest = content_digest(parsed)
    run_id = doc.run_id or f"digest-{digest[:16]}"
    added = now_text()
    when = run_time(doc.run_id)
    cases = doc.cases
    n_passed, n_failed, n_error = (
        sum(1 for c in cases if c.status == s) for s in ("passed", "failed", "error")
    )
    datasets = [
        {"path": d.path, "sha256": d.sha256, "frozen": d.frozen, "cases": d.cases}
        for d in doc.datasets
    ]
    shard = None if doc.run is None else doc.run.shard
    git = None if doc.run is None else doc.run.git
    run = {
        "run_id": run_id,
        "digest": digest,
        "time": when or added,
        "time_known": when is not None,
        "added_at": added,
        "source": source,
        "passed": doc.passed,
        "n_cases": len(cases),
        "n_passed": n_passed,
        "n_failed": n_failed,
        "n_error": n_error,
        "dataset_sha256": ",".join(d.sha256 for d in doc.datasets),
        "datasets": dumps(datasets),
        "pipelines": dumps(doc.pipelines),
        "git_commit": None if git is None else git.commit,
        "git_branch": None if git is None else git.branch,
        "ragproof_version": doc.versions.get(VERSION_KEY),
        "shard": None if shard is None else f"{shard.k}/{shard.n}",
        "redacted": doc.redacted,
        "settings": dumps(doc.settings.model_dump(mode="json", exclude_unset=True)),
        "thresholds": dumps(
            [
                t.model_dump(mode="json", exclude_unset=True, exclude={"worst"})
                for t in doc.thresholds
            ]
        ),
        "notes": dumps(doc.notes),
    }
    case_rows = [
        {
            "pipeline": c.pipeline,
            "case_id": c.id,
            "dataset": c.dataset,
            "kind": c.kind,
            "question_type": c.question_type or "simple",
            "tags": dumps(c.tags),
            "status": c.status,
            "error_type": c.error_type,
            "latency_s": c.latency_s,
            "answer": c.answer,
            "failures": dumps([f.expression for f in c.failures]),
            "scores": dumps(c.metrics),
        }
        for c in cases
    ]
    gates = _mean_gates(doc)
    agg_rows = []
    for a in doc.aggregates:
        gate = gates.get((a.pipeline, a.selector, a.metric))
        agg_rows.append(
            {
                "pipeline": a.pipeline,
                "selector": a.selector,
                "metric": a.metric,
                "n": a.n,
                "n_error": a.n_error,
                "n_missing": a.n_missing,
                "mean": a.values.get(MEAN),
                "stats": dumps({k: v for k, v in a.values.items() if k != MEAN}),
                "bound": None if gate is None else str(gate.bound),
                "verdict": None if gate is None else str(gate.verdict),
            }
        )
    return RunRows(run, case_rows, agg_rows)


def document(run: Any, cases: Sequence[Any]) -> dict[str, Any]:
    """The slim results document of a stored run (its ``runs`` row and ``case_results``
    rows, as SQLAlchemy returns them): what a comparison reads."""
    return {
        "format": RESULTS_FORMAT,
        "run_id": run.run_id,
        "passed": bool(run.passed),
        "datasets": json.loads(run.datasets),
        "settings": json.loads(run.settings),
        "pipelines": json.loads(run.pipelines),
        "thresholds": json.loads(run.thresholds),
        "cases": [
            {
                "id": c.case_id,
                "pipeline": c.pipeline,
                "dataset": c.dataset,
                "kind": c.kind,
                "question_type": c.question_type,
                "tags": json.loads(c.tags),
                "status": c.status,
                "metrics": json.loads(c.scores),
            }
            for c in cases
        ],
    }
