"""pytest and ``evaluate()`` reach the same verdict through the same function.

Each scenario runs the scripted project once with pytest (``--ragproof-report``)
and once with :func:`pytest_ragproof.evaluate` with the same settings, and the two
results documents must be identical apart from timings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import evaluate
from tests.pytester_projects import behave, load_json, run
from tests.runner.conftest import CONFTEST


@dataclass
class Scenario:
    name: str
    behaviour: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    passed: bool = True
    baseline_first: bool = False  # write a baseline from an all-good run first


SCENARIOS = [
    Scenario("all pass"),
    Scenario(
        "aggregate fails",
        args=("--ragproof-aggregate-threshold=qa:precision@5>=0.5",),
        kwargs={"thresholds": ["qa:precision@5>=0.5"]},
        passed=False,
    ),
    Scenario(
        "a pipeline error",
        behaviour={"qa-good": "raise"},
        args=("--ragproof-aggregate-threshold=qa:recall@5>=0.5",),
        kwargs={"thresholds": ["qa:recall@5>=0.5"]},
        passed=False,
    ),
    Scenario(
        "a threshold on a kind the selection left out",
        args=("--ragproof-kind=qa", "--ragproof-aggregate-threshold=unanswerable:abstained>=1"),
        kwargs={"kinds": ["qa"], "thresholds": ["unanswerable:abstained>=1"]},
    ),
    Scenario(
        "no default thresholds, a tag threshold matching nothing",
        behaviour={"qa-two": "wrong-sources"},
        args=("--ragproof-case-threshold=none", "--ragproof-case-threshold=tag=none:mrr>=1"),
        kwargs={"case_thresholds": ["none", "tag=none:mrr>=1"]},
    ),
    Scenario(
        "redacted",
        behaviour={"inj-1": "leak"},
        args=("--ragproof-redact",),
        kwargs={"redact": True},
        passed=False,
    ),
    Scenario(
        "repeats: a flaky case, an erroring repeat, a pass_rate gate",
        behaviour={"qa-good": "flaky", "qa-two": "flaky-raise", "un-1": "raise"},
        args=(
            "--ragproof-repeat=5",
            "--ragproof-min-pass-rate=0.8",
            "--ragproof-aggregate-threshold=qa:pass_rate.mean>=0.9",
        ),
        kwargs={"repeat": 5, "min_pass_rate": 0.8, "thresholds": ["qa:pass_rate.mean>=0.9"]},
        passed=False,
    ),
    Scenario(
        "repeats run concurrently",
        behaviour={"qa-good": "flaky", "qa-two": "flaky-raise"},
        args=("--ragproof-repeat=5", "--ragproof-min-pass-rate=0.8", "--ragproof-concurrency=8"),
        kwargs={"repeat": 5, "min_pass_rate": 0.8, "concurrency": 8},
    ),
    Scenario(
        "a baseline with case regressions",
        behaviour={"qa-good": "wrong-sources"},
        args=("--ragproof-baseline=base.json", "--ragproof-fail-on-case-regression"),
        kwargs={"baseline": "base.json", "fail_on_case_regression": True},
        passed=False,
        baseline_first=True,
    ),
]


def _timeless(value: Any) -> Any:
    """The document without timings (latency values, versions)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("latency_s", "versions", "run_id", "digest"):
                continue
            if isinstance(item, dict) and item.get("metric") == "latency_s":
                continue
            out[key] = _timeless(item)
        return out
    if isinstance(value, list):
        return [
            _timeless(v)
            for v in value
            if not (isinstance(v, dict) and v.get("metric") == "latency_s")
        ]
    return value


@pytest.fixture
def inside(project: pytest.Pytester) -> Iterator[Path]:
    """Run evaluate() from the project folder, as pytest runs there."""
    cwd = os.getcwd()
    os.chdir(project.path)
    try:
        yield project.path
    finally:
        os.chdir(cwd)


def _pipeline(project: Path) -> Callable[..., Any]:
    """The project's pipeline, built as the fixture builds it (behaviour.json read now)."""
    namespace: dict[str, Any] = {"__file__": str(project / "conftest.py")}
    source = CONFTEST.replace('@pytest.fixture(scope="session")', "")
    exec(compile(source, str(project / "conftest.py"), "exec"), namespace)
    pipeline: Callable[..., Any] = namespace["rag_pipeline"]()
    return pipeline


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_pytest_and_evaluate_agree(
    project: pytest.Pytester, inside: Path, scenario: Scenario
) -> None:
    if scenario.baseline_first:
        update = ("--ragproof-baseline=base.json", "--ragproof-baseline-update")
        assert run(project, [], *update).ret == 0
    behave(project, scenario.behaviour)
    result = run(project, [], *scenario.args, "--ragproof-report=py.json")
    assert result.ret == (0 if scenario.passed else 1), result.stdout.str()
    theirs = load_json(project.path / "py.json")
    ours = evaluate("cases.frozen.json", _pipeline(project.path), **scenario.kwargs).to_dict()
    assert ours["passed"] is theirs["passed"] is scenario.passed
    mine, pytests = _timeless(ours), _timeless(theirs)
    for key in sorted(set(mine) | set(pytests)):
        assert mine.get(key) == pytests.get(key), f"{scenario.name}: '{key}' differs"
    assert json.dumps(mine, sort_keys=True) == json.dumps(pytests, sort_keys=True)
