"""Regression baselines: compare a run with a committed results document.

A library (no pytest import), usable from a notebook on two results dicts::

    from pytest_ragproof.regression import compare

    comparison = compare(current, baseline, tolerances=["qa:recall@5=0.02"], alpha=0.05)
    comparison.passed, comparison.gate_failures, comparison.to_dict()

:mod:`.stats` holds the paired tests (exact McNemar, Wilcoxon signed-rank) and the
paired t interval of a mean change, :mod:`.proportions` Newcombe's interval of a
change of a 0/1 metric, :mod:`.tolerance` the ``[SELECTOR:]METRIC=DELTA`` grammar
and :mod:`.compare` the comparison itself, :mod:`.comparison` its result types. The pytest side
lives in ``pytest_ragproof.verdict.baseline``.
"""

from __future__ import annotations

from pytest_ragproof.regression.compare import AggregateChange, CaseFlip, Comparison, compare
from pytest_ragproof.regression.proportions import paired_proportion_interval
from pytest_ragproof.regression.stats import (
    MeanInterval,
    PairedTest,
    mcnemar_exact,
    paired_mean_interval,
    paired_test,
    wilcoxon_signed_rank,
)
from pytest_ragproof.regression.tolerance import Tolerance, parse_tolerance, parse_tolerances

__all__ = [
    "AggregateChange",
    "CaseFlip",
    "Comparison",
    "MeanInterval",
    "PairedTest",
    "Tolerance",
    "compare",
    "mcnemar_exact",
    "paired_mean_interval",
    "paired_proportion_interval",
    "paired_test",
    "parse_tolerance",
    "parse_tolerances",
    "wilcoxon_signed_rank",
]
