"""The threshold grammar, defaults, and aggregation (no pytest run needed)."""

from __future__ import annotations

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.numeric import percentile
from pytest_ragproof.verdict.thresholds import (
    aggregate,
    parse_aggregate_thresholds,
    parse_case_thresholds,
    parse_threshold,
)


class _Case:
    def __init__(self, kind: str, question_type: str = "simple", tags: tuple[str, ...] = ()):
        self.kind = kind
        self.question_type = question_type
        self.tags = tags


@pytest.mark.parametrize(
    ("text", "selector", "metric", "agg", "op", "value"),
    [
        ("qa:recall@5>=0.8", "qa", "recall@5", "mean", ">=", 0.8),
        ("latency_s.p95<=2", "*", "latency_s", "p95", "<=", 2.0),
        ("tag=billing:hit@3 > .5", "tag=billing", "hit@3", "mean", ">", 0.5),
        (" distracting : mrr.min >= 1e-1 ", "distracting", "mrr", "min", ">=", 0.1),
        ("*:abstained<1", "*", "abstained", "mean", "<", 1.0),
    ],
)
def test_aggregate_grammar(
    text: str, selector: str, metric: str, agg: str, op: str, value: float
) -> None:
    t = parse_threshold(text, "aggregate")
    assert (t.selector, t.metric, t.aggregator, t.op, t.value) == (selector, metric, agg, op, value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("qa:recall@5=>0.8", "Could not parse"),
        ("qa:recal@5>=0.8", "Unknown metric 'recal@5'"),
        ("essay:hit@5>=1", "Unknown selector 'essay'"),
        ("hit@5.p99>=1", "Unknown aggregator '.p99'"),
        ("tag=:hit@5>=1", "Unknown selector"),
    ],
)
def test_bad_expressions_show_an_example(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"e\.g\.") as info:
        parse_threshold(text, "aggregate")
    assert message in str(info.value)


def test_case_thresholds_take_no_aggregator() -> None:
    with pytest.raises(ConfigError, match="aggregators belong to aggregate thresholds"):
        parse_threshold("qa:hit@5.min>=1", "case")


def test_defaults_and_none() -> None:
    names = [t.expression for t in parse_case_thresholds([])]
    assert names == [
        "qa:hit@5>=1",
        "qa:abstained<=0",
        "unanswerable:abstained>=1",
        "injection:injection_resisted>=1",
    ]
    with_user = [t.expression for t in parse_case_thresholds(["qa:mrr>=0.5"])]
    assert with_user[-1] == "qa:mrr>=0.5" and len(with_user) == 5
    assert [t.expression for t in parse_case_thresholds(["none", "qa:mrr>=0.5"])] == ["qa:mrr>=0.5"]
    assert parse_aggregate_thresholds(["", "none"]) == []


def test_selectors_and_metric_kinds() -> None:
    t = parse_threshold("recall@5>=1", "case")
    assert t.applies_to(_Case("qa")) and not t.applies_to(_Case("unanswerable"))
    tagged = parse_threshold("tag=x:abstained>=1", "case")
    assert tagged.applies_to(_Case("qa", tags=("x",))) and not tagged.applies_to(_Case("qa"))
    typed = parse_threshold("double:hit@1>=1", "case")
    assert typed.applies_to(_Case("qa", "double")) and not typed.applies_to(_Case("qa"))


def test_percentiles_match_linear_interpolation() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert percentile(values, 0.5) == 3.0
    assert percentile(values, 0.9) == pytest.approx(7.6)
    assert percentile(values, 0.95) == pytest.approx(8.8)
    stats = aggregate([3.0, 1.0, 2.0])
    assert stats == {"mean": 2.0, "min": 1.0, "max": 3.0, "p50": 2.0, "p90": 2.8, "p95": 2.9}


@pytest.mark.parametrize(
    ("text", "scope", "fix"),
    [
        (
            "unanswerable:recall@5>=0.5",
            "aggregate",
            "write e.g. --ragproof-aggregate-threshold 'qa:recall@5>=0.5', or name a metric "
            "of unanswerable cases (abstained, latency_s",
        ),
        (
            "out_of_scope:hit@3>=1",
            "case",
            "not on out_of_scope (kind unanswerable) cases; write e.g. "
            "--ragproof-case-threshold 'qa:hit@3>=1'",
        ),
        (
            "qa:injection_resisted.min>=1",
            "aggregate",
            "--ragproof-aggregate-threshold 'injection:injection_resisted.min>=1'",
        ),
    ],
)
def test_a_metric_the_selected_kind_never_has_is_refused(text: str, scope: str, fix: str) -> None:
    with pytest.raises(ConfigError, match="can never apply") as info:
        parse_threshold(text, scope)
    assert fix in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["unanswerable:abstained>=1", "out_of_scope:latency_s<=2", "distracting:recall@5>=0.5"],
)
def test_a_metric_the_selected_kind_has_is_accepted(text: str) -> None:
    assert parse_threshold(text, "aggregate").expression == text


@pytest.mark.parametrize(
    ("text", "guess"),
    [
        ("qa:recal@5>=0.8", "recall@5"),
        ("faithfulnes>=0.5", "faithfulness"),
        ("hit>=1", "hit@5"),
        ("injection:injection_resisted_judge>=1", "injection_resisted_judged"),
    ],
)
def test_an_unknown_metric_names_the_closest(text: str, guess: str) -> None:
    with pytest.raises(ConfigError, match=r"e\.g\.") as info:
        parse_threshold(text, "aggregate")
    assert f"(did you mean '{guess}'?)" in str(info.value)


def test_an_unknown_metric_far_from_any_guesses_nothing() -> None:
    with pytest.raises(ConfigError) as info:
        parse_threshold("qa:zzzz>=1", "case")
    assert "did you mean" not in str(info.value)
