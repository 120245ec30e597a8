"""A record's metrics keep equal values as one object (memory of large runs, issue 28)."""

from __future__ import annotations

import json
import math

from pytest_ragproof.verdict.record import sorted_metrics


def test_sorted_by_name_with_the_same_values() -> None:
    metrics = {"recall@3": 2 / 3, "hit@1": 1.0, "abstained": 0.0, "n": 3, "flag": True}
    out = sorted_metrics(metrics)
    assert list(out) == sorted(metrics)
    assert out == metrics
    assert [type(v) for v in out.values()] == [type(metrics[k]) for k in out]


def test_equal_values_of_two_cases_are_one_object() -> None:
    first = sorted_metrics({"precision@3": 2 / 3, "hit@1": 1 / 1})
    second = sorted_metrics({"precision@3": 4 / 6, "hit@1": 3 / 3})
    assert first["precision@3"] is second["precision@3"]
    assert first["hit@1"] is second["hit@1"]


def test_latency_is_not_kept_for_sharing() -> None:
    value = 0.123456789
    out = sorted_metrics({"latency_s": value})
    assert out["latency_s"] is value


def test_negative_zero_and_integers_are_written_as_before() -> None:
    sorted_metrics({"a": 0.0, "b": 1.0})  # seen first: must not stand in for these
    metrics = {"a": -0.0, "b": 1, "c": 0, "d": math.nan}
    out = sorted_metrics(metrics)
    assert json.dumps(out) == json.dumps(metrics) == '{"a": -0.0, "b": 1, "c": 0, "d": NaN}'
    positive = sorted_metrics({"a": 0.0})
    assert math.copysign(1.0, positive["a"]) == 1.0
