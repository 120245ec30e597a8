"""The benchmarks' verdicts: a figure over its limit makes the script exit 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks._common import Comparison, Limits, compare_measured

REPO = Path(__file__).resolve().parents[2]


def test_a_figure_over_its_limit_gives_exit_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    limits = Limits()
    assert limits.check("fast enough", Comparison(1.0, 1.2), 1.5)
    assert not limits.check("too slow", Comparison(1.0, 1.8), 1.5)
    assert limits.exit_status() == 1
    out = capsys.readouterr().out
    assert "fast enough: baseline 1000.0 ms, candidate 1200.0 ms, ratio 1.20 (limit 1.50) OK" in out
    assert "OVER LIMIT: too slow: 1.80 > 1.50" in out


def test_within_limits_gives_0_and_quick_mode_never_fails() -> None:
    within = Limits()
    within.check("fast enough", Comparison(1.0, 1.0), 1.1)
    assert within.exit_status() == 0
    quick = Limits(quick=True)
    quick.check("too slow at a tiny size", Comparison(1.0, 9.0), 1.5)
    quick.fail("a heavy module was imported")
    assert quick.over and quick.exit_status() == 0


def test_the_figure_is_the_median_of_the_paired_rounds() -> None:
    base = iter([1.0, 2.0, 1.0])
    cand = iter([1.5, 2.0, 3.0])
    cmp = compare_measured(lambda: next(base), lambda: next(cand), rounds=3)
    assert cmp.paired == (1.5, 1.0, 3.0)
    assert cmp.ratio == 1.5  # not the ratio of the medians, 2.0 / 1.0


def test_a_script_runs_in_quick_mode() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_metrics.py"), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "retrieval metric set: baseline" in proc.stdout
    assert "quick mode: the script ran; limits are not checked" in proc.stdout


def test_best_of_n_compares_the_fastest_run_of_each_side(monkeypatch: pytest.MonkeyPatch) -> None:
    import benchmarks._common as common

    # Each callable returns the time it "took"; timed() reports it instead of measuring.
    monkeypatch.setattr(common, "timed", lambda fn: fn())
    base = iter([1.2, 1.0, 1.1])
    cand = iter([1.8, 1.9, 1.6])
    cmp = common.compare_best(lambda: next(base), lambda: next(cand), rounds=3)
    assert (cmp.baseline_s, cmp.candidate_s) == (1.0, 1.6)
    assert cmp.ratio == 1.6  # not the median of the per-round ratios (1.5)
