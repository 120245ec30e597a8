"""Paired significance tests for baseline comparisons, standard library only.

Two tests, both two-sided, both over the cases a run shares with its baseline:

* :func:`mcnemar_exact` for 0/1 metrics (``hit@5``, ``exact_match``,
  ``abstained`` …): only the discordant pairs carry information. Under the null
  hypothesis a discordant pair is equally likely to have gone either way, so the
  smaller of the two discordant counts is compared with Binomial(n, 1/2), n the
  number of discordant pairs: ``p = min(1, 2 * P(X <= min(b, c)))``, computed
  from exact integer binomial coefficients.

* :func:`wilcoxon_signed_rank` for continuous metrics (``recall@5``,
  ``token_f1`` …): zero differences are dropped (Wilcoxon's original
  treatment), absolute differences are ranked with average ranks for ties, and
  the statistic is ``T = min(T+, T-)``.

  - With n <= 25 non-zero differences and no tied absolute differences the
    p-value is exact: ``2 * P(T <= t)`` from the distribution of the sum of a
    random subset of ranks 1..n, counted by dynamic programming.
  - Otherwise the normal approximation: mean ``n(n+1)/4``, variance
    ``n(n+1)(2n+1)/24 - sum(t^3 - t)/48`` over the tie groups of size t, and a
    continuity correction of 1/2 towards the mean (never past it):
    ``z = max(0, |T+ - mean| - 1/2) / sd``, ``p = erfc(|z| / sqrt(2))``.

  Differences are rounded to 12 decimal places before ranking, so values that
  are equal up to floating-point noise (``0.3 - 0.1`` and ``0.5 - 0.3``) tie,
  and ``0.1 + 0.2 - 0.3`` counts as no change.

With the test, :func:`paired_mean_interval` gives the interval of the mean
difference a chart draws as a whisker: the paired Student t interval
``mean ± t(1 - (1 - level) / 2, n - 1) · sd / sqrt(n)`` over the same differences,
its quantile from the regularized incomplete beta function (a continued fraction,
inverted by bisection). It needs no random numbers, so a report is the same every
time. It is a picture of the uncertainty, not the gate: the gate stays the
rank-based test above, so an interval that leaves out 0 can sit beside a p-value
above alpha (the two tests ask different questions of skewed or tied differences).

These agree with ``scipy.stats.binomtest(k, n, 0.5)`` and
``scipy.stats.wilcoxon(x, y, zero_method="wilcox", correction=True,
method="exact" | "asymptotic")`` and ``scipy.stats.ttest_rel(x, y).confidence_interval()``;
the test suite checks that over many random
inputs (SciPy is a development dependency only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_ragproof.numeric import ranks_and_ties

__all__ = [
    "EXACT_WILCOXON_MAX_N",
    "MeanInterval",
    "PairedTest",
    "mcnemar_exact",
    "min_pairs",
    "paired_mean_interval",
    "paired_test",
    "student_t_quantile",
    "too_few_pairs",
    "wilcoxon_signed_rank",
]

EXACT_WILCOXON_MAX_N = 25
_DIFF_DECIMALS = 12


@dataclass(frozen=True)
class PairedTest:
    """The outcome of one paired test.

    ``statistic`` is ``min(b, c)`` for McNemar (b, c the discordant counts) and
    ``min(T+, T-)`` for Wilcoxon; ``n`` is the number of pairs the test used
    (discordant pairs, or non-zero differences); ``method`` is
    ``mcnemar-exact``, ``wilcoxon-exact`` or ``wilcoxon-normal``.
    """

    method: str
    statistic: float
    p_value: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_exact(worse: int, better: int) -> PairedTest:
    """Exact two-sided McNemar test from the two discordant counts."""
    if worse < 0 or better < 0:
        raise ValueError("discordant counts must be non-negative")
    n = worse + better
    k = min(worse, better)
    if n == 0:
        return PairedTest("mcnemar-exact", 0.0, 1.0, 0)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    # Integer true division is correctly rounded, however large n is.
    p = min(1.0, (2 * tail) / (1 << n))
    return PairedTest("mcnemar-exact", float(k), p, n)


def _exact_lower_tail(n: int, t: int) -> int:
    """How many of the 2**n sign assignments give a positive-rank sum <= t."""
    max_sum = n * (n + 1) // 2
    counts = [0] * (max_sum + 1)
    counts[0] = 1
    top = 0
    for rank in range(1, n + 1):
        top += rank
        for s in range(top, rank - 1, -1):
            counts[s] += counts[s - rank]
    return sum(counts[: t + 1])


def wilcoxon_signed_rank(differences: Sequence[float]) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test on paired differences (after - before)."""
    diffs = [round(float(d), _DIFF_DECIMALS) for d in differences]
    if any(not math.isfinite(d) for d in diffs):
        raise ValueError("differences must be finite")
    nonzero = [d for d in diffs if d != 0.0]
    n = len(nonzero)
    if n == 0:
        return PairedTest("wilcoxon-normal", 0.0, 1.0, 0)
    ranks, groups = ranks_and_ties([abs(d) for d in nonzero])
    t_plus = math.fsum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    t_minus = n * (n + 1) / 2 - t_plus
    statistic = min(t_plus, t_minus)
    ties = any(g > 1 for g in groups)
    if n <= EXACT_WILCOXON_MAX_N and not ties:
        tail = _exact_lower_tail(n, int(statistic))
        p = min(1.0, (2 * tail) / (1 << n))
        return PairedTest("wilcoxon-exact", statistic, p, n)
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(g**3 - g for g in groups) / 48
    if variance <= 0:  # pragma: no cover - n >= 1 leaves a positive variance
        return PairedTest("wilcoxon-normal", statistic, 1.0, n)
    z = max(0.0, abs(t_plus - mean) - 0.5) / math.sqrt(variance)
    return PairedTest("wilcoxon-normal", statistic, math.erfc(z / math.sqrt(2)), n)


def paired_test(differences: Sequence[float], *, binary: bool) -> PairedTest:
    """McNemar on the signs of the differences of a 0/1 metric, else Wilcoxon.

    ``differences`` are ``after - before`` (or oriented so that positive means
    better); the tests are two-sided, so the orientation only names the counts.
    """
    if binary:
        worse = sum(1 for d in differences if d < 0)
        better = sum(1 for d in differences if d > 0)
        return mcnemar_exact(worse, better)
    return wilcoxon_signed_rank(differences)


def min_pairs(alpha: float) -> int:
    """The fewest informative pairs with which an exact two-sided test can reach p < alpha.

    All n pairs moving one way give the smallest p either test can give, 2 / 2**n.
    """
    n = 1
    while 2 / 2**n >= alpha:
        n += 1
    return n


def too_few_pairs(test: PairedTest, needed: int, alpha: float) -> str:
    if test.method == "mcnemar-exact":
        return (
            f"too few discordant pairs to test: {test.n}; exact McNemar needs at least "
            f"{needed} in one direction for p < {alpha:g}"
        )
    return (
        f"too few changed cases to test: {test.n}; the Wilcoxon signed-rank test needs at "
        f"least {needed} moving one way for p < {alpha:g}"
    )


# -- the interval of a mean difference -------------------------------------------------

_CF_MAX_TERMS = 400
_CF_TINY = 1e-300
_CF_EPS = 1e-15


@dataclass(frozen=True)
class MeanInterval:
    """A two-sided confidence interval of a mean paired difference."""

    method: str  # "paired-t"
    level: float  # 0.95
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
    result = d
    for m in range(1, _CF_MAX_TERMS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _CF_TINY else _CF_TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _CF_TINY else _CF_TINY
            result *= c * d
        if abs(c * d - 1.0) < _CF_EPS:
            break
    return result


def _regularized_beta(a: float, b: float, x: float) -> float:
    """``I_x(a, b)``, the regularized incomplete beta function, for a, b > 0."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The fraction converges fast below the mean of the distribution; use the symmetry
    # I_x(a, b) = 1 - I_(1-x)(b, a) above it.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def student_t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be strictly between 0 and 1")
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if p == 0.5:
        return 0.0
    tail = min(p, 1.0 - p)
    # P(|T| > t) = I_x(df/2, 1/2) with x = df / (df + t^2); that tail is 2 * tail.
    # I_x rises with x, so bisect on x: the t we want has I_x(df/2, 1/2) = 2 * tail.
    low, high = 0.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if _regularized_beta(df / 2, 0.5, mid) < 2 * tail:
            low = mid
        else:
            high = mid
    x = (low + high) / 2
    t = math.sqrt(df * (1.0 - x) / x)
    return t if p > 0.5 else -t


def paired_mean_interval(differences: Sequence[float], level: float = 0.95) -> MeanInterval | None:
    """The paired t interval of the mean of ``differences`` (after - before).

    ``None`` with fewer than two differences (no spread to measure). Differences that
    are all equal give an interval of zero width at their value.
    """
    if not 0.0 < level < 1.0:
        raise ValueError("level must be strictly between 0 and 1")
    values = [float(d) for d in differences]
    if any(not math.isfinite(d) for d in values):
        raise ValueError("differences must be finite")
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    variance = math.fsum((d - mean) ** 2 for d in values) / (n - 1)
    half = student_t_quantile(1.0 - (1.0 - level) / 2, n - 1) * math.sqrt(variance / n)
    return MeanInterval("paired-t", level, mean - half, mean + half)
