"""The tolerance grammar ``[SELECTOR:]METRIC=DELTA``."""

from __future__ import annotations

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.regression.tolerance import (
    Tolerance,
    parse_tolerance,
    parse_tolerances,
    tolerance_for,
)

EXAMPLE = "e.g. --ragproof-regression-tolerance 'qa:recall@5=0.02'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("qa:recall@5=0.02", Tolerance("qa", "recall@5", 0.02)),
        ("recall@5=0", Tolerance("*", "recall@5", 0.0)),
        (" * : mrr = .5 ", Tolerance("*", "mrr", 0.5)),
        ("tag=billing:token_f1=1e-2", Tolerance("tag=billing", "token_f1", 0.01)),
        ("distracting:hit@10=1", Tolerance("distracting", "hit@10", 1.0)),
        ("latency_s=0.25", Tolerance("*", "latency_s", 0.25)),
    ],
)
def test_parse(text: str, expected: Tolerance) -> None:
    assert parse_tolerance(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("qa:recall@5", "Could not parse regression tolerance 'qa:recall@5'; expected "),
        ("qa:recall@5>=0.1", "Could not parse"),
        ("qa:recall@5=abc", "Could not parse"),
        ("nope:recall@5=0.1", "Unknown selector 'nope'"),
        ("qa:recal@5=0.1", "Unknown metric 'recal@5'"),
        ("qa:recall@5=-0.1", "needs a finite DELTA >= 0"),
        ("qa:recall@5=1e999", "needs a finite DELTA >= 0"),
    ],
)
def test_errors_give_an_example(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_tolerance(text)
    assert message in str(info.value)
    assert str(info.value).endswith(EXAMPLE)


def test_parse_many_later_wins_and_blank_lines_are_skipped() -> None:
    parsed = parse_tolerances(["qa:mrr=0.1", "", "  ", "qa:mrr=0.2", Tolerance("*", "map", 0.3)])
    assert parsed == [Tolerance("qa", "mrr", 0.2), Tolerance("*", "map", 0.3)]
    assert parsed[0].expression == "qa:mrr=0.2"


def test_lookup() -> None:
    tols = parse_tolerances(["recall@5=0.05", "qa:recall@5=0.01", "complex:mrr=0.2"])
    assert tolerance_for(tols, "qa", "recall@5") == 0.01
    assert tolerance_for(tols, "injection", "recall@5") == 0.05
    assert tolerance_for(tols, "*", "recall@5") == 0.05
    assert tolerance_for(tols, "qa", "mrr") == 0.0
    assert tolerance_for(tols, "complex", "mrr") == 0.2
