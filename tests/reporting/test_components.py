"""RAGET-style component scores: mapping, hand-computed mixes, never 1.0 when unmeasured."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragproof.reporting.components import (
    COMPONENTS,
    QUESTION_TYPE_COMPONENTS,
    component_scores,
    format_components,
)
from tests.reporting.conftest import Runs


def case(
    qtype: str,
    status: str,
    *,
    kind: str = "qa",
    pipeline: str = "p",
    metrics: dict[str, float] | None = None,
) -> dict[str, Any]:
    return {
        "id": f"{qtype}-{status}",
        "pipeline": pipeline,
        "kind": kind,
        "question_type": qtype,
        "status": status,
        "metrics": metrics or {},
    }


def test_mapping_follows_the_raget_table() -> None:
    assert QUESTION_TYPE_COMPONENTS["simple"] == ("generator", "retriever", "router")
    assert QUESTION_TYPE_COMPONENTS["complex"] == ("generator",)
    assert QUESTION_TYPE_COMPONENTS["distracting"] == ("generator", "retriever", "rewriter")
    assert QUESTION_TYPE_COMPONENTS["situational"] == ("generator",)
    assert QUESTION_TYPE_COMPONENTS["double"] == ("generator", "rewriter")
    assert QUESTION_TYPE_COMPONENTS["conversational"] == ("rewriter",)
    assert QUESTION_TYPE_COMPONENTS["out_of_scope"] == ("router",)


def test_known_mix_gives_hand_computed_scores() -> None:
    cases = [
        case("simple", "passed", metrics={"hit@1": 0.0, "hit@10": 1.0}),
        case("simple", "failed", metrics={"hit@1": 0.0, "hit@10": 0.0}),
        case("complex", "passed"),
        case("distracting", "failed"),
        case("double", "passed"),
        case("situational", "passed"),
        case("out_of_scope", "passed", kind="unanswerable"),
        case("out_of_scope", "failed", kind="unanswerable"),
        case("simple", "failed", kind="injection"),  # not a RAGET component: ignored
    ]
    scores = component_scores(cases)["p"]
    # generator: simple x2 (1 passed), complex, distracting (failed), double, situational
    assert scores["generator"]["score"] == pytest.approx(4 / 6)
    assert (scores["generator"]["n"], scores["generator"]["n_passed"]) == (6, 4)
    assert scores["generator"]["question_types"] == [
        "complex",
        "distracting",
        "double",
        "simple",
        "situational",
    ]
    # retriever: simple x2 (1 passed), distracting (failed)
    assert scores["retriever"]["score"] == pytest.approx(1 / 3)
    # rewriter: distracting (failed), double (passed)
    assert scores["rewriter"]["score"] == pytest.approx(1 / 2)
    # router: simple x2 (1 passed), out_of_scope x2 (1 passed)
    assert scores["router"]["score"] == pytest.approx(2 / 4)
    assert scores["router"]["question_types"] == ["out_of_scope", "simple"]
    # knowledge base: hit at the widest cutoff (hit@10) of the simple cases: 1 of 2
    assert scores["knowledge_base"]["score"] == pytest.approx(1 / 2)
    assert scores["knowledge_base"]["label"] == "0.50 (1/2)"


def test_unmeasured_components_are_never_one() -> None:
    # Only complex questions, all passed: generator is measured, nothing else is.
    scores = component_scores([case("complex", "passed"), case("complex", "passed")])["p"]
    assert scores["generator"]["score"] == 1.0
    for component in ("retriever", "rewriter", "router", "knowledge_base"):
        result = scores[component]
        assert result["score"] is None and result["measured"] is False
        assert result["n"] == 0 and result["question_types"] == []
        assert result["label"].startswith("not measured")
    assert "no distracting, double, conversational questions" in scores["rewriter"]["label"]
    lines = "\n".join(format_components({"p": scores}))
    assert "not measured" in lines and "1.00 (2/2)" in lines
    assert lines.count("1.00") == 1


def test_injection_only_dataset_measures_nothing() -> None:
    scores = component_scores([case("simple", "passed", kind="injection")])["p"]
    assert all(scores[c]["score"] is None for c in COMPONENTS)


def test_simple_questions_without_retrieval_do_not_measure_the_knowledge_base() -> None:
    scores = component_scores([case("simple", "passed")])["p"]
    assert scores["retriever"]["score"] == 1.0  # the case verdict still counts
    kb = scores["knowledge_base"]
    assert kb["score"] is None
    assert kb["label"] == "not measured (simple questions have no retrieval metrics)"


def test_errors_are_counted_but_not_scored() -> None:
    scores = component_scores(
        [
            case("conversational", "error"),
            case("double", "passed"),
            case("complex", "error"),
        ]
    )["p"]
    assert scores["rewriter"]["score"] == 1.0
    assert scores["rewriter"]["n_error"] == 1
    assert scores["rewriter"]["label"] == "1.00 (1/1, 1 error)"
    # generator saw a complex case that crashed and a double that passed
    assert scores["generator"]["n"] == 1 and scores["generator"]["n_error"] == 1
    only_errors = component_scores([case("conversational", "error")])["p"]["rewriter"]
    assert only_errors["score"] is None and only_errors["measured"] is False
    assert only_errors["label"] == "no scored cases (1 error)"


def test_scores_of_a_real_two_pipeline_run(runs: Runs) -> None:
    scores = component_scores(runs.multi()["cases"])
    assert list(scores) == ["rag_pipeline", "rival_pipeline"]
    good, rival = scores["rag_pipeline"], scores["rival_pipeline"]
    # rag_pipeline fails only the distracting question (wrong source)
    assert good["generator"]["score"] == pytest.approx(2 / 3)  # simple, complex, distracting
    assert good["retriever"]["score"] == pytest.approx(1 / 2)  # simple, distracting
    assert good["rewriter"]["score"] == pytest.approx(1 / 2)  # distracting, conversational
    assert good["router"]["score"] == 1.0  # simple, out_of_scope
    assert good["knowledge_base"]["score"] == 1.0
    # rival fails the complex question and crashes on the out-of-scope one
    assert rival["generator"]["score"] == pytest.approx(2 / 3)
    assert rival["retriever"]["score"] == 1.0
    assert rival["router"]["label"] == "1.00 (1/1, 1 error)"
    lines = format_components(scores)
    assert lines[0].startswith("component scores")
    assert "rag_pipeline" in lines[1] and "rival_pipeline" in lines[1]
    assert len(lines) == 2 + 1 + len(COMPONENTS)  # title, header, rule, one row each


def test_format_components_of_nothing() -> None:
    assert format_components({}) == []


def test_not_measured_never_names_a_question_type_that_ran() -> None:
    # simple questions ran, but only as injection cases: the retriever is not measured,
    # and its label does not claim there were no simple questions.
    scores = component_scores(
        [case("complex", "passed"), case("simple", "passed", kind="injection")]
    )["p"]
    assert scores["retriever"]["label"] == (
        "not measured (no distracting questions; injection cases are left out)"
    )
    assert scores["router"]["label"] == (
        "not measured (no out_of_scope questions; injection cases are left out)"
    )
    assert scores["rewriter"]["label"] == (
        "not measured (no distracting, double, conversational questions)"
    )
    assert "simple" not in scores["knowledge_base"]["label"]
    assert scores["knowledge_base"]["label"] == (
        "not measured (no qa case of its question types; injection cases are left out)"
    )


def test_unanswerable_cases_keep_their_own_question_type() -> None:
    scores = component_scores([case("simple", "passed", kind="unanswerable")])["p"]
    router = scores["router"]
    assert (router["score"], router["question_types"]) == (1.0, ["simple"])
    assert scores["retriever"]["label"] == (
        "not measured (no distracting questions; unanswerable cases count for the router only)"
    )


def test_question_types_are_only_those_evaluated() -> None:
    cases = [case("complex", "passed"), case("out_of_scope", "failed", kind="unanswerable")]
    scores = component_scores(cases)["p"]
    seen = {t for result in scores.values() for t in result["question_types"]}
    assert seen == {"complex", "out_of_scope"}
    for result in scores.values():
        if not result["measured"]:
            assert "complex" not in result["label"] and "out_of_scope" not in result["label"]
