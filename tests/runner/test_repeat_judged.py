"""``--ragproof-repeat`` with LLM judges: every repeat's answer is judged (serial and -n 2)."""

from __future__ import annotations

import pytest

from pytest_ragproof.llm.client import load_litellm
from tests.judge_stub import ScriptedJudge
from tests.judges.conftest import SECRET
from tests.judges.test_pytest_runs import CASES, CONFTEST, judge_args
from tests.llm_stub import StubServer
from tests.pytester_projects import load_json, run, write_frozen

# Imported once per test process, outside the in-process pytester runs (see
# tests/judges/conftest.py).
load_litellm()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("RAGPROOF_JUDGE_MODEL", raising=False)
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    return pytester


def test_each_repeat_is_judged_and_counted(
    project: pytest.Pytester, llm_stub: StubServer, mode: list[str]
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(
        project,
        mode,
        *judge_args(
            llm_stub,
            "--ragproof-judges=all",
            "--ragproof-no-cache",
            "--ragproof-repeat=3",
            "--ragproof-aggregate-threshold=qa:faithfulness>=0.9",
            "--ragproof-report=results.json",
        ),
    )
    assert result.ret == 1
    # One run judges 22 calls (tests/judges/test_pytest_runs.py); three repeats judge each.
    assert "judges (openai/stub-judge): 66 call(s), 0 cached" in result.stdout.str()
    doc = load_json(project.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q1"]["judge_usage"]["calls"] == 21
    assert by_id["q2"]["metrics"]["faithfulness"] == 0.5  # the mean of three 0.5s
    assert by_id["q2"]["repeats"]["min"]["faithfulness"] == 0.5
    assert by_id["q2"]["judgements"]["faithfulness"]["claims"][1]["verdict"] == "unsupported"
    assert doc["judges"]["calls"] == 66
    assert "ragproof gate FAILED: aggregate qa:faithfulness>=0.9" in result.stdout.str()
