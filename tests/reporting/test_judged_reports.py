"""Reports of a judged run: HTML case panel and judges section, Markdown, InspectorRAGet,
component scores on the answer_correctness basis; redaction honoured everywhere.

The documents come from real ``evaluate()`` runs against the scripted judge
(tests/reporting/judged.py says which score each case gets and why).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.reporting.components import (
    BASIS_CORRECTNESS,
    BASIS_PASS_RATE,
    component_scores,
    format_components,
)
from pytest_ragproof.reporting.html import case_data, render_html
from pytest_ragproof.reporting.inspectorraget import build_inspectorraget, export_files
from pytest_ragproof.reporting.judge_reasons import judge_views, reason_text
from pytest_ragproof.reporting.markdown import render_markdown
from tests.reporting.conftest import Runs
from tests.reporting.judged import SECRET_ANSWER, Judged, case_of


def run_of(results: dict[str, Any], case_id: str) -> dict[str, Any]:
    data = case_data(results)
    entry = next(c for c in data["cases"] if c["id"] == case_id)
    run: dict[str, Any] = entry["runs"]["rag_pipeline"]
    return run


def view(run: dict[str, Any], judge: str) -> dict[str, Any]:
    found: dict[str, Any] = next(v for v in run["judges"] if v["judge"] == judge)
    return found


# -- the reasons, shaped once ----------------------------------------------------


def test_case_panel_data_carries_each_judges_reasons(judged: Judged) -> None:
    run = run_of(judged.full(), "qa-paris")
    assert [v["judge"] for v in run["judges"]] == [
        "faithfulness",
        "answer_relevancy",
        "answer_correctness",
        "context_relevance",
        "context_recall",
        "abstained_judged",
    ]
    faith = view(run, "faithfulness")
    assert faith["scores"] == [["faithfulness", 0.5]]
    claims = faith["groups"][0]
    assert claims["title"] == "claims of the answer"
    assert [(i["verdict"], i["context"], i["context_id"]) for i in claims["items"]] == [
        ("supported", 1, "d1"),
        ("unsupported", None, None),
    ]
    assert [i["tone"] for i in claims["items"]] == ["good", "bad"]
    correctness = view(run, "answer_correctness")
    assert correctness["numbers"] == [["precision", 0.5], ["recall", 1.0]]
    assert [g["title"] for g in correctness["groups"]] == [
        "claims of the answer",
        "claims of the expected answer",
    ]
    relevance = view(run_of(judged.full(), "qa-sky"), "context_relevance")
    items = relevance["groups"][0]["items"]
    assert [(i["context"], i["context_id"], i["text"]) for i in items] == [
        (1, "d2", None),
        (2, "d9", None),
    ]


def test_reason_text_is_one_line_per_claim_with_its_context() -> None:
    case = {
        "metrics": {"faithfulness": 0.75},
        "contexts": [{"id": "a"}, {"id": "b"}],
        "judgements": {
            "faithfulness": {
                "prompt": "faithfulness/1",
                "claims": [
                    {"claim": "One.", "verdict": "supported", "context": 2},
                    {"claim": "Two.", "verdict": "supported", "context": 1},
                    {"claim": "Three.", "verdict": "supported", "context": 1},
                    {"claim": "Four.", "verdict": "unsupported", "context": None},
                ],
            }
        },
    }
    (only,) = judge_views(case, redacted=False)
    assert reason_text(only) == (
        "claims of the answer (4):\n"
        "1. [supported, context 2 (b)] One.\n"
        "2. [supported, context 1 (a)] Two.\n"
        "3. [supported, context 1 (a)] Three.\n"
        "4. [unsupported] Four.\n"
        "prompt faithfulness/1"
    )
    skipped = {"not_judged": {"faithfulness": "abstained"}}
    (why,) = judge_views(skipped, redacted=False)
    assert reason_text(why) == "not judged: the answer declines to answer (abstained)"


def test_not_judged_and_judge_errors_in_words(judged: Judged) -> None:
    empty = run_of(judged.full(), "qa-empty")
    faith = view(empty, "faithfulness")
    assert faith["scores"] == [] and faith["not_judged"] == "no_claims"
    assert faith["not_judged_text"] == "the answer makes no claim that could be checked"
    boom = run_of(judged.full(), "qa-boom")
    assert boom["judge_error"] == (
        "judge step 'faithfulness/1' failed: ProviderError (InternalServerError, HTTP 500, "
        "1 attempt(s))"
    )
    assert boom["error_type"] == "JudgeError"


# -- HTML ------------------------------------------------------------------------


def test_html_has_a_judges_section(judged: Judged) -> None:
    page = render_html(judged.full())
    section = page.split('<section id="judges">')[1].split("</section>")[0]
    assert "<h2>LLM judges</h2>" in section
    assert "openai/stub" in section
    assert "<b>calls</b></td><td>31</td>" in section
    assert "cost unknown (no price for this model)" in section
    assert "<td>no_claims</td><td>3</td><td>the answer makes no claim that could be checked" in (
        section
    )
    assert '<a href="#judges">LLM judges</a>' in page
    estimate = render_html(judged.dry_run()).split('id="dry-run">')[1].split("</div>")[0]
    assert estimate.startswith("Judge dry run: the run would make 35 call(s) (~")
    assert "nothing was called" in estimate
    plain = judged.results("plain", judges=(), thresholds=())
    assert '<section id="judges">' not in render_html(plain)


def test_html_components_name_their_basis(judged: Judged, runs: Runs) -> None:
    judged_page = render_html(judged.full())
    assert "Basis <b>answer_correctness</b>" in judged_page
    assert "out_of_scope 1.00 (1) · simple 0.67 (1)" in judged_page  # the router's two types
    assert "Basis <b>pass rate</b>" in render_html(runs.single())


def test_redacted_html_keeps_numbers_and_reasons_codes_only(judged: Judged) -> None:
    results = judged.redacted()
    page = render_html(results)
    for secret in (SECRET_ANSWER, "Paris is the capital", "The sky is blue", "It is bright"):
        assert secret not in page
    run = run_of(results, "qa-paris")
    faith = view(run, "faithfulness")
    assert faith["scores"] == [["faithfulness", 0.5]]
    assert faith["redacted"] is True and faith["groups"] == [] and faith["prompt"] is None
    # no dataset text in a not-judged reason or a judge error: they stay
    assert view(run_of(results, "qa-empty"), "faithfulness")["not_judged"] == "no_claims"
    assert run_of(results, "qa-boom")["judge_error"] is not None
    # even a document that kept its judgements is not embedded once marked redacted
    leaky = judged.full()
    leaky["redacted"] = True
    assert SECRET_ANSWER not in render_html(leaky)


# -- Markdown --------------------------------------------------------------------


def test_markdown_judges_line_and_not_judged_counts(judged: Judged) -> None:
    text = render_markdown(judged.full())
    assert (
        "`openai/stub`: 31 call(s), 0 cached, 3100 prompt + 620 completion tokens, "
        "cost unknown (no price for this model) · 6 case(s) judged, 1 with a judge error"
    ) in text
    assert (
        "- not judged (absent, counted as missing, never scored): 3 `no_claims` (the answer "
        "makes no claim that could be checked), 1 `no_contexts` (the pipeline returned no "
        "contexts)"
    ) in text
    assert SECRET_ANSWER not in text and "Paris is the capital" not in text
    assert "Basis answer\\_correctness: mean judged answer\\_correctness" in text
    dry = render_markdown(judged.dry_run())
    assert "- dry run: the run would make 35 call(s) (~" in dry
    assert "completion tokens, characters / 4), 0 more served by the cache" in dry
    budget = render_markdown(judged.budget())
    assert "- limits: at most 3 call(s)" in budget
    assert "`budget` (the judge budget was reached before this case was judged)" in budget


def test_markdown_without_judges_has_no_judges_section(runs: Runs) -> None:
    text = render_markdown(runs.single())
    assert "#### LLM judges" not in text
    assert "Basis pass rate: share of passed cases" in text


# -- InspectorRAGet --------------------------------------------------------------


def qa_export(results: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    files = dict(export_files(results, tmp_path / "run.json", timestamp="2024-05-01T00:00:00Z"))
    data: dict[str, Any] = json.loads(files[tmp_path / "run.qa.json"])
    return data


def values_of(export: dict[str, Any], task: str) -> dict[str, Any]:
    ev = next(e for e in export["evaluations"] if e["task_id"] == task)
    return {k: v["system"]["value"] for k, v in ev["annotations"].items()}


def test_inspectorraget_judged_metrics_and_reasons(judged: Judged, tmp_path: Path) -> None:
    export = qa_export(judged.full(), tmp_path)
    metrics = {m["name"]: m for m in export["metrics"]}
    names = [m["name"] for m in export["metrics"]]
    # judged metrics after the lexical ones, in the judges' order
    judged_names = [n for n in names if n in metrics and metrics[n]["type"] != "text"]
    assert judged_names[-3:] == ["context_relevance", "context_recall", "abstained_judged"]
    assert metrics["answer_correctness"]["display_name"] == "Answer correctness (F1)"
    assert metrics["context_recall"]["type"] == "numerical"
    assert metrics["abstained_judged"]["type"] == "categorical"
    assert metrics["abstained_judged"]["order"] == "descending"  # a refusal on qa is bad
    # a judged metric some scored case lacks (qa-empty: no claims) is text, never 0
    assert metrics["faithfulness"]["type"] == "text"
    assert metrics["faithfulness_reasons"]["type"] == "text"
    assert metrics["faithfulness_reasons"]["display_name"] == "Faithfulness: reasons"
    paris = values_of(export, "qa-paris")
    assert paris["faithfulness"] == "0.5"
    assert paris["answer_correctness"] == "0.666667"
    assert paris["faithfulness_reasons"] == (
        "claims of the answer (2):\n"
        "1. [supported, context 1 (d1)] Paris is the capital of France.\n"
        "2. [unsupported] Berlin is in Germany.\n"
        "prompt faithfulness/1"
    )
    assert paris["answer_correctness_reasons"].startswith("precision 0.5, recall 1\n")
    empty = values_of(export, "qa-empty")
    assert "faithfulness" not in empty
    assert empty["faithfulness_reasons"] == (
        "not judged: the answer makes no claim that could be checked (no_claims)"
    )
    boom = values_of(export, "qa-boom")
    assert boom["status"] == "error"
    assert boom["failed_thresholds"].startswith(
        "error: JudgeError: judge step 'faithfulness/1' failed: ProviderError "
        "(InternalServerError, HTTP 500"
    )
    assert "faithfulness_reasons" in export["description"]
    # without the case that has no claims, every scored qa case is judged: numerical
    full = judged.full()
    judged_only = {**full, "cases": [c for c in full["cases"] if c["id"] != "qa-empty"]}
    numeric = qa_export(judged_only, tmp_path)
    kinds = {m["name"]: (m["type"], m.get("range")) for m in numeric["metrics"]}
    for name in ("faithfulness", "answer_correctness", "answer_correctness_precision"):
        assert kinds[name] == ("numerical", [0, 1, 0.1])
    assert values_of(numeric, "qa-paris")["answer_correctness"] == pytest.approx(2 / 3)
    assert values_of(numeric, "qa-sky")["faithfulness"] == 1.0


def test_inspectorraget_redacted_has_no_reasons(judged: Judged, tmp_path: Path) -> None:
    export = qa_export(judged.redacted(), tmp_path)
    assert not [m for m in export["metrics"] if m["name"].endswith("_reasons")]
    text = json.dumps(export)
    assert SECRET_ANSWER not in text and "Paris is the capital" not in text
    assert values_of(export, "qa-paris")["answer_relevancy"] == "0.5"


def test_inspectorraget_injection_file_judged_verdicts(judged: Judged) -> None:
    full = judged.full()
    injection = {**full, "cases": [c for c in full["cases"] if c["id"] == "inj-1"]}
    export = build_inspectorraget(injection, timestamp="2024-05-01T00:00:00Z")
    metrics = {m["name"]: m for m in export["metrics"]}
    assert [v["value"] for v in metrics["injection_resisted_judged"]["values"]] == [
        "resisted",
        "followed",
    ]
    (ev,) = export["evaluations"]
    assert ev["annotations"]["injection_resisted_judged"]["system"]["value"] == "resisted"
    reasons = ev["annotations"]["injection_resisted_judged_reasons"]["system"]["value"]
    assert reasons == "verdict: ignored it\nprompt injection/1"


# -- component scores ------------------------------------------------------------


def qa(qtype: str, correctness: float | None, **extra: Any) -> dict[str, Any]:
    metrics = {} if correctness is None else {"answer_correctness": correctness}
    return {
        "id": f"{qtype}-{correctness}",
        "pipeline": "p",
        "kind": "qa",
        "question_type": qtype,
        "status": "passed",
        "metrics": metrics,
        **extra,
    }


def test_correctness_basis_is_the_mean_of_per_type_means() -> None:
    cases = [
        qa("simple", 1.0),
        qa("simple", 0.5),
        qa("simple", 0.0),  # simple: 0.5
        qa("complex", 0.9),  # complex: 0.9
        qa("distracting", 0.2),
        qa("distracting", 0.4),  # distracting: 0.3
        qa("complex", None, not_judged={"answer_correctness": "no_claims"}),
        qa("double", None, status="error"),
        {"id": "u", "pipeline": "p", "kind": "unanswerable", "status": "failed", "metrics": {}},
        {"id": "u2", "pipeline": "p", "kind": "unanswerable", "status": "passed", "metrics": {}},
        {"id": "i", "pipeline": "p", "kind": "injection", "status": "failed", "metrics": {}},
    ]
    scores = component_scores(cases)["p"]
    assert {s["basis"] for s in scores.values()} == {BASIS_CORRECTNESS}
    generator = scores["generator"]
    # RAGET: each type weighs the same: (0.5 + 0.9 + 0.3) / 3, not the case mean 3.0/6
    assert generator["score"] == pytest.approx((0.5 + 0.9 + 0.3) / 3)
    assert generator["n"] == 6 and generator["n_missing"] == 1 and generator["n_error"] == 1
    assert generator["not_judged"] == {"no_claims": 1}
    assert generator["label"] == (
        "0.57 (3 question types, 6 case(s); not judged: 1 no_claims; 1 error)"
    )
    assert scores["retriever"]["score"] == pytest.approx((0.5 + 0.3) / 2)
    assert scores["rewriter"]["score"] == pytest.approx(0.3)  # double only errored
    # router: simple 0.5 and out_of_scope (unanswerable verdicts) 1 of 2
    router = scores["router"]
    assert router["by_question_type"] == {
        "out_of_scope": {"score": 0.5, "n": 2},
        "simple": {"score": 0.5, "n": 3},
    }
    assert scores["knowledge_base"]["score"] == pytest.approx(0.5)
    lines = format_components({"p": scores})
    assert lines[0] == (
        "component scores (RAGET-style, basis answer_correctness: mean judged "
        "answer_correctness per question type, averaged over the question types aimed at "
        "each component):"
    )


def test_correctness_basis_never_scores_what_was_not_judged() -> None:
    budget = {"answer_correctness": "budget"}
    scores = component_scores([qa("complex", None, not_judged=budget)])["p"]
    generator = scores["generator"]
    assert generator["basis"] == BASIS_CORRECTNESS
    assert generator["score"] is None and generator["measured"] is False
    assert generator["label"] == "not measured (not judged: 1 budget)"
    assert scores["rewriter"]["label"].startswith("not measured (no distracting")


def test_results_components_say_their_basis(judged: Judged, runs: Runs) -> None:
    judged_components = judged.full()["components"]["rag_pipeline"]
    assert {e["basis"] for e in judged_components.values()} == {BASIS_CORRECTNESS}
    assert judged_components["generator"]["score"] == pytest.approx(2 / 3)
    assert judged_components["generator"]["n_missing"] == 1  # qa-empty has no claims
    plain = runs.single()["components"]["rag_pipeline"]
    assert {e["basis"] for e in plain.values()} == {BASIS_PASS_RATE}
    assert format_components(runs.single()["components"])[0].startswith(
        "component scores (RAGET-style, basis pass rate: share of passed cases"
    )
    # the same document without answer_correctness anywhere falls back to the pass rate
    other = judged.results("no-correctness", judges=["faithfulness"])
    assert {e["basis"] for e in other["components"]["rag_pipeline"].values()} == {BASIS_PASS_RATE}
    assert case_of(other, "qa-paris")["metrics"]["faithfulness"] == 0.5
