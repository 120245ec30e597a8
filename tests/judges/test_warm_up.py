"""litellm is imported on the judges' thread while the run does other things (issue 39.3):
ordinary tests failing meanwhile are reported as pytest reports them, and a run the cache
may answer whole never imports it."""

from __future__ import annotations

import pytest

from tests.judge_stub import ScriptedJudge
from tests.judges.project import CASES
from tests.judges.test_pytest_runs import judge_args, judged_row
from tests.llm_stub import StubServer
from tests.pytester_projects import load_json

# Ordinary tests that run first, fail with assertion introspection (pytest builds an
# AST to show the failing statement) and note whether the judges' thread runs and
# litellm is loaded yet.
UNIT_TESTS = """
import sys, threading, time

import pytest

seen = []


@pytest.mark.parametrize("n", range(12))
def test_unit(n):
    judges = any(t.name == "ragproof-judges" and t.is_alive() for t in threading.enumerate())
    loader = sys.modules.get("pytest_ragproof.llm.loader")
    loaded = loader is not None and loader._litellm_module is not None
    seen.append((judges, loaded))
    with open("seen.txt", "w") as fh:
        fh.write(repr(seen))
    time.sleep(0.15)
    expected = {"n": n, "items": [1, 2, 3]}
    assert {"n": n, "items": [1, 2]} == expected, "an ordinary failure"
"""


_OPTIONS = ("-p", "no:cacheprovider", "-p", "no:asyncio", "--ragproof-dataset=cases.frozen.json")


def test_ordinary_failures_while_litellm_is_imported_are_reported_in_full(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    project.makepyfile(test_unit=UNIT_TESTS)
    # The cache is on and empty (a first run, a fresh CI machine): every call will miss.
    # (With --ragproof-no-cache the key check imports litellm before collection.)
    args = judge_args(llm_stub, "--ragproof-judges=all", "--ragproof-report=r.json")
    # A fresh interpreter: litellm is not imported yet.
    result = project.runpytest_subprocess(*_OPTIONS, "test_unit.py", *args)
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "SystemError" not in out, out
    result.assert_outcomes(passed=len(CASES), failed=12)
    # Each failure shows the assertion's statement and its diff, as pytest shows it.
    assert out.count("E       AssertionError: an ordinary failure") == 12
    assert out.count("E       assert {'n': ") == 12
    # The judges' thread was importing litellm while the first tests ran.
    seen = eval((project.path / "seen.txt").read_text())
    assert seen[0] == (True, False), "the first test ran while litellm was being imported"
    # And the cases are judged as without the warm-up.
    assert judged_row(out, "qa", "faithfulness") == ["3", "0.833", "0.500"]
    assert load_json(project.path / "r.json")["judges"]["calls"] > 0


def test_a_run_the_cache_may_answer_does_not_import_litellm_early(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    args = judge_args(llm_stub, "--ragproof-judges=all")
    first = project.runpytest_subprocess(*_OPTIONS, *args)
    assert first.ret == 0, first.stdout.str()
    made = llm_stub.request_count
    project.makepyfile(test_unit=UNIT_TESTS.replace("range(12)", "range(1)"))
    # The cache now exists: the ordinary test sees no judges' thread and no litellm,
    # and the cached cases never import it.
    second = project.runpytest_subprocess(*_OPTIONS, "test_unit.py", *args)
    second.assert_outcomes(passed=len(CASES), failed=1)
    assert llm_stub.request_count == made
    assert eval((project.path / "seen.txt").read_text()) == [(False, False)]
    assert (project.path / "imported.txt").read_text() == "False"
