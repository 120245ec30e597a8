"""What a baseline comparison found: case flips, aggregate changes, the comparison.

The result types of :func:`pytest_ragproof.regression.compare.compare`; each has a
``to_dict()`` for the results document's ``baseline`` section.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_ragproof.metrics.selector import metric_label
from pytest_ragproof.regression.stats import MeanInterval, PairedTest
from pytest_ragproof.regression.tolerance import Tolerance

__all__ = ["PYTEST_FLAGS", "WORST_SHOWN", "AggregateChange", "CaseFlip", "Comparison", "Flags"]

# How many of the cases that got worse a regression names (as failed aggregates do).
WORST_SHOWN = 5


@dataclass(frozen=True)
class CaseFlip:
    """One case whose status changed, or that only one of the runs has."""

    pipeline: str
    id: str
    change: str  # improved | regressed | new | removed
    before: str | None  # status in the baseline
    now: str | None  # status in this run

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AggregateChange:
    """One (pipeline, selector, metric) compared over the paired cases."""

    pipeline: str
    selector: str
    metric: str
    n: int  # paired cases
    n_unpaired: int  # cases of the selector scored in only one run (or an error in either)
    baseline_mean: float | None
    current_mean: float | None
    delta: float | None  # current_mean - baseline_mean
    worse_by: float | None  # how far the mean moved in the worse direction (< 0: better)
    tolerance: float
    test: PairedTest | None
    # regression | not significant | too few pairs | within tolerance | improved | unchanged
    # | no data
    verdict: str
    failed: bool  # this regression gates the run
    note: str | None = None  # why a drop could not be tested (too few pairs)
    # The paired cases that got worse most (up to WORST_SHOWN): (id, baseline, now).
    worst: tuple[tuple[str, float, float], ...] = ()
    # The 95% interval of ``delta``: Newcombe's for 0/1 values, else paired t (None:
    # fewer than two pairs).
    interval: MeanInterval | None = None

    @property
    def label(self) -> str:
        return metric_label(self.selector, self.metric)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["test"] = None if self.test is None else self.test.to_dict()
        out["interval"] = None if self.interval is None else self.interval.to_dict()
        out["worst"] = [{"id": c, "baseline": b, "now": n} for c, b, n in self.worst]
        return out

    def worst_text(self) -> str:
        """``qa-01 1 -> 0.667, qa-07 1 -> 0.5``: the cases that got worse most."""
        return ", ".join(f"{cid} {before:.4g} -> {now:.4g}" for cid, before, now in self.worst)


@dataclass(frozen=True)
class Flags:
    """The ways out a comparison's messages name, in the words of the caller's options.

    A comparison is asked for by a pytest run (``--ragproof-baseline``, and ``evaluate()``
    with the same settings) and by ``ragproof history compare``, whose options are its
    own (``--allow-dataset-change``): each names the flags its user can pass.
    """

    #: what to do about a baseline of other dataset content, besides allowing it
    refresh: str = "refresh the baseline with --ragproof-baseline-update"
    allow_dataset_change: str = (
        "--ragproof-baseline-allow-dataset-change (allow_dataset_change=True from Python)"
    )
    fail_on_case_regression: str = "--ragproof-fail-on-case-regression"
    #: what to do about a baseline that shares no case with the run
    other_baseline: str = "point --ragproof-baseline at the baseline of this dataset and pipeline"
    alpha_example: str = "--ragproof-regression-alpha 0.05"


#: The flags of a pytest run (and of ``evaluate()``'s matching keywords).
PYTEST_FLAGS = Flags()


@dataclass
class Comparison:
    """Everything a baseline comparison found; ``to_dict()`` goes into ``results["baseline"]``."""

    alpha: float
    tolerances: list[Tolerance]
    fail_on_case_regression: bool
    baseline_datasets: list[dict[str, Any]]
    current_datasets: list[dict[str, Any]]
    dataset_changed: bool
    refused: str | None = None
    flips: list[CaseFlip] = field(default_factory=list)
    aggregates: list[AggregateChange] = field(default_factory=list)
    gate_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the options the caller's messages name (not part of ``to_dict()``)
    flags: Flags = PYTEST_FLAGS

    @property
    def passed(self) -> bool:
        return not self.gate_failures

    def flips_of(self, change: str, pipeline: str | None = None) -> list[CaseFlip]:
        return [
            f
            for f in self.flips
            if f.change == change and (pipeline is None or f.pipeline == pipeline)
        ]

    @property
    def regressions(self) -> list[AggregateChange]:
        return [a for a in self.aggregates if a.failed]

    def to_dict(self) -> dict[str, Any]:
        counts = {
            change: len(self.flips_of(change))
            for change in ("improved", "regressed", "new", "removed")
        }
        return {
            "passed": self.passed,
            "alpha": self.alpha,
            "tolerances": [t.expression for t in self.tolerances],
            "fail_on_case_regression": self.fail_on_case_regression,
            "baseline_datasets": self.baseline_datasets,
            "current_datasets": self.current_datasets,
            "dataset_changed": self.dataset_changed,
            "refused": self.refused,
            "counts": counts,
            "flips": [f.to_dict() for f in self.flips],
            "aggregates": [a.to_dict() for a in self.aggregates],
            "gate_failures": list(self.gate_failures),
            "notes": list(self.notes),
        }
