"""Judges in real pytest runs (serial and ``-n 2``) against the scripted judge server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ragproof.llm.cache import STORE_NAME
from tests.judge_stub import ScriptedJudge
from tests.judges.conftest import SECRET
from tests.judges.project import CASES as CASES  # tests/runner import them from here
from tests.judges.project import CONFTEST as CONFTEST
from tests.judges.project import evaluate_project
from tests.llm_stub import Action, StubServer, server_error
from tests.pytester_projects import load_json, run


def judge_args(stub: StubServer, *more: str) -> list[str]:
    return [
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={stub.url}",
        "--ragproof-cache-dir=llmcache",
        "--ragproof-judge-retries=0",
        *more,
    ]


AGGREGATE_ARGS = ("--ragproof-aggregate-threshold=qa:faithfulness>=0.9",)


def _check_the_judged_aggregate(result: pytest.RunResult, doc: dict[str, Any]) -> None:
    """A run of every judge with ``qa:faithfulness>=0.9`` fails that gate (q2: 0.5)."""
    assert result.ret == 1
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*= 4 passed, 1 ragproof gate failed in *"])
    assert "ragproof gate FAILED: aggregate qa:faithfulness>=0.9" in out
    assert "worst: q2 0.5" in out
    assert "judges (openai/stub-judge): 22 call(s), 0 cached" in out
    assert judged_row(out, "qa", "answer_correctness") == ["3", "0.778", "0.667"]
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q2"]["metrics"]["faithfulness"] == 0.5
    assert by_id["q1"]["metrics"]["faithfulness"] == 1.0
    assert by_id["q2"]["judgements"]["faithfulness"]["claims"][1] == {
        "claim": "The Seine is pink.",
        "verdict": "unsupported",
        "context": None,
    }
    assert by_id["u1"]["not_judged"] == {"context_relevance": "no_contexts"}
    assert by_id["u1"]["metrics"]["abstained_judged"] == 1.0
    assert by_id["q1"]["judge_usage"]["calls"] == 7
    assert doc["judges"]["calls"] == 22 and doc["judges"]["cases"] == 4
    assert doc["settings"]["judge_model"] == "openai/stub-judge"
    agg = [a for a in doc["aggregates"] if a["metric"] == "faithfulness" and a["selector"] == "qa"]
    assert agg[0]["n"] == 3 and agg[0]["values"]["mean"] == pytest.approx(2.5 / 3)


def judged_row(out: str, kind: str, metric: str) -> list[str]:
    """n, mean, min of a row of the summary's judged scores table."""
    lines = out.splitlines()
    start = lines.index("judged scores (mean and min over the judged cases of each kind):")
    assert lines[start + 1].split() == [
        "pipeline",
        "kind",
        "judged",
        "metric",
        "n",
        "mean",
        "min",
        "not",
        "scored",
    ]
    rows = [line.split() for line in lines[start + 3 :] if line.startswith("rag_pipeline ")]
    (row,) = [r for r in rows if r[1:3] == [kind, metric]]
    return row[3:]


def test_every_judged_metric_has_its_mean_per_kind_in_the_summary(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    """No threshold names a judged metric: the summary still shows each one's scores."""
    llm_stub.set_handler(ScriptedJudge())
    result = run(project, [], *judge_args(llm_stub, "--ragproof-judges=all"))
    assert result.ret == 0
    out = result.stdout.str()
    assert "faithfulness" not in out.split("judges (openai/stub-judge)")[0]  # no gate names it
    # q1, q2, q3: faithfulness 1, 0.5, 1; the declining u1 is judged on abstention only
    assert judged_row(out, "qa", "faithfulness") == ["3", "0.833", "0.500"]
    assert judged_row(out, "qa", "answer_relevancy") == ["3", "0.833", "0.500"]
    assert judged_row(out, "qa", "context_recall") == ["3", "1.000", "1.000"]
    assert judged_row(out, "unanswerable", "abstained_judged") == ["1", "1.000", "1.000"]
    assert "not judged: 1 no_contexts" in out


def test_a_judged_aggregate_gates_the_run(project: pytest.Pytester, llm_stub: StubServer) -> None:
    llm_stub.set_handler(ScriptedJudge())
    args = judge_args(llm_stub, "--ragproof-judges=all", *AGGREGATE_ARGS)
    result = run(project, [], *args, "--ragproof-report=results.json")
    _check_the_judged_aggregate(result, load_json(project.path / "results.json"))


def test_a_judged_run_under_xdist_gates_bounds_caches_and_agrees_with_evaluate(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``-n 2`` run of every judge (each worker imports litellm: seconds), checked for
    everything it shows: the gate, each worker's bound on requests in flight, the one
    cache both workers wrote, the same verdict as ``evaluate()``, and a re-run served by
    that cache that never imports litellm."""
    from tests.runner.test_verdict_agreement import _timeless

    # Four cases, three of them qa with seven requests each: more work than slots, so
    # the look-ahead keeps every slot busy (per process under xdist) and never more.
    llm_stub.set_handler(ScriptedJudge(delay_s=0.1))
    args = judge_args(
        llm_stub,
        "--ragproof-judges=all",
        "--ragproof-judge-concurrency=3",
        *AGGREGATE_ARGS,
        "--ragproof-report=results.json",
    )
    first = run(project, ["-n", "2"], *args)
    before = load_json(project.path / "results.json")
    _check_the_judged_aggregate(first, before)
    # Each worker has its own bound; whether the two overlap is timing.
    assert 3 <= llm_stub.max_in_flight <= 6
    # Both workers wrote into one SQLite file; closed at the end, it is one file again.
    assert [p.name for p in (project.path / "llmcache").iterdir()] == [STORE_NAME]
    assert "LLM cache" not in first.stdout.str()  # no damaged entry, no dropped write

    # evaluate() over the same pipeline and settings (a cache of its own, empty) reaches
    # the same document, timings aside.
    ours = evaluate_project(
        project,
        llm_stub.url,
        monkeypatch,
        judge_retries=0,
        judge_concurrency=3,
        cache_dir="llmcache-evaluate",
        thresholds=["qa:faithfulness>=0.9"],
    ).to_dict()
    mine, pytests = _timeless(ours), _timeless(before)
    for key in sorted(set(mine) | set(pytests)):
        assert mine.get(key) == pytests.get(key), f"'{key}' differs"

    # A serial re-run in a fresh interpreter with unchanged answers: all from the cache
    # the workers wrote, no request, and litellm never imported.
    made = llm_stub.request_count
    second = project.runpytest_subprocess(
        "--ragproof-dataset=cases.frozen.json", "-p", "no:cacheprovider", *args
    )
    assert second.ret == 1, second.stdout.str()  # the same gate fails
    assert llm_stub.request_count == made
    assert (project.path / "imported.txt").read_text() == "False"
    after = load_json(project.path / "results.json")
    for a, b in zip(before["cases"], after["cases"], strict=True):
        for key in ("judgements", "not_judged"):
            assert a.get(key) == b.get(key)
        assert {k: v for k, v in a["metrics"].items() if k != "latency_s"} == {
            k: v for k, v in b["metrics"].items() if k != "latency_s"
        }
    assert after["judges"]["calls"] == 0 and after["judges"]["cached"] == 22
    assert "judges (openai/stub-judge): 0 call(s), 22 cached" in second.stdout.str()


def test_judges_without_a_model_are_one_usage_error(
    project: pytest.Pytester, mode: list[str]
) -> None:
    result = run(project, mode, "--ragproof-aggregate-threshold=qa:faithfulness>=0.8")
    assert result.ret == 4
    err = result.stderr.str()
    assert "no judge model is configured: set RAGPROOF_JUDGE_MODEL" in err
    assert "a threshold or tolerance on faithfulness" in err
    assert "Traceback" not in err


def test_an_unknown_judge_name_suggests_the_closest(project: pytest.Pytester) -> None:
    result = run(project, [], "--ragproof-judges=faithfulnes", "--ragproof-judge-model=x/y")
    assert result.ret == 4
    assert "unknown judge 'faithfulnes' (did you mean 'faithfulness'?)" in result.stderr.str()


class FailOn:
    """The scripted judge, but every request mentioning ``marker`` gets ``action``."""

    def __init__(self, marker: str, action: Action) -> None:
        self.judge = ScriptedJudge()
        self.marker = marker
        self.action = action

    def __call__(self, body: dict[str, Any]) -> Action:
        if self.marker in json.dumps(body):
            return self.action
        return self.judge(body)


def test_a_failing_judge_call_is_that_case_error_and_the_run_goes_on(
    project: pytest.Pytester, llm_stub: StubServer, mode: list[str]
) -> None:
    llm_stub.set_handler(FailOn("Berlin", server_error(503, echo=f"boom {SECRET}")))
    result = run(
        project,
        mode,
        *judge_args(
            llm_stub,
            "--ragproof-judges=faithfulness",
            "--ragproof-report=results.json",
            "--ragproof-aggregate-threshold=qa:faithfulness>=0.5",
        ),
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert "judge step 'answer-claims/1' failed: ProviderError" in out
    assert "HTTP 503" in out
    assert SECRET not in out and "boom" not in out
    doc = load_json(project.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q3"]["status"] == "error" and by_id["q3"]["error_type"] == "JudgeError"
    assert by_id["q3"]["judge_error"]["status"] == 503
    assert "faithfulness" not in by_id["q3"]["metrics"]
    assert by_id["q1"]["status"] == "passed"
    agg = [a for a in doc["aggregates"] if a["metric"] == "faithfulness" and a["selector"] == "qa"]
    assert agg[0]["n_error"] == 1 and agg[0]["n"] == 2
    assert SECRET not in (project.path / "results.json").read_text()


def test_a_budget_never_turns_into_a_pass(
    project: pytest.Pytester, llm_stub: StubServer, mode: list[str]
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(
        project,
        mode,
        *judge_args(
            llm_stub,
            "--ragproof-judge-max-calls=2",
            "--ragproof-report=results.json",
            "--ragproof-aggregate-threshold=qa:faithfulness>=0",
        ),
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert "not judged (budget or dry run)" in out
    assert llm_stub.request_count <= 2
    doc = load_json(project.path / "results.json")
    reasons = [
        c.get("not_judged", {}).get("faithfulness") for c in doc["cases"] if c["kind"] == "qa"
    ]
    assert reasons.count("budget") >= 2
    assert doc["passed"] is False


def test_a_dry_run_calls_nothing_and_estimates(
    project: pytest.Pytester, llm_stub: StubServer, mode: list[str]
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(
        project,
        mode,
        *judge_args(llm_stub, "--ragproof-judges=faithfulness", "--ragproof-judge-dry-run"),
    )
    assert llm_stub.request_count == 0
    out = result.stdout.str()
    assert "judge dry run: the run would make 6 call(s)" in out
    assert "nothing was called" in out


def test_redaction_leaves_out_every_reason(project: pytest.Pytester, llm_stub: StubServer) -> None:
    llm_stub.set_handler(ScriptedJudge())
    result = run(
        project,
        [],
        *judge_args(
            llm_stub, "--ragproof-judges=all", "--ragproof-redact", "--ragproof-report=results.json"
        ),
    )
    assert result.ret == 0, result.stdout.str()
    text = (project.path / "results.json").read_text()
    assert "Seine is pink" not in text and "capital" not in text
    doc = json.loads(text)
    q2 = next(c for c in doc["cases"] if c["id"] == "q2")
    assert q2["metrics"]["faithfulness"] == 0.5
    assert "judgements" not in q2


def test_a_case_threshold_on_a_judged_metric_says_why_it_is_missing(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    project.makeconftest(
        CONFTEST.replace('"contexts": [{"id": doc, "text": text}]', '"contexts": []')
    )
    result = run(
        project, [], *judge_args(llm_stub, "--ragproof-case-threshold=qa:context_recall>=0.5")
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert (
        "context_recall: not available (not judged: no_contexts (the pipeline returned no "
        "contexts))" in out
    )


def test_rag_judge_inputs_chooses_what_the_judges_see(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    project.makeconftest(
        CONFTEST
        + """
@pytest.fixture(scope="session")
def rag_judge_inputs():
    def choose(output, case):
        contexts = ["Paris is the capital of France."]
        return {"question": "REWRITTEN " + case.question, "contexts": contexts}
    return choose
"""
    )
    result = run(
        project,
        [],
        *judge_args(
            llm_stub, "--ragproof-judges=context_relevance", "--ragproof-report=results.json"
        ),
    )
    assert result.ret == 0, result.stdout.str()
    sent = [json.dumps(r) for r in llm_stub.requests]
    assert all("REWRITTEN" in s for s in sent) and len(sent) == 4
    doc = load_json(project.path / "results.json")
    assert all(len(c["judgements"]["context_relevance"]["contexts"]) == 1 for c in doc["cases"])


def test_judge_concurrency_overlaps_calls_of_several_cases(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge(delay_s=0.2))
    result = run(
        project,
        [],
        *judge_args(
            llm_stub, "--ragproof-judges=abstained_judged", "--ragproof-judge-concurrency=4"
        ),
    )
    assert result.ret == 0, result.stdout.str()
    assert llm_stub.max_in_flight >= 2


def test_a_failed_judged_case_threshold_shows_what_the_judge_held_against_the_answer(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    args = judge_args(llm_stub, "--ragproof-case-threshold=qa:faithfulness>=0.9")
    result = run(project, [], *args)
    assert result.ret == 1
    out = result.stdout.str()
    assert "qa:faithfulness>=0.9: faithfulness = 0.5 (expected >= 0.9)" in out
    assert "faithfulness (faithfulness/1): unsupported: 'The Seine is pink.'" in out
    redacted = run(project, [], *args, "--ragproof-redact")
    assert redacted.ret == 1
    assert "Seine is pink" not in redacted.stdout.str()


def test_a_judge_model_without_a_key_is_said_once_and_stops_the_run(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run(project, [], *judge_args(llm_stub, "--ragproof-judges=abstained_judged"))
    assert result.ret == 4
    out = result.stdout.str()
    assert out.count("the judge model cannot be called") >= 1
    assert "no API key is set: the model openai/stub-judge needs OPENAI_API_KEY" in out
    result.stdout.fnmatch_lines(["*1 failed*"])
    assert llm_stub.request_count == 0


def test_every_judge_keeps_the_configured_number_of_requests_in_flight(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    # Four cases, three of them qa with seven requests each: more work than slots, so
    # the look-ahead keeps every slot busy and never more. (Under -n 2, each worker's
    # bound: test_a_judged_run_under_xdist_gates_bounds_caches_and_agrees_with_evaluate.)
    llm_stub.set_handler(ScriptedJudge(delay_s=0.1))
    args = judge_args(
        llm_stub, "--ragproof-judges=all", "--ragproof-no-cache", "--ragproof-judge-concurrency=3"
    )
    result = run(project, [], *args)
    assert result.ret == 0, result.stdout.str()
    assert llm_stub.max_in_flight == 3


def test_evaluate_keeps_the_configured_number_of_requests_in_flight(
    project: pytest.Pytester, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_stub.set_handler(ScriptedJudge(delay_s=0.1))
    results = evaluate_project(
        project,
        llm_stub.url,
        monkeypatch,
        judge_concurrency=5,
        cache=False,
    )
    assert results.to_dict()["judges"]["requests"] == llm_stub.request_count
    assert llm_stub.max_in_flight == 5


def test_a_damaged_cache_file_is_set_aside_and_said_in_the_summary(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    llm_stub.set_handler(ScriptedJudge())
    (project.path / "llmcache").mkdir()
    (project.path / "llmcache" / STORE_NAME).write_bytes(b"\x00garbage, not SQLite" * 40)
    args = judge_args(llm_stub, "--ragproof-judges=faithfulness")
    result = run(project, [], *args)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"*LLM cache *{STORE_NAME} was not a usable database*set aside as {STORE_NAME}.corrupt*"]
    )
    again = run(project, [], *args)
    assert again.ret == 0 and "0 call(s)" in again.stdout.str()
    assert "LLM cache" not in again.stdout.str()
