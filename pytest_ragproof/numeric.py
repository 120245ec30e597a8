"""Small numeric helpers shared by the verdict, the judges' agreement and the regression
tests: one percentile, one ranking with ties, one test for 0/1 values. Imports nothing."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of an ascending sequence, linearly interpolated between
    order statistics (numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    if lo == hi:
        return float(sorted_values[lo])
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo))


def ranks_and_ties(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """1-based ranks of ``values``, ties sharing the mean of the ranks they span, and the
    sizes of the tie groups (ascending order of value)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    groups: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mean = (i + j + 2) / 2  # mean of the 1-based positions i+1 .. j+1
        for k in range(i, j + 1):
            ranks[order[k]] = mean
        groups.append(j - i + 1)
        i = j + 1
    return ranks, groups


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    return ranks_and_ties(values)[0]


def is_binary(values: Iterable[float]) -> bool:
    """Are all values 0 or 1 (labels of a yes/no question, a pass/fail metric)?"""
    return all(v in (0, 1) for v in values)
