"""Shared helpers for the benchmark scripts.

Every figure is a ratio against a baseline measured in the same run, because
the machines are shared and noisy: absolute times vary, ratios much less.
Baseline and candidate are interleaved; the figure is the median of the
per-round ratios (each round runs the two back to back, so a slow stretch of the
machine slows both sides of that round), beside the median times.

Each script exits 1 when a figure is over its limit (:class:`Limits`). With
``--quick`` (or ``RAGPROOF_BENCH_QUICK=1``) a script runs small sizes and one
round to check that it still runs; its figures are printed, not checked
(``.ci/run`` does this).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

QUICK_ENV = "RAGPROOF_BENCH_QUICK"


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


def compare_best(
    baseline: Callable[[], object], candidate: Callable[[], object], *, rounds: int = 5
) -> Comparison:
    """Run baseline and candidate alternately ``rounds`` times; compare their best times.

    For in-process work of a few seconds, the fastest of N runs is the one least
    slowed by the machine's other processes, on both sides; the figure is
    best candidate / best baseline.
    """
    base: list[float] = []
    cand: list[float] = []
    for _ in range(rounds):
        base.append(timed(baseline))
        cand.append(timed(candidate))
    return Comparison(min(base), min(cand))


def compare_measured(
    baseline: Callable[[], float], candidate: Callable[[], float], *, rounds: int = 5
) -> Comparison:
    """As :func:`compare`, for callables that return their own measurement in seconds.

    Used for CPU time: a child process's CPU seconds barely change when other
    processes load the machine, where its wall time measures the neighbours too.
    """
    base: list[float] = []
    cand: list[float] = []
    for _ in range(rounds):
        base.append(baseline())
        cand.append(candidate())
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


def add_quick(parser: argparse.ArgumentParser) -> None:
    """The ``--quick`` flag every script takes."""
    parser.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get(QUICK_ENV) == "1",
        help=f"small sizes, one round: check the script runs, not its limits (or {QUICK_ENV}=1)",
    )


class Limits:
    """The figures of one script against their limits, and the exit status they give.

    ``check`` prints the figure's line and remembers whether it is over its limit;
    ``exit_status`` is 1 when one is (0 in quick mode, whose sizes are too small
    for a figure to mean anything).
    """

    def __init__(self, *, quick: bool = False) -> None:
        self.quick = quick
        self.over: list[str] = []

    def check(self, name: str, comparison: Comparison, limit: float) -> bool:
        print(report(name, comparison, limit), flush=True)
        if comparison.ratio > limit:
            self.over.append(f"{name}: {comparison.ratio:.2f} > {limit:.2f}")
            return False
        return True

    def check_ratio(self, name: str, ratios: list[float], limit: float) -> bool:
        """A figure that is itself a ratio (e.g. measured / ideal): its median over rounds."""
        ratio = statistics.median(ratios)
        verdict = "OK" if ratio <= limit else "OVER LIMIT"
        spread = f"; rounds {min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1 else ""
        print(f"{name}: {ratio:.2f} (limit {limit:.2f}) {verdict}{spread}", flush=True)
        if ratio > limit:
            self.over.append(f"{name}: {ratio:.2f} > {limit:.2f}")
            return False
        return True

    def fail(self, what: str) -> None:
        """A figure that is not a ratio (e.g. a module that must not be imported)."""
        print(f"{what} OVER LIMIT", flush=True)
        self.over.append(what)

    def exit_status(self) -> int:
        if self.quick:
            print("quick mode: the script ran; limits are not checked at these sizes")
            return 0
        for line in self.over:
            print(f"OVER LIMIT: {line}")
        return 1 if self.over else 0
