"""The LLM layer as a judged pytest run sees it: keys checked up front, a rejected key
stops the run once, and a cached re-run reports the cost as the first run did."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_ragproof.llm.client import load_litellm
from tests.judge_stub import ScriptedJudge
from tests.llm_stub import StubServer, closed_url, reply, server_error
from tests.pytester_projects import load_json, run, write_frozen

# litellm is imported once per test process, not inside an in-process pytester run
# (see tests/judges/conftest.py).
load_litellm()

SECRET = "sk-runs-SECRET77"
CASES: list[dict[str, Any]] = [
    {
        "id": f"q{i}",
        "kind": "qa",
        "question": f"What is the capital of country {i}?",
        "expected_answer": "Paris is the capital of France.",
        "expected_source_ids": ["d1"],
    }
    for i in range(1, 4)
]
CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        text = "Paris is the capital of France."
        return {"answer": text, "contexts": [{"id": "d1", "text": text}]}
    return pipeline
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("RAGPROOF_JUDGE_MODEL", raising=False)
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    return pytester


def _args(stub: StubServer, *more: str, model: str = "openai/stub-judge") -> list[str]:
    return [
        f"--ragproof-judge-model={model}",
        f"--ragproof-judge-api-base={stub.url}",
        "--ragproof-cache-dir=llmcache",
        "--ragproof-judge-retries=0",
        "--ragproof-judges=faithfulness",
        "--ragproof-report=results.json",
        *more,
    ]


def test_a_missing_key_is_one_usage_error_before_any_case(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    llm_stub.set_handler(ScriptedJudge())
    model = "anthropic/claude-3-5-haiku-latest"
    result = run(project, [], *_args(llm_stub, "--ragproof-no-cache", model=model))
    assert result.ret == 4
    err = result.stderr.str()
    assert "no API key is set: the model anthropic/claude-3-5-haiku-latest needs" in err
    assert err.count("ANTHROPIC_API_KEY") == 1
    assert "Traceback" not in err
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
    assert llm_stub.request_count == 0


def _before_short_summary(out: str) -> str:
    """The output above pytest's short test summary, which repeats each failure's first line
    in full where pytest sees a CI (``CI`` set: no truncation to the terminal's width)."""
    return out.split("short test summary info")[0]


def test_a_missing_key_with_the_cache_on_is_said_once_at_the_first_miss(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    llm_stub.set_handler(ScriptedJudge())
    result = run(project, [], *_args(llm_stub))
    assert result.ret == 4
    out = _before_short_summary(result.stdout.str())
    assert out.count("no API key is set: the model openai/stub-judge needs OPENAI_API_KEY") == 1
    result.stdout.fnmatch_lines(["*1 failed*"])
    assert llm_stub.request_count == 0


#: Which of ragproof's threads are alive when pytest reports the run's stop.
STOP_HOOK = """
import threading

def pytest_keyboard_interrupt(excinfo):
    names = sorted(t.name for t in threading.enumerate() if t.name.startswith("ragproof"))
    with open("alive-at-stop.txt", "w") as f:
        f.write(" ".join(names))
"""


def test_a_rejected_key_stops_the_run_once_and_keeps_the_case_metrics(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(lambda body: server_error(401, echo=f"bad key {SECRET}"))
    project.makeconftest(CONFTEST + STOP_HOOK)
    result = run(project, [], *_args(llm_stub, "--ragproof-no-cache"))
    assert result.ret == 4
    # The work started ahead is stopped before pytest formats the stop (with ast.parse:
    # another thread compiling meanwhile makes CPython 3.11 raise SystemError).
    assert (project.path / "alive-at-stop.txt").read_text() == ""
    out = _before_short_summary(result.stdout.str())
    assert out.count("the judge model cannot be called: provider call failed") == 1
    assert "AuthenticationError (HTTP 401)" in out and "check the provider's API key" in out
    assert SECRET not in out and "bad key" not in out
    result.stdout.fnmatch_lines(["*1 failed*"])
    # Judging starts as pipeline outputs land, so calls already in flight may be refused
    # too; none is retried and no later case is judged.
    assert llm_stub.request_count <= len(CASES)
    [case] = load_json(project.path / "results.json")["cases"]
    assert case["metrics"]["hit@5"] == 1.0  # the deterministic metrics stay


def test_a_refused_connection_stops_the_run_once_naming_the_address(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The address as a user's shell gives it (litellm reads OPENAI_API_BASE), with the
    # retries left on: litellm reports the refusal as an HTTP 500, which is retried.
    address = closed_url()
    monkeypatch.setenv("OPENAI_API_BASE", address)
    project.makeconftest(CONFTEST + STOP_HOOK)
    args = ["--ragproof-judge-model=openai/fake", "--ragproof-judges=faithfulness"]
    args += ["--ragproof-no-cache", "--ragproof-report=results.json"]
    result = run(project, [], *args, "--ragproof-judge-retries=2")
    assert result.ret == 4, result.stdout.str()
    assert (project.path / "alive-at-stop.txt").read_text() == ""
    out = _before_short_summary(result.stdout.str())
    expected = f"the judge model cannot be called: cannot reach {address} (connection refused)"
    assert out.count(expected) == 1, out
    assert "start the model server or correct the API base" in out
    assert "HTTP 500" not in out and "InternalServerError" not in out
    result.stdout.fnmatch_lines(["*1 failed*"])
    doc = load_json(project.path / "results.json")
    [case] = doc["cases"]
    assert case["error_type"] == "JudgeConfigError"
    assert case["metrics"]["hit@5"] == 1.0


def test_a_cached_rerun_reports_the_cost_as_the_first_run_did(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    first = run(project, [], *_args(llm_stub))
    assert first.ret == 0, first.stdout.str()
    made = llm_stub.request_count
    assert "cost unknown (no price for this model)" in first.stdout.str()
    # Two cases may ask the same call: the later one is served by the cache when the
    # earlier one has answered by then (under load), so read how the first run split.
    split = re.search(r"(\d+) call\(s\), (\d+) cached", first.stdout.str())
    assert split is not None
    calls = int(split[1]) + int(split[2])
    second = run(project, [], *_args(llm_stub))
    assert second.ret == 0 and llm_stub.request_count == made
    out = second.stdout.str()
    assert f"0 call(s), {calls} cached, 0 request(s)" in out
    assert "cost unknown (no price for this model)" in out and "$0.0000" not in out
    assert load_json(project.path / "results.json")["judges"]["cost_usd"] is None


def test_a_usd_budget_for_a_model_without_a_price_is_refused_up_front(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(project, [], *_args(llm_stub, "--ragproof-judge-budget-usd=0.002"))
    assert result.ret == 4
    err = result.stderr.str()
    assert "litellm has no price for the judge model openai/stub-judge" in err
    assert "--ragproof-judge-max-calls" in err and "Traceback" not in err
    assert llm_stub.request_count == 0


PRICED_CONFTEST = """
from pytest_ragproof.llm.client import load_litellm

litellm = load_litellm()  # offline, as ragproof imports it

# A price the user gives for a self-hosted model: USD per token in and out.
litellm.register_model({"openai/priced-stub-judge": {
    "input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06,
    "litellm_provider": "openai", "mode": "chat"}})
"""


def test_a_usd_budget_counts_against_a_price_the_user_registers(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())  # 100 prompt + 20 completion tokens a call
    project.makeconftest(CONFTEST + PRICED_CONFTEST)
    args = _args(llm_stub, "--ragproof-judge-budget-usd=0.0001", model="openai/priced-stub-judge")
    result = run(project, [], *args)
    out = result.stdout.str()
    assert result.ret != 4, result.stderr.str()
    assert "cost unknown" not in out and "not judged" in out
    assert llm_stub.request_count < 2 * len(CASES)  # the budget stopped the judging
    doc = load_json(project.path / "results.json")
    assert doc["judges"]["cost_usd"] == pytest.approx(120e-6 * doc["judges"]["calls"])


def test_refused_replies_count_against_the_usd_budget(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    # Every reply is refused (not JSON) after its repair: each failed call still received
    # two replies of 11 + 7 tokens, billed at 1e-6 USD a token, 36e-6 USD a call.
    llm_stub.default = reply("not json")
    project.makeconftest(CONFTEST + PRICED_CONFTEST)
    args = _args(
        llm_stub,
        "--ragproof-judge-budget-usd=0.00003",
        "--ragproof-judge-concurrency=1",
        model="openai/priced-stub-judge",
    )
    result = run(project, [], *args)
    out = result.stdout.str()
    assert result.ret == 1, out + result.stderr.str()
    assert "InvalidOutputError" in out and "cost unknown" not in out
    assert "1 failed (1 invalid output), 0 cached, 2 request(s), 22 prompt + 14 completion" in out
    # The first failed call spent 36e-6 USD of the 30e-6: no call after it.
    assert llm_stub.request_count == 2
    doc = load_json(project.path / "results.json")
    judges = doc["judges"]
    assert judges["failures"] == {"invalid output": 1} and judges["calls"] == 0
    assert (judges["prompt_tokens"], judges["completion_tokens"]) == (22, 14)
    assert judges["cost_usd"] == pytest.approx(36e-6)
    assert judges["not_judged"].get("budget", 0) >= 1
