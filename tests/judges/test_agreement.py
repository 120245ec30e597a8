"""The agreement figures of ``ragproof judge-check``: exact, tie-aware, honest when undefined."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from pytest_ragproof import numeric
from pytest_ragproof.judges import agreement as A
from pytest_ragproof.judges import resample


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_rank_correlations_match_scipy_with_ties() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(2, 30)
        x = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]) for _ in range(n)]
        y = [rng.choice([0.0, 1 / 3, 0.5, 1.0]) for _ in range(n)]
        for ours, theirs in (
            (A.spearman(x, y), stats.spearmanr(x, y).statistic),
            (A.kendall_tau_b(x, y), stats.kendalltau(x, y).statistic),
        ):
            if math.isnan(theirs):
                assert ours is None
            else:
                assert ours == pytest.approx(theirs, abs=1e-12)


def test_kendall_tau_b_by_hand() -> None:
    # 6 pairs: 4 concordant, 1 discordant, 1 tied in x: (4 - 1) / sqrt((6 - 1) * (6 - 0)).
    x = [1.0, 1.0, 2.0, 3.0]
    y = [1.0, 2.0, 4.0, 3.0]
    assert A.kendall_tau_b(x, y) == pytest.approx(3 / math.sqrt(30))


def test_undefined_figures_are_none_never_zero() -> None:
    figures = A.binary_figures([1, 1, 1], [1, 1, 1])
    assert figures["accuracy"] == 1.0 and figures["precision"] == 1.0
    assert figures["kappa"] is None  # one class for both raters: chance agreement is 1
    assert figures["precision_0"] is None and figures["recall_0"] is None
    assert figures["f1_0"] is None
    assert A.binary_figures([1, 0], [0, 0])["precision"] is None
    assert A.spearman([1, 1, 1], [0, 0.5, 1]) is None
    assert A.kendall_tau_b([0.5, 0.5], [0, 1]) is None


def test_kappa_by_hand() -> None:
    # tp 2, fn 1, fp 1, tn 4: po 6/8; chance (3*3 + 5*5) / 64.
    labels = [1, 1, 1, 0, 0, 0, 0, 0]
    judged = [1, 1, 0, 1, 0, 0, 0, 0]
    chance = (9 + 25) / 64
    assert A.binary_figures(labels, judged)["kappa"] == pytest.approx(
        (6 / 8 - chance) / (1 - chance)
    )
    assert A.confusion(labels, judged) == {"tp": 2, "fp": 1, "fn": 1, "tn": 4}


def test_bootstrap_is_seeded_and_skips_undefined_resamples() -> None:
    labels = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    judged = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    one = resample.bootstrap(
        labels, judged, binary=True, figures_of=A.figures_of, resamples=300, seed=1
    )
    two = resample.bootstrap(
        labels, judged, binary=True, figures_of=A.figures_of, resamples=300, seed=1
    )
    assert one == two
    assert one["accuracy"].resamples == 300
    # Some resamples draw no label 1: recall is undefined there and left out.
    assert 0 < one["recall"].resamples < 300
    perfect = resample.bootstrap(
        [1.0, 0.0], [1.0, 0.0], binary=True, figures_of=A.figures_of, resamples=50, seed=0
    )
    assert (perfect["accuracy"].low, perfect["accuracy"].high) == (1.0, 1.0)


def test_percentile_interpolates_between_order_statistics() -> None:
    values = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert numeric.percentile(values, 0.5) == 2.0
    assert numeric.percentile(values, 0.025) == pytest.approx(0.1)
    assert numeric.percentile(values, 0.975) == pytest.approx(3.9)
