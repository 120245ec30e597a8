"""Newcombe's interval of a change in a 0/1 metric over paired cases."""

from __future__ import annotations

import itertools

import pytest

from pytest_ragproof.regression import compare
from pytest_ragproof.regression.proportions import paired_proportion_interval
from tests.regression.test_compare import only, recall_runs


def table(a: int, b: int, c: int, d: int) -> tuple[list[int], list[int]]:
    """Pairs (before, after): a of (1, 1), b of (0, 1), c of (1, 0), d of (0, 0)."""
    before = [1] * a + [0] * b + [1] * c + [0] * d
    after = [1] * a + [1] * b + [0] * c + [0] * d
    return before, after


def test_the_published_example() -> None:
    # Fagerland, Lydersen & Laake (2013), Table 1: n11 59, n12 6, n21 16, n22 80; the
    # difference of the row and column margins -0.0621, Newcombe's interval
    # [-0.1186, -0.0046].
    before, after = table(59, 6, 16, 80)  # after: the row margin, before: the column one
    interval = paired_proportion_interval(before, after)
    assert interval is not None and interval.method == "newcombe-paired"
    assert interval.level == 0.95
    assert interval.low == pytest.approx(-0.1186, abs=5e-5)
    assert interval.high == pytest.approx(-0.0046, abs=5e-5)


def test_every_small_table_stays_within_minus_one_and_one_around_its_change() -> None:
    for n in range(2, 9):
        for a, b, c in itertools.product(range(n + 1), repeat=3):
            if a + b + c > n:
                continue
            before, after = table(a, b, c, n - a - b - c)
            interval = paired_proportion_interval(before, after)
            assert interval is not None
            change = (b - c) / n
            assert -1.0 <= interval.low <= change <= interval.high <= 1.0, (a, b, c, n)


def test_fewer_than_two_pairs_and_wrong_input() -> None:
    assert paired_proportion_interval([1], [0]) is None
    with pytest.raises(ValueError, match="0 or 1"):
        paired_proportion_interval([0.5, 1], [1, 1])
    with pytest.raises(ValueError, match="pair up"):
        paired_proportion_interval([1, 1], [1])


def test_a_compared_0_1_metric_gets_the_proportions_interval_a_graded_one_the_t() -> None:
    # two pairs, one lost: the t interval was [-6.85, 5.85]
    now, base = recall_runs([1.0, 1.0], [1.0, 0.0], metric="hit@5")
    hit = only(compare(now, base), "hit@5")
    assert hit.delta == -0.5 and hit.interval.method == "newcombe-paired"
    assert -1.0 <= hit.interval.low < -0.5 < hit.interval.high <= 1.0
    now, base = recall_runs([1.0, 0.5], [0.5, 0.5])
    assert only(compare(now, base), "recall@5").interval.method == "paired-t"
