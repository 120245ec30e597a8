"""Every kind of judge failure is an error on that case, through pytest and ``evaluate()``.

The scripted judge answers by rule, except on the requests of case q3 (its answer
mentions Berlin) for one step, where it fails in one of the ways a judge fails: a reply
still invalid after its repair (a verdict list of the wrong length, JSON that does not
parse), a server error, a rate limit beyond the retries, a timeout. The case is then an
``error`` that names the step and the error type, keeps its answer, contexts and
deterministic metrics, and counts as an error in the gates and the exports.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.judge_stub import ScriptedJudge
from tests.judges.project import evaluate_project  # imports evaluate() before any pytester run
from tests.llm_stub import Action, StubServer, hang, rate_limited, reply, server_error
from tests.pytester_projects import load_json, run

_STEP_LINE = "ragproof judge step: "

#: name -> (failing step, its reply, the error type, the error's HTTP status)
FAULTS: dict[str, tuple[str, Action, str, int | None]] = {
    "invalid_after_repair": (
        "context-relevance",
        reply(json.dumps({"verdicts": []})),  # no verdict for the one passage, twice
        "InvalidOutputError",
        None,
    ),
    "malformed_json": ("answer-claims", reply('{"claims": ["Berlin'), "InvalidOutputError", None),
    # A reply cut off at its token limit, copied back into a claim by the repair (its words
    # are the answer's, so only its shape gives it away), and a claim cut inside a word.
    "claim_with_json_syntax": (
        "answer-claims",
        reply(json.dumps({"claims": ['{"claims": ["Berlin is the capital of Ger']})),
        "InvalidOutputError",
        None,
    ),
    "claim_cut_inside_a_word": (
        "answer-claims",
        reply(json.dumps({"claims": ["Berlin is the capital of Ger"]})),
        "InvalidOutputError",
        None,
    ),
    "server_error": ("faithfulness", server_error(500), "ProviderError", 500),
    "rate_limit_exhausted": (
        "answer-claims",
        rate_limited(retry_after=0.01),
        "ProviderError",
        429,
    ),
    "timeout": ("abstained", hang(8.0), "LLMTimeoutError", None),
}
#: Judge calls time out after this (the hanging step only: the stub answers the rest at once).
TIMEOUT_S = 2.0


class FailOnBerlin:
    """The scripted judge, but ``step`` requests of the Berlin case get ``action``."""

    def __init__(self, step: str, action: Action) -> None:
        self.judge = ScriptedJudge()
        self.step = step
        self.action = action
        self.failed = 0

    def __call__(self, body: dict[str, Any]) -> Action:
        system = body["messages"][0]["content"]
        if f"{_STEP_LINE}{self.step}/" in system and "Berlin" in json.dumps(body):
            self.failed += 1
            return self.action
        return self.judge(body)


def _args(stub: StubServer) -> list[str]:
    return [
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={stub.url}",
        "--ragproof-no-cache",
        "--ragproof-judge-retries=1",
        f"--ragproof-judge-timeout={TIMEOUT_S}",
        "--ragproof-judges=all",
    ]


def _check_error_case(case: dict[str, Any], step: str, error_type: str, status: int | None) -> None:
    assert case["status"] == "error"
    assert case["error_type"] == "JudgeError"
    assert case["judge_error"]["step"] == f"{step}/1"
    assert case["judge_error"]["type"] == error_type
    assert case["judge_error"].get("status") == status
    # What the pipeline returned and what was measured without a judge is kept.
    assert case["answer"] == "Berlin is the capital of Germany."
    assert [c["id"] for c in case["contexts"]] == ["d3"]
    assert case["retrieved_ids"] == ["d3"]
    assert case["metrics"]["exact_match"] == 1.0
    assert case["metrics"]["hit@1"] == 1.0
    assert "latency_s" in case["metrics"]
    # ... and no judged score: nothing partial is reported as measured.
    assert "faithfulness" not in case["metrics"]
    assert "abstained_judged" not in case["metrics"]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_judge_failure_is_an_error_case_through_pytest(
    project: pytest.Pytester, llm_stub: StubServer, fault: str
) -> None:
    step, action, error_type, status = FAULTS[fault]
    handler = FailOnBerlin(step, action)
    llm_stub.set_handler(handler)
    result = run(
        project,
        [],
        *_args(llm_stub),
        "--ragproof-report=results.json",
        "--ragproof-inspectorraget=run.json",
        "--ragproof-aggregate-threshold=qa:latency_s<=600",
        "--ragproof-aggregate-threshold=qa:faithfulness>=0",
    )
    out = result.stdout.str()
    assert handler.failed >= 2  # the call and its repair, or its retry
    assert "KeyError" not in out and "Traceback" not in out
    assert f"ragproof case q3: judge step '{step}/1' failed: {error_type}" in out
    assert "the case is an error, not a pass" in out
    if status is not None:
        assert f"HTTP {status}" in out
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == 1

    doc = load_json(project.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    _check_error_case(by_id["q3"], step, error_type, status)
    assert by_id["q1"]["status"] == "passed" and "faithfulness" in by_id["q1"]["metrics"]
    # q3 is an error of the judged metric; what was measured on it (latency, retrieval)
    # still counts in those aggregates: a failed judge takes no deterministic metric away.
    aggs = {a["metric"]: a for a in doc["aggregates"] if a["selector"] == "qa"}
    assert aggs["faithfulness"]["n_error"] == 1 and aggs["faithfulness"]["n"] == 2, aggs
    assert aggs["latency_s"]["n_error"] == 0 and aggs["latency_s"]["n"] == 3, aggs
    gates = {t["expression"]: t for t in doc["thresholds"]}
    latency = gates["qa:latency_s<=600"]
    assert latency["verdict"] == "pass" and latency["n"] == 3 and latency["observed"] is not None
    assert "no scored cases" not in out
    assert "cases: 3 passed, 0 failed, 1 error" in out
    assert "errors: q3 (JudgeError)" in out

    export = load_json(project.path / "run.qa.json")
    (evaluation,) = [e for e in export["evaluations"] if "Berlin" in str(e.get("model_response"))]
    assert evaluation["model_response"] == "Berlin is the capital of Germany."
    notes = {k: v["system"]["value"] for k, v in evaluation["annotations"].items()}
    assert notes["status"] == "error"
    assert notes["failed_thresholds"].startswith(
        f"error: JudgeError: judge step '{step}/1' failed: {error_type}"
    )
    assert notes["exact_match"] is not None


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_judge_failure_is_an_error_case_through_evaluate(
    project: pytest.Pytester,
    llm_stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
) -> None:
    step, action, error_type, status = FAULTS[fault]
    llm_stub.set_handler(FailOnBerlin(step, action))
    doc = evaluate_project(
        project,
        llm_stub.url,
        monkeypatch,
        judge_retries=1,
        judge_timeout=TIMEOUT_S,
        cache=False,
        thresholds=["qa:latency_s<=600"],
    ).to_dict()
    by_id = {c["id"]: c for c in doc["cases"]}
    _check_error_case(by_id["q3"], step, error_type, status)
    assert by_id["q1"]["status"] == "passed"
    aggs = {a["metric"]: a for a in doc["aggregates"] if a["selector"] == "qa"}
    assert aggs["latency_s"]["n_error"] == 0 and aggs["latency_s"]["n"] == 3, aggs
    assert aggs["faithfulness"]["n_error"] == 1 and aggs["faithfulness"]["n"] == 2, aggs


def test_a_gate_row_shows_the_values_it_passed_on_when_every_judge_call_fails(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    """Every faithfulness request fails: each qa case is an error, yet keeps its retrieval
    metrics; the recall gate passes on them, and its summary row shows their mean."""
    llm_stub.set_handler(lambda body: server_error(500))
    result = run(
        project,
        [],
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={llm_stub.url}",
        "--ragproof-no-cache",
        "--ragproof-judge-retries=0",
        "--ragproof-judges=faithfulness",
        "--ragproof-case-threshold=none",
        "--ragproof-aggregate-threshold=qa:recall@5>=0.6",
        "--ragproof-report=results.json",
    )
    out = result.stdout.str()
    assert "cases: 1 passed, 0 failed, 3 error" in out
    doc = load_json(project.path / "results.json")
    (gate,) = doc["thresholds"]
    assert gate["verdict"] == "pass" and gate["n"] == 3 and gate["observed"] == 1.0
    assert re.search(
        r"rag_pipeline +qa +recall@5 +3 +1\.000 +1\.000 +mean >= 0\.6 \(aggregate\) +PASS", out
    ), out


def test_a_claim_cut_from_a_reply_is_not_cached(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    """The claims step of q3 answers with a claim carrying a cut-off reply, then (on a second
    run, same cache) correctly: the invalid reply was not cached, so the second run asks again
    and scores the case."""
    step, action, _, _ = FAULTS["claim_with_json_syntax"]
    handler = FailOnBerlin(step, action)
    llm_stub.set_handler(handler)
    args = [a for a in _args(llm_stub) if a != "--ragproof-no-cache"]
    args.append(f"--ragproof-cache-dir={project.path / 'llm-cache'}")
    first = run(project, [], *args, "--ragproof-report=first.json")
    assert first.ret == 1
    by_id = {c["id"]: c for c in load_json(project.path / "first.json")["cases"]}
    assert by_id["q3"]["status"] == "error" and "faithfulness" not in by_id["q3"]["metrics"]
    asked = handler.failed
    llm_stub.set_handler(handler.judge)  # the judge now answers every step by its rule
    second = run(project, [], *args, "--ragproof-report=second.json")
    by_id = {c["id"]: c for c in load_json(project.path / "second.json")["cases"]}
    assert asked >= 2  # the call and its repair
    assert by_id["q3"]["status"] == "passed", by_id["q3"]
    assert by_id["q3"]["metrics"]["faithfulness"] == 1.0
    assert second.ret == 0
