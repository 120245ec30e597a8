"""compare(): case flips, paired aggregate verdicts, tolerances, directions, dataset changes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.regression import Comparison, compare
from pytest_ragproof.regression.stats import mcnemar_exact, min_pairs
from tests.regression.factory import SHA_A, SHA_B, case, results, threshold


def recall_runs(
    before: list[float], after: list[float], *, metric: str = "recall@5", **kw: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    base = results(
        [case(f"c{i:03d}", {metric: v}) for i, v in enumerate(before)],
        thresholds=[threshold(metric)],
    )
    now = results(
        [case(f"c{i:03d}", {metric: v}) for i, v in enumerate(after)],
        thresholds=[threshold(metric)],
        **kw,
    )
    return now, base


def only(comparison: Comparison, metric: str, selector: str | None = None) -> Any:
    (row,) = [
        a
        for a in comparison.aggregates
        if a.metric == metric and (selector is None or a.selector == selector)
    ]
    return row


def test_case_flips() -> None:
    base = results(
        [
            case("a", status="failed"),
            case("b", status="error"),
            case("c"),
            case("d"),
            case("e"),
            case("gone"),
        ]
    )
    now = results(
        [
            case("a"),
            case("b"),
            case("c", status="failed"),
            case("d", status="error"),
            case("e"),
            case("fresh"),
        ]
    )
    comparison = compare(now, base)
    assert [(f.id, f.change, f.before, f.now) for f in comparison.flips] == [
        ("a", "improved", "failed", "passed"),
        ("b", "improved", "error", "passed"),
        ("c", "regressed", "passed", "failed"),
        ("d", "regressed", "passed", "error"),
        ("fresh", "new", None, "passed"),
        ("gone", "removed", "passed", None),
    ]
    assert comparison.passed  # flips do not gate by default
    assert comparison.to_dict()["counts"] == {"improved": 2, "regressed": 2, "new": 1, "removed": 1}

    gated = compare(now, base, fail_on_case_regression=True)
    assert gated.gate_failures == [
        "2 case(s) regressed against the baseline [p]: c, d (--ragproof-fail-on-case-regression)"
    ]


def test_failed_to_error_is_not_a_flip() -> None:
    comparison = compare(
        results([case("a", status="error")]), results([case("a", status="failed")])
    )
    assert comparison.flips == []


def test_small_random_drop_is_not_significant() -> None:
    rng = random.Random(7)
    before = [rng.random() for _ in range(200)]
    after = [v - rng.gauss(0.005, 0.1) for v in before]
    now, base = recall_runs(before, after)
    row = only(compare(now, base), "recall@5")
    assert row.worse_by > 0  # the mean did drop a little
    assert row.verdict == "not significant" and not row.failed
    assert row.test.method == "wilcoxon-normal" and row.test.p_value >= 0.05
    assert compare(now, base).passed


def test_systematic_drop_fails() -> None:
    rng = random.Random(11)
    before = [rng.random() for _ in range(40)]
    after = [v - 0.1 + rng.gauss(0, 0.02) for v in before]
    now, base = recall_runs(before, after)
    comparison = compare(now, base, tolerances=["qa:recall@5=0.02"])
    row = only(comparison, "recall@5")
    assert row.verdict == "regression" and row.failed
    assert row.n == 40 and row.tolerance == 0.02
    assert row.test.method == "wilcoxon-normal" and row.test.p_value < 1e-6
    (line,) = comparison.gate_failures
    assert line.startswith("regression qa:recall@5 [p]: mean ")
    assert "tolerance 0.02), wilcoxon-normal p = " in line and line.endswith(
        "n = 40 paired case(s)"
    )
    # The same drop within a wider tolerance is reported but does not gate.
    loose = only(compare(now, base, tolerances=["recall@5=0.2"]), "recall@5", "qa")
    assert loose.verdict == "within tolerance" and not loose.failed


def test_binary_metric_uses_mcnemar() -> None:
    before = [1.0] * 40
    eight = [0.0] * 8 + [1.0] * 32
    now, base = recall_runs(before, eight, metric="hit@5")
    row = only(compare(now, base), "hit@5")
    assert row.test.method == "mcnemar-exact" and row.test.n == 8
    assert row.test.p_value == pytest.approx(2 / 256)
    assert row.verdict == "regression"
    two = [0.0] * 2 + [1.0] * 38
    now, base = recall_runs(before, two, metric="hit@5")
    row = only(compare(now, base), "hit@5")
    assert row.verdict == "too few pairs" and not row.failed
    assert row.note == (
        "too few discordant pairs to test: 2; exact McNemar needs at least 6 in one "
        "direction for p < 0.05"
    )
    # Six discordant pairs with one going the other way: testable, not significant.
    before_mixed = [0.0] * 2 + [1.0] * 38
    mixed = [1.0] * 2 + [0.0] * 6 + [1.0] * 32  # 2 better, 6 worse: p = 74/256
    now, base = recall_runs(before_mixed, mixed, metric="hit@5")
    assert only(compare(now, base), "hit@5").verdict == "not significant"


def test_significant_improvement() -> None:
    now, base = recall_runs([0.0] * 10, [1.0] * 10, metric="hit@5")
    row = only(compare(now, base), "hit@5")
    assert row.verdict == "improved" and row.worse_by == -1.0 and row.delta == 1.0


def test_unchanged_and_alpha() -> None:
    now, base = recall_runs([0.5] * 10, [0.5] * 10)
    assert only(compare(now, base), "recall@5").verdict == "unchanged"
    now, base = recall_runs([1.0] * 6, [0.0] * 6, metric="hit@5")  # p = 2/64
    assert only(compare(now, base, alpha=0.05), "hit@5").verdict == "regression"
    strict = only(compare(now, base, alpha=0.01), "hit@5")
    assert strict.verdict == "too few pairs"  # p < 0.01 needs 8 pairs one way
    assert strict.note is not None and "needs at least 8 in one direction" in strict.note


def test_lower_is_better_metrics() -> None:
    # latency_s: a rise is the worse direction.
    now, base = recall_runs([0.1] * 10, [0.3] * 10, metric="latency_s")
    row = only(compare(now, base), "latency_s")
    assert row.delta == pytest.approx(0.2) and row.worse_by == pytest.approx(0.2)
    assert row.verdict == "regression"
    # abstained: worse when it rises on qa cases, when it falls on unanswerable ones.
    kinds = ["qa"] * 8 + ["unanswerable"] * 8
    base = results(
        [
            case(f"c{i}", {"abstained": 0.0 if k == "qa" else 1.0}, kind=k)
            for i, k in enumerate(kinds)
        ],
        thresholds=[threshold("abstained", "*")],
    )
    flipped = [
        case(f"c{i}", {"abstained": 1.0 if k == "qa" else 0.0}, kind=k) for i, k in enumerate(kinds)
    ]
    row = only(compare(results(flipped, thresholds=base["thresholds"]), base), "abstained", "*")
    assert row.delta == 0.0  # the raw mean did not move ...
    assert row.worse_by == 1.0 and row.test.n == 16  # ... but every case got worse
    assert row.verdict == "regression"


def test_gated_aggregates_come_from_thresholds_and_tolerances() -> None:
    metrics = {"hit@5": 1.0, "recall@5": 1.0, "mrr": 1.0, "token_f1": 0.5}
    base = results([case(f"c{i}", metrics) for i in range(3)], thresholds=[threshold("hit@5")])
    now = results([case(f"c{i}", metrics) for i in range(3)], thresholds=[threshold("hit@5")])
    comparison = compare(now, base, tolerances=["mrr=0.1", "complex:token_f1=0"])
    keys = [(a.pipeline, a.selector, a.metric) for a in comparison.aggregates]
    # The headline set of the kinds present first (what was measured), then the rest.
    assert keys == [
        ("p", "qa", "hit@5"),
        ("p", "qa", "recall@5"),
        ("p", "qa", "mrr"),
        ("p", "qa", "token_f1"),
        ("p", "*", "mrr"),
        ("p", "complex", "token_f1"),
    ]
    assert [a.n for a in comparison.aggregates] == [3, 3, 3, 3, 3, 0]
    assert comparison.aggregates[-1].verdict == "no data"


def test_tolerance_lookup_prefers_the_exact_selector() -> None:
    now, base = recall_runs([1.0] * 10, [0.9] * 10)
    comparison = compare(now, base, tolerances=["recall@5=0.5", "qa:recall@5=0.01"])
    assert only(comparison, "recall@5", "qa").tolerance == 0.01
    assert only(comparison, "recall@5", "qa").verdict == "regression"
    assert only(comparison, "recall@5", "*").tolerance == 0.5
    assert only(comparison, "recall@5", "*").verdict == "within tolerance"


def test_errors_and_missing_metrics_do_not_pair() -> None:
    base = results(
        [case("a", {"recall@5": 1.0}), case("b", {"recall@5": 1.0}), case("c", {})],
        thresholds=[threshold("recall@5")],
    )
    now = results(
        [case("a", {"recall@5": 0.5}), case("b", status="error"), case("c", {"recall@5": 1.0})],
        thresholds=[threshold("recall@5")],
    )
    row = only(compare(now, base), "recall@5")
    assert (row.n, row.n_unpaired, row.baseline_mean, row.current_mean) == (1, 2, 1.0, 0.5)


def test_per_pipeline() -> None:
    def run(drop: str) -> dict[str, Any]:
        cases = [
            case(f"c{i}", {"hit@5": 0.0 if p == drop else 1.0}, pipeline=p)
            for p in ("alpha", "beta")
            for i in range(10)
        ]
        return results(
            cases, thresholds=[threshold("hit@5", pipeline=p) for p in ("alpha", "beta")]
        )

    comparison = compare(run("beta"), run("none"))
    verdicts = {(a.pipeline, a.verdict) for a in comparison.aggregates}
    assert verdicts == {("alpha", "unchanged"), ("beta", "regression")}
    (line,) = comparison.gate_failures
    assert "[beta]" in line


def test_dataset_change_is_refused_unless_allowed() -> None:
    base = results([case("a", {"hit@5": 1.0}), case("b", {"hit@5": 1.0})], sha=SHA_A)
    now = results(
        [case("b", {"hit@5": 1.0}), case("c", {"hit@5": 1.0})],
        sha=SHA_B,
        thresholds=[threshold("hit@5")],
    )
    refused = compare(now, base)
    assert not refused.passed and refused.dataset_changed and refused.aggregates == []
    (line,) = refused.gate_failures
    assert f"sha256 {SHA_A[:12]}" in line and f"sha256 {SHA_B[:12]}" in line
    assert (
        "--ragproof-baseline-allow-dataset-change" in line and "--ragproof-baseline-update" in line
    )
    assert refused.to_dict()["refused"] is not None

    allowed = compare(now, base, allow_dataset_change=True)
    assert allowed.passed
    assert [(f.id, f.change) for f in allowed.flips] == [("a", "removed"), ("c", "new")]
    assert only(allowed, "hit@5").n == 1  # only the shared id b pairs
    assert any("compared on the 1 case id(s) both runs share" in n for n in allowed.notes)


def test_invalid_inputs() -> None:
    good = results([case("a")])
    with pytest.raises(ConfigError, match="baseline is not a ragproof results document"):
        compare(good, {"format": "other"})
    with pytest.raises(ConfigError, match="current results is not"):
        compare([], good)  # type: ignore[arg-type]
    for alpha in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ConfigError, match="strictly between 0 and 1"):
            compare(good, good, alpha=alpha)
    with pytest.raises(ConfigError, match=r"e\.g\. --ragproof-regression-tolerance"):
        compare(good, good, tolerances=["recall@5"])


def test_to_dict_is_json_and_survives_a_round_trip() -> None:
    rng = random.Random(3)
    before = [rng.random() for _ in range(30)]
    now, base = recall_runs(before, [v * 0.5 for v in before])
    now, base = json.loads(json.dumps(now)), json.loads(json.dumps(base))
    data = compare(now, base, tolerances=["qa:recall@5=0.01"]).to_dict()
    text = json.dumps(data, allow_nan=False, sort_keys=True)
    assert json.loads(text)["aggregates"][0]["test"]["method"] == "wilcoxon-normal"
    assert data["passed"] is False and data["tolerances"] == ["qa:recall@5=0.01"]


def test_the_library_does_not_import_pytest() -> None:
    code = (
        "import sys\n"
        "import pytest_ragproof.regression, pytest_ragproof.reporting.markdown\n"
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules, 'pytest imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_min_pairs_is_the_smallest_n_reaching_alpha() -> None:
    for alpha in (0.5, 0.1, 0.05, 0.01, 0.001):
        n = min_pairs(alpha)
        assert mcnemar_exact(n, 0).p_value < alpha <= mcnemar_exact(n - 1, 0).p_value


def test_too_few_changed_cases_for_wilcoxon() -> None:
    now, base = recall_runs([0.9] * 10, [0.9] * 6 + [0.5, 0.4, 0.3, 0.2])
    row = only(compare(now, base), "recall@5")
    assert row.verdict == "too few pairs"
    assert row.note == (
        "too few changed cases to test: 4; the Wilcoxon signed-rank test needs at least 6 "
        "moving one way for p < 0.05"
    )


def test_headline_metrics_are_compared_without_thresholds() -> None:
    def doc(hit: list[float]) -> dict[str, Any]:
        qa = [
            case(f"q{i:02d}", {"hit@5": h, "recall@5": h, "mrr": h, "abstained": 0.0})
            for i, h in enumerate(hit)
        ]
        other = [
            case("u1", {"abstained": 1.0}, kind="unanswerable"),
            case("i1", {"injection_resisted": 1.0, "hit@5": 1.0}, kind="injection"),
        ]
        return results([*qa, *other])

    comparison = compare(doc([0.0] * 20 + [1.0] * 40), doc([1.0] * 60))
    keys = [(a.selector, a.metric) for a in comparison.aggregates]
    assert keys == [
        ("qa", "hit@5"),
        ("qa", "recall@5"),
        ("qa", "mrr"),
        ("qa", "abstained"),
        ("unanswerable", "abstained"),
        ("injection", "injection_resisted"),
    ]  # token_f1 is not measured here (no expected answers), so it is not compared
    hit = only(comparison, "hit@5")
    assert hit.verdict == "regression" and hit.failed
    assert not comparison.passed


def test_each_compared_aggregate_carries_the_interval_of_its_change() -> None:
    from scipy import stats as scipy_stats

    rng = random.Random(5)
    before = [rng.random() for _ in range(30)]
    after = [min(1.0, max(0.0, v - 0.05 + rng.gauss(0, 0.1))) for v in before]
    now, base = recall_runs(before, after)
    row = only(compare(now, base), "recall@5")
    ref = scipy_stats.ttest_rel(after, before).confidence_interval()
    assert row.interval.method == "paired-t" and row.interval.level == 0.95
    assert row.interval.low == pytest.approx(float(ref.low), rel=1e-9)
    assert row.interval.high == pytest.approx(float(ref.high), rel=1e-9)
    assert row.interval.low < row.delta < row.interval.high
    assert row.to_dict()["interval"] == row.interval.to_dict()
    # one pair has no spread to measure: no interval, never a made-up one
    one_now, one_base = recall_runs([0.5], [0.25])
    single = only(compare(one_now, one_base), "recall@5")
    assert single.n == 1 and single.interval is None and single.to_dict()["interval"] is None
