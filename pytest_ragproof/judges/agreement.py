"""Agreement between a judge's scores and human labels, with bootstrap intervals.

The figures are pure Python; their intervals come from ``resample.py``'s NumPy
bootstrap (numpy comes with the ``llm`` and ``review`` extras).

- 0/1 labels: the judge's score is a 1 when it is at least the cut (0.5 by default);
  accuracy, precision, recall and F1 of the label 1 (and of the label 0, which is
  what hallucination detectors report), and Cohen's κ.
- graded labels: Spearman's ρ (Pearson's r of average ranks) and Kendall's τ-b
  (ties in either variable corrected, O(n log n) by Knight's method).

A figure that is undefined on the data (precision when the judge never said 1, κ
when both raters used a single class, a correlation of a constant) is ``None`` with
the reason, never 0 or NaN. Intervals are 95% percentile bootstrap intervals over
items resampled with replacement by ``numpy.random.default_rng(seed)``; resamples on
which a figure is undefined are left out of its interval and counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_ragproof.judges.resample import Interval, bootstrap
from pytest_ragproof.numeric import average_ranks

Stat = Callable[[Sequence[float], Sequence[float]], float | None]

BINARY_FIGURES = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "kappa",
    "precision_0",
    "recall_0",
    "f1_0",
)
GRADED_FIGURES = ("spearman", "kendall_tau_b")

#: Why a figure has no value on the items measured.
UNDEFINED: dict[str, str] = {
    "precision": "the judge gave no 1",
    "recall": "no item is labelled 1",
    "f1": "precision and recall are both 0 or undefined",
    "precision_0": "the judge gave no 0",
    "recall_0": "no item is labelled 0",
    "f1_0": "precision and recall of 0 are both 0 or undefined",
    "kappa": "chance agreement is 1 (judge and labels each use a single class)",
    "accuracy": "no item",
    "spearman": "the labels or the scores are all equal",
    "kendall_tau_b": "the labels or the scores are all equal",
}


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def _f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None or p + r == 0:
        return None
    return 2 * p * r / (p + r)


def binary_figures(labels: Sequence[float], predicted: Sequence[float]) -> dict[str, float | None]:
    """Every 0/1 figure of ``predicted`` (0/1) against ``labels`` (0/1)."""
    c = confusion(labels, predicted)
    return figures_of(c["tp"], c["fp"], c["fn"], c["tn"])


def figures_of(tp: int, fp: int, fn: int, tn: int) -> dict[str, float | None]:
    """The 0/1 figures of a confusion table (label 1 is the positive class)."""
    n = tp + fp + fn + tn
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    precision_0, recall_0 = _ratio(tn, tn + fn), _ratio(tn, tn + fp)
    accuracy = _ratio(tp + tn, n)
    kappa: float | None = None
    if n:
        chance = ((tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)) / (n * n)
        if chance < 1:
            kappa = ((tp + tn) / n - chance) / (1 - chance)
    return {
        "accuracy": accuracy,
        "precision": precision,
        "recall": recall,
        "f1": _f1(precision, recall),
        "kappa": kappa,
        "precision_0": precision_0,
        "recall_0": recall_0,
        "f1_0": _f1(precision_0, recall_0),
    }


def confusion(labels: Sequence[float], predicted: Sequence[float]) -> dict[str, int]:
    out = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for y, p in zip(labels, predicted, strict=True):
        out[("t" if bool(y) == bool(p) else "f") + ("p" if p else "n")] += 1
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    return pearson(average_ranks(x), average_ranks(y))


def _tied_pairs(sorted_values: Sequence[float]) -> int:
    total = run = 0
    for i in range(1, len(sorted_values) + 1):
        if i < len(sorted_values) and sorted_values[i] == sorted_values[i - 1]:
            run += 1
        else:
            total += run * (run + 1) // 2
            run = 0
    return total


def _swaps(values: list[float]) -> int:
    """Sort ``values`` in place (bottom-up merge sort); return the inversions removed."""
    n = len(values)
    src, dst = values[:], values[:]
    width, swaps = 1, 0
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if src[j] < src[i]:  # equal values are a tie, not a discordant pair
                    dst[k] = src[j]
                    swaps += mid - i
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            dst[k:hi] = src[i:mid] + src[j:hi]
        src, dst = dst, src
        width *= 2
    values[:] = src
    return swaps


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (ties corrected), by Knight's O(n log n) method."""
    n = len(x)
    if n < 2:
        return None
    pairs = sorted(zip(x, y, strict=True))
    n0 = n * (n - 1) // 2
    xs = [p[0] for p in pairs]
    tied_x = _tied_pairs(xs)
    tied_xy = 0
    run = 0
    for i in range(1, n + 1):
        if i < n and pairs[i] == pairs[i - 1]:
            run += 1
        else:
            tied_xy += run * (run + 1) // 2
            run = 0
    ys = [p[1] for p in pairs]
    swaps = _swaps(ys)  # ys is now sorted
    tied_y = _tied_pairs(ys)
    den = (n0 - tied_x) * (n0 - tied_y)
    if den == 0:
        return None
    s = n0 - tied_x - tied_y + tied_xy - 2 * swaps
    return max(-1.0, min(1.0, s / math.sqrt(den)))


def graded_figures(labels: Sequence[float], scores: Sequence[float]) -> dict[str, float | None]:
    return {"spearman": spearman(labels, scores), "kendall_tau_b": kendall_tau_b(labels, scores)}


def kappa_gate(
    figures: Mapping[str, Mapping[str, Any]],
    confusion: Mapping[str, int] | None,
    floor: float,
    *,
    noun: str = "item",
) -> tuple[bool, str]:
    """Does Cohen's κ of 0/1 figures meet ``floor``, and the line that says so.

    κ is undefined when judge and labels each use one single value: then (and only
    then, on at least one item) they agree on every item, which meets any floor; the
    line says κ is undefined and why it passes. With no item there is nothing to meet.
    """
    kappa = (figures.get("kappa") or {}).get("value")
    if kappa is not None:
        if kappa < floor:
            return False, f"κ = {kappa:.3f} is below the floor"
        return True, f"κ = {kappa:.3f} meets the floor"
    c = confusion or {}
    n = sum(c.values())
    if n and not c.get("fp") and not c.get("fn"):
        value = 1 if c.get("tp") else 0
        return True, (
            f"κ undefined: one value; agreement 100% on {n} {noun}(s) (all {value}), "
            "so the floor is met"
        )
    return False, f"κ is undefined (no {noun} measured), so the floor is not met"


def figure_entry(value: float | None, name: str, interval: Interval | None) -> dict[str, Any]:
    """One figure as reports write it: value (6 decimals), why it is undefined, its interval."""
    entry: dict[str, Any] = {"value": None if value is None else round(value, 6)}
    if value is None:
        entry["undefined"] = UNDEFINED[name]
    if interval is not None:
        entry["ci95"] = (
            None
            if interval.low is None or interval.high is None
            else [round(interval.low, 6), round(interval.high, 6)]
        )
        entry["resamples"] = interval.resamples
    return entry


def measure(
    labels: Sequence[float],
    scores: Sequence[float],
    *,
    binary: bool,
    cut: float,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The figures of ``scores`` against ``labels`` with their intervals.

    0/1 labels (``binary``): a score of at least ``cut`` counts as a 1; the result has
    ``cut``, ``confusion`` and the 0/1 figures. Graded labels: Spearman and Kendall.
    ``figures`` is empty when there is no item.
    """
    out: dict[str, Any] = {}
    if binary:
        predicted = [1.0 if s >= cut else 0.0 for s in scores]
        point = binary_figures(labels, predicted)
        intervals = bootstrap(
            labels, predicted, binary=True, figures_of=figures_of, resamples=resamples, seed=seed
        )
        out["cut"] = cut
        out["confusion"] = confusion(labels, predicted)
    else:
        point = graded_figures(labels, scores)
        intervals = bootstrap(
            labels, scores, binary=False, figures_of=figures_of, resamples=resamples, seed=seed
        )
    out["figures"] = (
        {name: figure_entry(v, name, intervals.get(name)) for name, v in point.items()}
        if labels
        else {}
    )
    return out
