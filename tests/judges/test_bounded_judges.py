"""Issue 38 in real pytest runs: bounded judge calls, cut replies, instructions in the
user message, and usage lines that count failed calls."""

from __future__ import annotations

import re

import pytest

from tests.judge_stub import ScriptedJudge
from tests.judges.project import CASES as CASES
from tests.judges.project import CONFTEST as CONFTEST
from tests.judges.test_pytest_runs import FailOn, judge_args, judged_row
from tests.llm_stub import StubServer, accept_probes, cut, server_error
from tests.pytester_projects import load_json, run


def test_every_judge_call_carries_the_runs_budget_and_its_instructions_in_the_user_turn(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    args = judge_args(
        llm_stub,
        "--ragproof-judges=all",
        "--ragproof-judge-max-tokens=300",
        "--ragproof-judge-instructions=user",
        "--ragproof-report=results.json",
    )
    result = run(project, [], *args)
    assert result.ret == 0, result.stdout.str()
    assert llm_stub.requests and all(r["max_tokens"] == 300 for r in llm_stub.requests)
    assert all([m["role"] for m in r["messages"]] == ["user"] for r in llm_stub.requests)
    # The judges saw the same instructions: the same scores as a system-message run.
    out = result.stdout.str()
    assert judged_row(out, "qa", "faithfulness") == ["3", "0.833", "0.500"]
    doc = load_json(project.path / "results.json")
    assert doc["settings"]["judge_max_tokens"] == 300
    assert doc["settings"]["judge_instructions"] == "user"


def test_without_the_option_each_step_has_its_own_budget(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(project, [], *judge_args(llm_stub, "--ragproof-judges=all"))
    assert result.ret == 0
    budgets = {r["max_tokens"] for r in llm_stub.requests}
    assert len(budgets) > 1 and all(isinstance(b, int) and 256 < b <= 8192 for b in budgets)


def test_a_reply_cut_at_its_budget_is_that_case_error_named_by_the_budget(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    fragment = '{"claims": ["Berlin is the capital of Germany and is v'
    llm_stub.set_handler(FailOn("Berlin", cut(fragment, completion_tokens=120)))
    args = judge_args(
        llm_stub,
        "--ragproof-judges=faithfulness",
        "--ragproof-judge-max-tokens=120",
        "--ragproof-report=results.json",
    )
    result = run(project, [], *args)
    assert result.ret == 1
    out = result.stdout.str()
    assert "judge step 'answer-claims/1' failed: InvalidOutputError (cut at 120 tokens" in out
    doc = load_json(project.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    q3 = by_id["q3"]
    assert q3["status"] == "error" and "faithfulness" not in q3["metrics"]
    assert q3["judge_usage"]["failures"] == {"cut at 120 tokens": 1}
    assert q3["judge_usage"]["requests"] == 2  # the call and its one repair
    # Both cut replies were generated (and, at a provider, billed): their tokens count.
    assert q3["judge_usage"]["completion_tokens"] == 2 * 120
    assert q3["judge_usage"]["prompt_tokens"] == 2 * 11  # the stub's prompt tokens a reply
    assert "1 failed (1 cut at 120 tokens)" in out


def test_a_run_where_every_call_failed_says_so_in_its_usage_line(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(FailOn("", server_error(500)))
    args = judge_args(llm_stub, "--ragproof-judges=faithfulness", "--ragproof-report=r.json")
    result = run(project, [], *args)
    assert result.ret == 1
    out = result.stdout.str()
    sent = llm_stub.request_count
    assert sent > 0
    line = next(x for x in out.splitlines() if x.startswith("judges (openai/stub-judge)"))
    assert line.startswith("judges (openai/stub-judge): 0 call(s), ")
    assert f"failed ({sent} HTTP 500)" in line  # retries are 0: one request per call
    assert f"{sent} request(s)" in line
    doc = load_json(project.path / "r.json")
    assert doc["judges"]["failures"] == {"HTTP 500": sent}
    assert doc["judges"]["requests"] == sent


def test_a_judge_that_answers_nothing_stops_the_run_once_naming_its_endpoint(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    from tests.llm_stub import hang

    llm_stub.set_handler(lambda body: hang(5.0))
    args = judge_args(
        llm_stub,
        "--ragproof-judges=all",
        "--ragproof-judge-timeout=0.3",
        "--ragproof-judge-retries=2",
    )
    result = run(project, [], *args)
    assert result.ret == 4
    out = result.stdout.str()
    assert f"{llm_stub.url} answers nothing" in out
    assert "lowered to 1" in out
    # 22 calls with 3 attempts each would be 66 requests of 0.3 s; the run stopped early.
    assert llm_stub.request_count < 30
    # Said once, not per case (pytest's short summary, untruncated where CI is set,
    # repeats the failure's first line).
    assert out.split("short test summary info")[0].count("answers nothing") == 1
    # The requests that got no answer are on the usage line, not "0 request(s), $0.0000".
    # (the stopped case's own; cases never reported when the run stopped are not in it).
    [usage] = [line for line in out.splitlines() if line.startswith("judges (")]
    requests = int(re.search(r"(\d+) request\(s\)", usage)[1])  # type: ignore[index]
    assert 0 < requests <= llm_stub.request_count, usage
    assert "failed (" in usage and "$0.0000" not in usage, usage


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_auto_asks_a_local_server_once_and_says_what_it_chose(
    project: pytest.Pytester, llm_stub: StubServer, workers: list[str]
) -> None:
    # llama-cpp-python's server: HTTP 500 to json_schema, its json_object with a schema.
    llm_stub.probe_handler = accept_probes("json_object_schema")
    llm_stub.set_handler(ScriptedJudge())
    args = judge_args(llm_stub, "--ragproof-judges=all", "--ragproof-report=results.json")
    result = run(project, workers, *args)
    assert result.ret == 0, result.stdout.str()
    chosen = "json_object with its schema (auto: json_schema refused, HTTP 500)"
    assert result.stdout.str().count(f"judge response format: {chosen}\n") == 1
    # Two probes (json_schema, then json_object) once per process: each xdist worker
    # that judged a case asks for itself.
    assert len(llm_stub.probes) in ((2, 4) if workers else (2,))
    for body in llm_stub.requests:
        assert body["response_format"]["type"] == "json_object"
        assert "schema" in body["response_format"]
    # The scores are those of a prompt-only run (test_pytest_runs' figures).
    assert judged_row(result.stdout.str(), "qa", "faithfulness") == ["3", "0.833", "0.500"]
    judges = load_json(project.path / "results.json")["judges"]
    assert judges["response_format_chosen"] == chosen
    assert judges["judge_response_format"] == "auto"
