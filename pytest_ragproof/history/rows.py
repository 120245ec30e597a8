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
from typing import Any

from pytest_ragproof.results.document import RESULTS_FORMAT

__all__ = ["RunRows", "content_digest", "document", "run_rows", "run_time"]

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


def _mean_gates(doc: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """The aggregate thresholds on a mean, by (pipeline, selector, metric): first one wins."""
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for t in doc.get("thresholds") or []:
        if t.get("scope") != "aggregate" or t.get("aggregator") not in (None, "mean"):
            continue
        out.setdefault((str(t["pipeline"]), str(t["selector"]), str(t["metric"])), t)
    return out


def _git(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    run = doc.get("run") or {}
    git = run.get("git") if isinstance(run, Mapping) else None
    return git if isinstance(git, Mapping) else {}


def run_rows(doc: Mapping[str, Any], source: str) -> RunRows:
    """The rows of one results document (checked on read: :func:`read_results`)."""
    digest = content_digest(doc)
    run_id = str(doc.get("run_id") or f"digest-{digest[:16]}")
    added = now_text()
    when = run_time(doc.get("run_id"))
    cases = doc.get("cases") or []
    counts = {s: sum(1 for c in cases if c.get("status") == s) for s in ("passed", "failed")}
    datasets = [
        {k: d.get(k) for k in ("path", "sha256", "frozen", "cases")}
        for d in doc.get("datasets") or []
    ]
    run_section = doc.get("run") or {}
    shard = run_section.get("shard") if isinstance(run_section, Mapping) else None
    git = _git(doc)
    run = {
        "run_id": run_id,
        "digest": digest,
        "time": when or added,
        "time_known": when is not None,
        "added_at": added,
        "source": source,
        "passed": bool(doc.get("passed")),
        "n_cases": len(cases),
        "n_passed": counts["passed"],
        "n_failed": counts["failed"],
        "n_error": sum(1 for c in cases if c.get("status") == "error"),
        "dataset_sha256": ",".join(str(d["sha256"]) for d in datasets),
        "datasets": dumps(datasets),
        "pipelines": dumps(list(doc.get("pipelines") or [])),
        "git_commit": git.get("commit"),
        "git_branch": git.get("branch"),
        "ragproof_version": (doc.get("versions") or {}).get("pytest-ragproof"),
        "shard": f"{shard['k']}/{shard['n']}" if isinstance(shard, Mapping) else None,
        "redacted": bool(doc.get("redacted")),
        "settings": dumps(doc.get("settings") or {}),
        "thresholds": dumps(
            [{k: v for k, v in t.items() if k != "worst"} for t in doc.get("thresholds") or []]
        ),
        "notes": dumps(list(doc.get("notes") or [])),
    }
    case_rows = [
        {
            "pipeline": str(c["pipeline"]),
            "case_id": str(c["id"]),
            "dataset": str(c.get("dataset", "")),
            "kind": str(c["kind"]),
            "question_type": str(c.get("question_type") or "simple"),
            "tags": dumps(list(c.get("tags") or [])),
            "status": str(c["status"]),
            "error_type": c.get("error_type"),
            "latency_s": c.get("latency_s"),
            "answer": c.get("answer") if isinstance(c.get("answer"), str) else None,
            "failures": dumps([str(f.get("expression")) for f in c.get("failures") or []]),
            "scores": dumps(c.get("metrics") or {}),
        }
        for c in cases
    ]
    gates = _mean_gates(doc)
    agg_rows = []
    for a in doc.get("aggregates") or []:
        key = (str(a["pipeline"]), str(a["selector"]), str(a["metric"]))
        values = dict(a.get("values") or {})
        gate = gates.get(key)
        agg_rows.append(
            {
                "pipeline": key[0],
                "selector": key[1],
                "metric": key[2],
                "n": int(a.get("n") or 0),
                "n_error": int(a.get("n_error") or 0),
                "n_missing": int(a.get("n_missing") or 0),
                "mean": values.pop("mean", None),
                "stats": dumps(values),
                "bound": None if gate is None else str(gate.get("bound")),
                "verdict": None if gate is None else str(gate.get("verdict")),
            }
        )
    return RunRows(run, case_rows, agg_rows)


def document(run: Mapping[str, Any], cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The slim results document of a stored run: what a comparison reads."""
    return {
        "format": RESULTS_FORMAT,
        "run_id": run["run_id"],
        "passed": bool(run["passed"]),
        "datasets": json.loads(run["datasets"]),
        "settings": json.loads(run["settings"]),
        "pipelines": json.loads(run["pipelines"]),
        "thresholds": json.loads(run["thresholds"]),
        "cases": [
            {
                "id": c["case_id"],
                "pipeline": c["pipeline"],
                "dataset": c["dataset"],
                "kind": c["kind"],
                "question_type": c["question_type"],
                "tags": json.loads(c["tags"]),
                "status": c["status"],
                "metrics": json.loads(c["scores"]),
            }
            for c in cases
        ],
    }
