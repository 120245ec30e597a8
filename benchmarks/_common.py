"""Shared helpers for the benchmark scripts.

Every figure is a ratio against a baseline measured in the same run, because
the machines are shared and noisy: absolute times vary, ratios much less.
Baseline and candidate are interleaved; the figure is the median of the
per-round ratios (each round runs the two back to back, so a slow stretch of the
machine slows both sides of that round), beside the median times.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    """Median timings of a baseline and a candidate measured interleaved."""

    baseline_s: float
    candidate_s: float
    paired: tuple[float, ...] = ()  # candidate/baseline of each round, when interleaved

    @property
    def ratio(self) -> float:
        if self.paired:
            return statistics.median(self.paired)
        return self.candidate_s / self.baseline_s if self.baseline_s > 0 else float("inf")


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one call of ``fn`` in seconds."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(
    baseline: Callable[[], object], candidate: Callable[[], object], *, rounds: int = 5
) -> Comparison:
    """Run baseline and candidate alternately ``rounds`` times; return the medians."""
    base: list[float] = []
    cand: list[float] = []
    for _ in range(rounds):
        base.append(timed(baseline))
        cand.append(timed(candidate))
    paired = tuple(c / b for b, c in zip(base, cand, strict=True) if b > 0)
    return Comparison(statistics.median(base), statistics.median(cand), paired)


def report(name: str, comparison: Comparison, limit: float) -> str:
    """One line for the notes: baseline, candidate, ratio and the limit it must meet."""
    verdict = "OK" if comparison.ratio <= limit else "OVER LIMIT"
    rounds = ""
    if len(comparison.paired) > 1:
        rounds = f"; rounds {min(comparison.paired):.2f}-{max(comparison.paired):.2f}"
    return (
        f"{name}: baseline {comparison.baseline_s * 1000:.1f} ms, "
        f"candidate {comparison.candidate_s * 1000:.1f} ms, "
        f"ratio {comparison.ratio:.2f} (limit {limit:.2f}) {verdict}{rounds}"
    )
