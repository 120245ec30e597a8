"""The paired tests: hand-computed values and a cross-check with SciPy over random inputs."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from pytest_ragproof.regression.stats import (
    EXACT_WILCOXON_MAX_N,
    mcnemar_exact,
    paired_mean_interval,
    paired_test,
    student_t_quantile,
    wilcoxon_signed_rank,
)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# -- McNemar ------------------------------------------------------------------


def test_mcnemar_hand_computed() -> None:
    assert mcnemar_exact(5, 0).p_value == pytest.approx(2 / 32)
    result = mcnemar_exact(9, 1)
    assert (result.statistic, result.n, result.method) == (1.0, 10, "mcnemar-exact")
    assert result.p_value == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(3, 3).p_value == 1.0
    assert mcnemar_exact(0, 0).p_value == 1.0 and mcnemar_exact(0, 0).n == 0
    assert mcnemar_exact(4, 7).p_value == mcnemar_exact(7, 4).p_value


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 3)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_matches_scipy_binomtest(worse: int, better: int) -> None:
    if worse + better == 0:
        return
    ours = mcnemar_exact(worse, better)
    ref = scipy_stats.binomtest(worse, worse + better, 0.5, alternative="two-sided")
    assert close(ours.p_value, float(ref.pvalue)), (worse, better, ours, ref.pvalue)


def test_mcnemar_stays_exact_for_large_n() -> None:
    # 2**2000 overflows a float; the integer arithmetic must not.
    result = mcnemar_exact(1100, 900)
    ref = scipy_stats.binomtest(900, 2000, 0.5)
    assert close(result.p_value, float(ref.pvalue))
    assert 0 < result.p_value < 1e-4


# -- Wilcoxon -----------------------------------------------------------------


def scipy_wilcoxon(x: list[float], y: list[float], method: str) -> tuple[float, float]:
    ref = scipy_stats.wilcoxon(
        x, y, zero_method="wilcox", correction=True, alternative="two-sided", method=method
    )
    return float(ref.statistic), float(ref.pvalue)


def check_against_scipy(x: list[float], y: list[float]) -> None:
    diffs = [a - b for a, b in zip(x, y, strict=True)]
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        assert wilcoxon_signed_rank(diffs).p_value == 1.0
        return
    ours = wilcoxon_signed_rank(diffs)
    tied = len({abs(d) for d in nonzero}) < len(nonzero)
    expect_exact = len(nonzero) <= EXACT_WILCOXON_MAX_N and not tied
    assert ours.method == ("wilcoxon-exact" if expect_exact else "wilcoxon-normal")
    assert ours.n == len(nonzero)
    statistic, p = scipy_wilcoxon(x, y, "exact" if expect_exact else "asymptotic")
    assert close(ours.statistic, statistic), (x, y)
    assert close(ours.p_value, p), (x, y, ours, p)


# Values on a dyadic grid: differences are exact in binary floating point, so SciPy
# and the rounding to 12 decimals see the same numbers.
fine = st.integers(0, 1024).map(lambda i: i / 1024)
coarse = st.integers(0, 8).map(lambda i: i / 8)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(fine, fine), min_size=1, max_size=60))
def test_wilcoxon_matches_scipy_on_mostly_distinct_differences(
    pairs: list[tuple[float, float]],
) -> None:
    check_against_scipy([a for a, _ in pairs], [b for _, b in pairs])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(coarse, coarse), min_size=1, max_size=80))
def test_wilcoxon_matches_scipy_with_ties_and_zeros(pairs: list[tuple[float, float]]) -> None:
    check_against_scipy([a for a, _ in pairs], [b for _, b in pairs])


@pytest.mark.parametrize("seed", range(20))
def test_wilcoxon_matches_scipy_on_continuous_values(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([3, 10, 25, 26, 40, 200])
    x = [rng.random() for _ in range(n)]
    y = [v - rng.gauss(0.05 * (seed % 3), 0.2) for v in x]
    check_against_scipy(x, y)


def test_wilcoxon_exact_hand_computed() -> None:
    result = wilcoxon_signed_rank([1, 2, 3, 4, 5])
    assert (result.method, result.statistic, result.n) == ("wilcoxon-exact", 0.0, 5)
    assert result.p_value == pytest.approx(2 / 32)
    # T- = 1 + 2 = 3 of 15: P(T <= 3) = #{{}, {1}, {2}, {3}, {1,2}} / 32 = 5/32.
    result = wilcoxon_signed_rank([-1, -2, 3, 4, 5])
    assert result.statistic == 3.0 and result.p_value == pytest.approx(10 / 32)


def test_wilcoxon_normal_hand_computed() -> None:
    # Twelve identical drops: one tie group of 12, T+ = 0, mean 39,
    # variance 12*13*25/24 - (12**3 - 12)/48 = 126.75, continuity 0.5.
    result = wilcoxon_signed_rank([-0.5] * 12)
    z = (39 - 0.5) / math.sqrt(126.75)
    assert result.method == "wilcoxon-normal"
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)))


def test_wilcoxon_drops_zeros_and_ties_float_noise() -> None:
    assert wilcoxon_signed_rank([0, 0, 1, 2]) == wilcoxon_signed_rank([1, 2])
    assert wilcoxon_signed_rank([0.1 + 0.2 - 0.3]).n == 0
    # 0.3 - 0.1 and 0.5 - 0.3 differ in the last bit; they are one tie group here.
    result = wilcoxon_signed_rank([0.3 - 0.1, 0.5 - 0.3, 0.7])
    assert result.method == "wilcoxon-normal"
    assert wilcoxon_signed_rank([]).p_value == 1.0


def test_wilcoxon_rejects_non_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        wilcoxon_signed_rank([1.0, math.nan])


def test_paired_test_picks_the_test() -> None:
    binary = paired_test([-1, -1, -1, 1, 0], binary=True)
    assert binary.method == "mcnemar-exact" and binary.n == 4 and binary.statistic == 1
    assert paired_test([-0.5, 0.25], binary=False).method == "wilcoxon-exact"


# -- the paired t interval ------------------------------------------------------


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 29, 30, 100, 999, 10_000])
@pytest.mark.parametrize("p", [0.5, 0.6, 0.9, 0.95, 0.975, 0.995, 0.9995, 0.025, 0.001])
def test_student_t_quantile_matches_scipy(df: int, p: float) -> None:
    assert math.isclose(
        student_t_quantile(p, df), float(scipy_stats.t.ppf(p, df)), rel_tol=1e-9, abs_tol=1e-12
    )


def test_student_t_quantile_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="strictly between"):
        student_t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="degrees of freedom"):
        student_t_quantile(0.9, 0)


def check_interval(before: list[float], after: list[float], level: float = 0.95) -> None:
    ours = paired_mean_interval([a - b for a, b in zip(after, before, strict=True)], level)
    assert ours is not None and ours.method == "paired-t" and ours.level == level
    ref = scipy_stats.ttest_rel(after, before).confidence_interval(confidence_level=level)
    assert math.isclose(ours.low, float(ref.low), rel_tol=1e-9, abs_tol=1e-12), (ours, ref)
    assert math.isclose(ours.high, float(ref.high), rel_tol=1e-9, abs_tol=1e-12), (ours, ref)


@pytest.mark.parametrize("seed", range(30))
def test_paired_interval_matches_scipy_on_continuous_values(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([2, 3, 5, 12, 40, 300, 2000])
    before = [rng.random() for _ in range(n)]
    after = [min(1.0, max(0.0, b + rng.gauss(0.03 * (seed % 3 - 1), 0.15))) for b in before]
    check_interval(before, after, level=rng.choice([0.9, 0.95, 0.99]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=2))
def test_paired_interval_matches_scipy_on_binary_metrics(pairs: list[tuple[float, float]]) -> None:
    before = [b for b, _ in pairs]
    after = [a for _, a in pairs]
    if len({a - b for b, a in pairs}) == 1:  # no spread: SciPy says nan, we say the value
        interval = paired_mean_interval([a - b for b, a in pairs])
        assert interval is not None and interval.low == interval.high == after[0] - before[0]
        return
    check_interval(before, after)


def test_paired_interval_hand_computed() -> None:
    # differences 0, 1, 2: mean 1, sd 1, t(0.975, 2) = 4.302652729911275
    interval = paired_mean_interval([0.0, 1.0, 2.0])
    assert interval is not None
    half = 4.302652729911275 / math.sqrt(3)
    assert interval.low == pytest.approx(1 - half) and interval.high == pytest.approx(1 + half)
    assert interval.to_dict() == {
        "method": "paired-t",
        "level": 0.95,
        "low": interval.low,
        "high": interval.high,
    }


def test_paired_interval_needs_two_pairs_and_finite_values() -> None:
    assert paired_mean_interval([]) is None
    assert paired_mean_interval([0.5]) is None
    with pytest.raises(ValueError, match="finite"):
        paired_mean_interval([0.5, math.inf])
    with pytest.raises(ValueError, match="level"):
        paired_mean_interval([0.5, 0.25], level=1.0)
