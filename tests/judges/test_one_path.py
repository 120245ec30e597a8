"""``evaluate()`` and pytest conclude every case through one per-case path.

The promise that both reach the same verdict rests on
:class:`pytest_ragproof.execution.case_path.CasePath`: each scenario runs the same cases
(qa with contexts, every judge through the scripted stub, repeats, a pipeline error and
a judge budget that stops judging) once with pytest and once with ``evaluate()`` and
compares the two results documents, timings aside; a scan checks that nothing outside
``execution/`` calls the path's steps on its own.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.evaluation import evaluate
from tests.judge_stub import ScriptedJudge
from tests.judges.project import ANSWERS
from tests.llm_stub import StubServer
from tests.pytester_projects import load_json, run
from tests.runner.test_verdict_agreement import _timeless

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_ragproof"

# The judges' project pipeline, except that the Germany question (q3) raises.
CONFTEST = f"""
import pytest

ANSWERS = {ANSWERS!r}

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        if "Germany" in question:
            raise ValueError("backend exploded")
        for key, (answer, doc, text) in ANSWERS.items():
            if key in question:
                return {{"answer": answer, "contexts": [{{"id": doc, "text": text}}]}}
        return {{"answer": "I don't know.", "contexts": []}}
    return pipeline
"""


@dataclass
class Scenario:
    name: str
    args: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    budget: bool = False  # the judges' budget runs out during the run


SCENARIOS = [
    Scenario(
        "serial: two repeats, a pipeline error, the judge budget runs out",
        args=(
            "--ragproof-concurrency=1",
            "--ragproof-judge-concurrency=1",
            "--ragproof-repeat=2",
            "--ragproof-judge-max-calls=9",
        ),
        kwargs={"concurrency": 1, "judge_concurrency": 1, "repeat": 2, "judge_max_calls": 9},
        budget=True,
    ),
    Scenario(
        "look-ahead: two repeats called and judged ahead, a pipeline error",
        args=("--ragproof-concurrency=4", "--ragproof-judge-concurrency=3", "--ragproof-repeat=2"),
        kwargs={"concurrency": 4, "judge_concurrency": 3, "repeat": 2},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_pytest_and_evaluate_reach_the_same_document(
    project: pytest.Pytester,
    llm_stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
    scenario: Scenario,
) -> None:
    project.makeconftest(CONFTEST)
    llm_stub.set_handler(ScriptedJudge())
    threshold = "qa:faithfulness>=0.9"
    result = run(
        project,
        [],
        "--ragproof-judges=all",
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={llm_stub.url}",
        "--ragproof-judge-retries=0",
        "--ragproof-no-cache",
        f"--ragproof-aggregate-threshold={threshold}",
        "--ragproof-report=py.json",
        *scenario.args,
    )
    assert result.ret == 1, result.stdout.str()
    theirs = load_json(project.path / "py.json")
    namespace: dict[str, Any] = {}
    exec(CONFTEST.replace('@pytest.fixture(scope="session")', ""), namespace)
    monkeypatch.chdir(project.path)
    ours = evaluate(
        "cases.frozen.json",
        namespace["rag_pipeline"](),
        judges=["all"],
        judge_model="openai/stub-judge",
        judge_api_base=llm_stub.url,
        judge_retries=0,
        cache=False,
        thresholds=[threshold],
        **scenario.kwargs,
    ).to_dict()

    # The run is what the scenario says it is, in both documents.
    for doc in (theirs, ours):
        by_id = {c["id"]: c for c in doc["cases"]}
        assert doc["passed"] is False
        assert by_id["q3"]["status"] == "error"
        assert by_id["q3"]["repeats"]["error_types"] == ["ValueError"]
        assert all(c["repeats"]["n"] == 2 for c in doc["cases"])
        assert by_id["q1"]["contexts"][0]["id"] == "d1"
        assert by_id["q1"]["metrics"]["faithfulness"] == 1.0
        reasons = [r for c in doc["cases"] for r in (c.get("not_judged") or {}).values()]
        assert ("budget" in reasons) is scenario.budget
    mine, pytests = _timeless(ours), _timeless(theirs)
    for key in sorted(set(mine) | set(pytests)):
        assert mine.get(key) == pytests.get(key), f"{scenario.name}: '{key}' differs"


#: The steps of the per-case path, and the modules that may call each.
STEPS = {
    "call_case": {"execution/case_path.py"},
    "judge_now": {"execution/case_path.py"},
    "finish_repeats": {"execution/case_path.py"},
    "finish_case": {"execution/repeat.py"},
}


def _step_calls(source: str) -> list[str]:
    """The names of the path's steps that ``source`` calls (as a name or an attribute)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in STEPS:
                found.append(name)
    return found


def test_only_the_per_case_path_calls_its_steps() -> None:
    """A second copy of "call, judge, score, fold" (evaluate() and the items each had one)
    shows up here: the steps are called by the path, nowhere else in the package."""
    stray = [
        f"{rel}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for rel in [path.relative_to(PACKAGE).as_posix()]
        for name in _step_calls(path.read_text(encoding="utf-8"))
        if rel not in STEPS[name]
    ]
    assert stray == []


def test_the_scan_finds_a_second_copy() -> None:
    copy = "def run(x):\n    out = call_case(x)\n    return self.stage.judge_now(out)\n"
    assert _step_calls(copy) == ["call_case", "judge_now"]
