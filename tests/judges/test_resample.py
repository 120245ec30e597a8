"""The NumPy bootstrap computes, per resample, the figures the pure-Python ones give
on the same drawn items (issue 39.4), and is seeded."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pytest_ragproof.judges import resample
from pytest_ragproof.judges.agreement import figures_of, kendall_tau_b, measure, spearman


def _data(n: int, grades: int, seed: int) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    labels = [float(rng.randrange(grades)) for _ in range(n)]
    scores = [round(rng.random(), 1) if i % 3 else labels[i] / grades for i in range(n)]
    return labels, scores


@pytest.mark.parametrize(("n", "grades"), [(40, 3), (25, 5), (7, 2), (30, 30)])
def test_each_resample_has_the_pure_python_figures_of_its_items(n: int, grades: int) -> None:
    labels, scores = _data(n, grades, n)
    picks = np.random.default_rng(3).integers(0, n, size=(50, n))
    drawn = resample._graded(np, np.array(labels), np.array(scores), picks)
    for row, items in enumerate(picks.tolist()):
        x = [labels[i] for i in items]
        y = [scores[i] for i in items]
        for name, pure in (("spearman", spearman(x, y)), ("kendall_tau_b", kendall_tau_b(x, y))):
            got = drawn[name][row]
            if pure is None:
                assert got is None, name
            else:
                assert got == pytest.approx(pure, abs=1e-12), name


def test_a_small_chunk_gives_the_same_kendall_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    labels, scores = _data(30, 4, 1)
    picks = np.random.default_rng(0).integers(0, 30, size=(20, 30))
    whole = resample._graded(np, np.array(labels), np.array(scores), picks)
    monkeypatch.setattr(resample, "_CELLS_PER_CHUNK", 1)
    assert resample._graded(np, np.array(labels), np.array(scores), picks) == whole


def test_binary_resamples_count_the_drawn_cells() -> None:
    labels = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    predicted = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    picks = np.random.default_rng(5).integers(0, 6, size=(30, 6))
    drawn = resample._binary(np, np.array(labels), np.array(predicted), picks, figures_of)
    for row, items in enumerate(picks.tolist()):
        c = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
        for i in items:
            y, p = labels[i], predicted[i]
            c[("t" if y == p else "f") + ("p" if p else "n")] += 1
        expected = figures_of(c["tp"], c["fp"], c["fn"], c["tn"])
        assert {name: values[row] for name, values in drawn.items()} == expected


def test_intervals_are_seeded_and_an_undefined_resample_is_left_out() -> None:
    labels, scores = _data(60, 3, 2)
    first = measure(labels, scores, binary=False, cut=0.5, resamples=200, seed=7)
    assert measure(labels, scores, binary=False, cut=0.5, resamples=200, seed=7) == first
    other = measure(labels, scores, binary=False, cut=0.5, resamples=200, seed=8)
    assert other["figures"]["spearman"]["ci95"] != first["figures"]["spearman"]["ci95"]
    # Two items: many resamples draw one item twice, where ρ is undefined.
    two = measure([0.0, 1.0], [0.2, 0.9], binary=False, cut=0.5, resamples=100, seed=0)
    assert 0 < two["figures"]["spearman"]["resamples"] < 100
