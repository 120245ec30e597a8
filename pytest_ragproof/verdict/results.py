"""Building the results document of a run from its records, aggregates and thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

from pytest_ragproof.results.document import RESULTS_FORMAT, versions
from pytest_ragproof.verdict.gates import Aggregate, ThresholdResult
from pytest_ragproof.verdict.record import CaseRecord


def dataset_entry(path: str, dataset: Any, evaluated: int) -> dict[str, Any]:
    """One entry of the results' ``datasets`` list."""
    return {
        "path": path,
        "sha256": dataset.sha256,
        "frozen": dataset.frozen,
        "cases": len(dataset.cases),
        "evaluated": evaluated,
    }


def new_run_id() -> str:
    """A run's id: UTC time to the second and 32 random bits (``20260101T120000Z-1a2b3c4d``).

    Every output of a run carries it (results file, Markdown, HTML), so a reader can tell
    that files belong to the same run; nothing else depends on it.
    """
    import secrets
    from datetime import UTC, datetime

    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


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
    entries: bool = True,
) -> dict[str, Any]:
    """The results document of a run.

    ``entries=False``: no output of the run reads its case entries (a pytest run without
    a results file, baseline, export or history): the document has no ``cases``, and the
    component scores read each record's entry as it is made, instead of a list of every
    case's dict held beside the records at the end of the run.
    """
    from pytest_ragproof.reporting.components import component_scores

    ordered = sorted(records, key=lambda r: (r.pipeline, r.dataset, r.id))
    listed: dict[str, Any] = {}
    if entries:
        cases = listed["cases"] = [(r.redacted() if redact else r).to_dict() for r in ordered]
        components = component_scores(cases)
    else:
        components = component_scores(Entries(ordered))
    return {
        "format": RESULTS_FORMAT,
        "run_id": new_run_id(),
        "passed": passed,
        "redacted": redact,
        "datasets": list(datasets),
        "versions": versions(),
        "settings": settings,
        "pipelines": sorted({r.pipeline for r in records}),
        **listed,
        "components": components,
        "aggregates": [a.to_dict() for a in aggregates],
        "thresholds": [t.to_dict() for t in thresholds],
        "notes": list(notes),
    }


class Entries(Sequence[dict[str, Any]]):
    """The case entries of ``records`` (:meth:`CaseRecord.to_dict`), each made when read."""

    def __init__(self, records: Sequence[CaseRecord]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [r.to_dict() for r in self._records[index]]
        return self._records[index].to_dict()
