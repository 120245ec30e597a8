"""Each option is declared once (pytest_ragproof/verdict/option_table.py).

The pytest flag and ini key, ``make_config``'s keyword, the RunConfig field and
``evaluate()``'s keyword all come from that one entry: ``evaluate()``'s spelled-out
signature agrees with the declarations, and an option added to the table in a fixture
is at once a pytest option, an ini key, a RunConfig value and an ``evaluate()`` keyword.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_ragproof import evaluate
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.judges import JudgeSettings
from pytest_ragproof.verdict import option_table
from pytest_ragproof.verdict.baseline import BaselineSettings
from pytest_ragproof.verdict.config import RunConfig, make_config
from pytest_ragproof.verdict.options import Option, integer

#: evaluate()'s keywords that are its own, not options.
OWN = {"pipeline_name", "judge_inputs", "evaluators"}

CASES = [
    {"id": "u1", "kind": "unanswerable", "question": "What is the moon made of?"},
]


def pipeline(question: str) -> dict[str, Any]:
    return {"answer": "I don't know.", "contexts": []}


def test_evaluate_spells_out_exactly_the_declared_keywords_with_their_defaults() -> None:
    params = inspect.signature(evaluate).parameters
    keywords = {
        name: p.default for name, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    declared = {o.api: o for o in option_table.OPTIONS if o.api is not None}
    assert set(keywords) - OWN == set(declared)
    for name, o in declared.items():
        assert o.value(keywords[name]) == o.value(o.keyword_default), name
    assert params["options"].kind is inspect.Parameter.VAR_KEYWORD


def test_every_settings_field_is_an_option() -> None:
    """RunConfig's, JudgeSettings' and BaselineSettings' fields are each one option's
    target (the run's datasets, judges, baseline and extras aside)."""
    targets = {o.target for o in option_table.OPTIONS if o.keyword is not None}
    run = {f.name for f in dataclasses.fields(RunConfig)} - {"judges", "baseline", "extra"}
    judge = {f"judges.{f.name}" for f in dataclasses.fields(JudgeSettings)}
    base = {f"baseline.{f.name}" for f in dataclasses.fields(BaselineSettings)} - {"baseline.shown"}
    assert run | judge | base == targets


def test_make_config_refuses_a_keyword_no_option_declares() -> None:
    with pytest.raises(TypeError, match="'concurency'"):
        make_config(concurency=2)


TOY = Option(
    "toy_level",
    "a level of the tests' toy option, 0 or more (default 3)",
    default=3,
    metavar="N",
    keyword="toy_level",
    api="toy_level",
    parse=integer(0),
)


@pytest.fixture
def toy_option(monkeypatch: pytest.MonkeyPatch) -> Iterator[Option]:
    """One entry added to the option table, nothing else."""
    monkeypatch.setattr(option_table, "OPTIONS", (*option_table.OPTIONS, TOY))
    yield TOY


def test_a_new_option_is_a_run_setting_and_an_evaluate_keyword(toy_option: Option) -> None:
    assert make_config().extra["toy_level"] == 3
    assert make_config(toy_level="7").extra["toy_level"] == 7
    with pytest.raises(ConfigError) as caught:
        make_config(toy_level="-1")
    assert str(caught.value) == "--ragproof-toy-level must be at least 0"
    assert evaluate(CASES, pipeline).config.extra["toy_level"] == 3
    assert evaluate(CASES, pipeline, toy_level=5).config.extra["toy_level"] == 5
    with pytest.raises(TypeError, match="'toy_levle'"):
        evaluate(CASES, pipeline, toy_levle=5)


CONFTEST = """
from pytest_ragproof.plugin.settings import build


def test_toy(pytestconfig):
    print("toy_level =", build(pytestconfig).extra["toy_level"])
"""


def test_a_new_option_is_a_pytest_flag_and_an_ini_key(
    toy_option: Option, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(test_toy=CONFTEST)
    shown = pytester.runpytest_inprocess("--help")
    assert "--ragproof-toy-level=N" in shown.stdout.str()
    assert "ragproof_toy_level" in shown.stdout.str()
    assert "toy_level = 3" in pytester.runpytest_inprocess("-s").stdout.str()
    assert (
        "toy_level = 9" in pytester.runpytest_inprocess("-s", "--ragproof-toy-level=9").stdout.str()
    )
    pytester.makeini("[pytest]\nragproof_toy_level = 4\n")
    assert "toy_level = 4" in pytester.runpytest_inprocess("-s").stdout.str()
    assert (
        "toy_level = 8" in pytester.runpytest_inprocess("-s", "--ragproof-toy-level=8").stdout.str()
    )
