"""Claims a judge extracts must be the split text's: else one repair, then a judge error.

Small local models answer "split the reference answer into claims" with a line of the
instructions (issue 29, item 4); those claims must never be scored.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ragproof.judges.grounding import content_words
from pytest_ragproof.llm.request import JSON_INSTRUCTION
from tests.judge_stub import ScriptedJudge
from tests.judges.conftest import Judge, qa
from tests.llm_stub import StubServer
from tests.pytester_projects import load_json, run

#: The JSON instruction line of our prompt, as small models echo it back as a claim.
ECHO = JSON_INSTRUCTION.split("\n", 1)[0]
FOUR = "Paris is the capital of France. France is in Europe. The Seine flows through Paris."


def echo_claims(*steps: str, times: int | None = None) -> ScriptedJudge:
    """The scripted judge, whose claims of ``steps`` are the instruction line."""
    left = {"n": times}

    def transform(step: str, value: dict[str, Any]) -> str:
        if step in steps and (left["n"] is None or left["n"] > 0):
            if left["n"] is not None:
                left["n"] -= 1
            if step == "answer-claims":
                value = {"claims": [ECHO]}
            else:
                value = {
                    **value,
                    "reference_claims": [{**c, "claim": ECHO} for c in value["reference_claims"]],
                }
        return json.dumps(value)

    return ScriptedJudge(transform=transform)


def test_content_words_are_normalised_tokens_without_stop_words() -> None:
    assert content_words("The Seine is in Paris, isn't it?") == {"seine", "paris", "isn"}
    assert content_words("Built in 1889.") == {"built", "1889"}
    # NFC: a decomposed accent is the same word as the composed one.
    assert content_words("Cafe\u0301 Zu\u0308rich") == content_words("Café Zürich")
    assert content_words("It is what it is.") == frozenset()


@pytest.mark.parametrize(
    ("step", "judges"),
    [
        ("answer-correctness", ("answer_correctness",)),
        ("context-recall", ("context_recall",)),
        ("answer-claims", ("faithfulness",)),
    ],
)
def test_claims_echoing_the_instructions_are_repaired_once_then_an_error(
    llm_stub: StubServer, judge_case: Judge, step: str, judges: tuple[str, ...]
) -> None:
    judge = echo_claims(step)
    llm_stub.set_handler(judge)
    j = judge_case(qa(FOUR, (FOUR,), reference="Paris is the capital of France."), judges=judges)
    assert j.error == {"step": f"{step}/1", "type": "InvalidOutputError"}
    assert j.metrics == {}  # never a score computed from the instruction line
    assert judge.steps[step] == 2  # the call and its one repair
    repair = next(
        r
        for r in llm_stub.requests
        if f"{step}/1" in r["messages"][0]["content"] and len(r["messages"]) > 2
    )
    said = repair["messages"][-1]["content"]
    source = "answer" if step == "answer-claims" else "reference answer"
    assert f"claim 1 shares no word with the {source}" in said
    assert "not the instructions or the schema" in said
    assert ECHO not in said and "JSON Schema" not in said  # our prompt is not echoed


def test_an_echo_fixed_by_the_repair_is_scored(llm_stub: StubServer, judge_case: Judge) -> None:
    judge = echo_claims("answer-correctness", times=1)
    llm_stub.set_handler(judge)
    j = judge_case(qa(FOUR, (FOUR,), reference=FOUR), judges=("answer_correctness",))
    assert j.error is None
    assert j.metrics["answer_correctness"] == 1.0
    assert judge.steps["answer-correctness"] == 2


def test_only_the_stray_claims_are_named(llm_stub: StubServer, judge_case: Judge) -> None:
    def transform(step: str, value: dict[str, Any]) -> str:
        if step == "answer-claims":
            value = {"claims": ["Paris is the capital of France.", ECHO, "Europe is big."]}
        return json.dumps(value)

    llm_stub.set_handler(ScriptedJudge(transform=transform))
    j = judge_case(qa(FOUR, (FOUR,)), judges=("faithfulness",))
    assert j.error == {"step": "answer-claims/1", "type": "InvalidOutputError"}
    said = llm_stub.requests[-1]["messages"][-1]["content"]
    assert "claim 2 shares no word with the answer" in said


def test_claims_may_take_their_words_from_the_question(
    llm_stub: StubServer, judge_case: Judge
) -> None:
    # "Yes." has no content word to check; "Yes, it does." neither; a standalone claim
    # restating the question is the answer's claim.
    def transform(step: str, value: dict[str, Any]) -> str:
        if step == "answer-claims":
            value = {"claims": ["The capital of France is Paris."]}
        return json.dumps(value)

    llm_stub.set_handler(ScriptedJudge(transform=transform))
    for answer in ("Yes.", "Yes, it does.", "Correct, that is right."):
        j = judge_case(qa(answer), judges=("answer_relevancy",))
        assert j.error is None, answer
        assert j.metrics == {"answer_relevancy": 1.0}


def test_a_reference_without_content_words_is_not_checked(
    llm_stub: StubServer, judge_case: Judge
) -> None:
    def transform(step: str, value: dict[str, Any]) -> str:
        if step == "context-recall":
            value = {"reference_claims": [{"claim": "Affirmative.", "verdict": "no"}]}
        return json.dumps(value)

    llm_stub.set_handler(ScriptedJudge(transform=transform))
    j = judge_case(qa(reference="No, it is not."), judges=("context_recall",))
    assert j.error is None and j.metrics == {"context_recall": 0.0}


def test_the_schema_tells_the_model_where_claims_come_from(
    llm_stub: StubServer, scripted: ScriptedJudge, judge_case: Judge
) -> None:
    judge_case(qa(), judges=("faithfulness",), response_format="prompt")
    system = llm_stub.requests[0]["messages"][0]["content"]
    assert "each restating part of the answer" in system


def test_a_run_whose_judge_echoes_the_instructions_has_errors_not_scores(
    project: pytest.Pytester, llm_stub: StubServer
) -> None:
    judge = echo_claims("answer-correctness")
    llm_stub.set_handler(judge)
    result = run(
        project,
        [],
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={llm_stub.url}",
        "--ragproof-no-cache",
        "--ragproof-judge-retries=0",
        "--ragproof-judges=answer_correctness",
        "--ragproof-report=results.json",
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert "judge step 'answer-correctness/1' failed: InvalidOutputError" in out
    assert judge.steps["answer-correctness"] == 6  # 3 qa cases: the call and one repair each
    doc = load_json(project.path / "results.json")
    qa_cases = [c for c in doc["cases"] if c["kind"] == "qa"]
    assert len(qa_cases) == 3
    for case in qa_cases:
        assert case["status"] == "error" and case["error_type"] == "JudgeError"
        assert case["judge_error"] == {"step": "answer-correctness/1", "type": "InvalidOutputError"}
        assert not any(m.startswith("answer_correctness") for m in case["metrics"])
        assert "exact_match" in case["metrics"] and case["answer"]
    # The judged metric is an error on each case; what was measured still counts.
    aggs = {a["metric"]: a for a in doc["aggregates"] if a["selector"] == "qa"}
    assert aggs["exact_match"]["n_error"] == 0 and aggs["exact_match"]["n"] == 3, aggs
    assert all(not m.startswith("answer_correctness") or aggs[m]["n"] == 0 for m in aggs), aggs
