"""What ``check_results`` requires of a results document (merges, baselines, the history).

The models of :mod:`pytest_ragproof.results.models` with the fields those readers read
required, and the kinds and statuses literal, in the order the first error is reported:
the messages ``check_results`` always gave. Each is a subclass, so a checked document
is a :class:`~pytest_ragproof.results.models.Results` like any other.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool, StrictStr

from pytest_ragproof.results.models import (
    Case,
    Count,
    Dataset,
    Failure,
    Kind,
    Number,
    Results,
    Run,
    Settings,
    Shard,
    Status,
)

__all__ = ["CheckedCase", "CheckedDataset", "CheckedFailure", "CheckedResults", "CheckedRun"]


class CheckedFailure(Failure):
    expression: StrictStr
    metric: StrictStr
    observed: Number | None
    bound: StrictStr
    reason: StrictStr


class CheckedCase(Case):
    id: StrictStr
    pipeline: StrictStr
    dataset: StrictStr
    nodeid: StrictStr
    kind: Kind
    status: Status
    metrics: dict[StrictStr, Number]
    failures: list[CheckedFailure] = Field(default_factory=list)  # type: ignore[assignment]


class CheckedDataset(Dataset):
    path: StrictStr
    sha256: StrictStr
    frozen: StrictBool
    cases: Count


class CheckedRun(Run):
    shard: Shard | None
    population: Count
    datasets: dict[StrictStr, Count]
    deselected: list[StrictStr]
    skipped: list[StrictStr]
    missing: list[StrictStr]
    stopped: StrictBool
    not_selected: list[StrictStr]
    notes: list[StrictStr]
    config: dict[StrictStr, Any]


class CheckedResults(Results):
    format: Literal["ragproof.results/1"]
    passed: StrictBool
    datasets: list[CheckedDataset]  # type: ignore[assignment]
    settings: Settings
    cases: list[CheckedCase]  # type: ignore[assignment]
    run: CheckedRun | None = None
