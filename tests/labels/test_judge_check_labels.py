"""``ragproof judge-check --results R --labels L`` with a labels file: no judge call,
exact figures, stale labels left out, the gate, the JSON figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.labels import append_label, label_for
from pytest_ragproof.results.document import write_results
from tests.labels.records import case, results
from tests.reporting.judged import Judged, case_of

TIME = "2026-12-02T10:00:00Z"
SCORES = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 1.0, "q5": 0.25}
ANA = {"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q5": 1, "q6": 1}
BOB = {"q1": 1, "q2": 1, "q3": 0, "q4": 0}


def project(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    cases = [case(cid, metrics={"faithfulness": s}) for cid, s in SCORES.items()]
    q6 = case("q6", metrics={"hit@1": 1.0})
    q6["not_judged"] = {"faithfulness": "no_claims"}
    doc = results(*cases, q6)
    doc["settings"] = {"judge_model": "openai/stub"}
    out = tmp_path / "results.json"
    write_results(doc, out)
    labels = tmp_path / "labels.jsonl"
    by_id = {c["id"]: c for c in doc["cases"]}
    for reviewer, verdicts in (("ana", ANA), ("bob", BOB)):
        for cid, verdict in verdicts.items():
            made = label_for(doc, by_id[cid], "faithfulness", verdict, reviewer, time=TIME)
            append_label(labels, made)
    return out, labels, doc


def run(*args: str) -> int:
    return main(["judge-check", *args, "--bootstrap", "200"])


def test_the_judges_scores_against_two_reviewers_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res, labels, doc = project(tmp_path)
    # A label given on an answer that later changed: stale, counted, left out.
    stale = {**doc["cases"][0], "answer": "An older answer."}
    append_label(labels, label_for(doc, stale, "faithfulness", 0, "carl", time=TIME))
    out = tmp_path / "jc.json"
    assert run("--results", str(res), "--labels", str(labels), "--json", str(out)) == 0
    printed = capsys.readouterr()
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert figures["format"] == "ragproof.judge-check/1"
    assert figures["against"] == "people"
    assert figures["judge_model"] == "openai/stub"
    assert figures["labels"] == {
        "fresh": 10,
        "stale": {"digest": 1},
        "unmatched": 0,
        "withdrawn": 0,
        "reviewers": ["ana", "bob"],
    }
    faith = figures["metrics"]["faithfulness"]
    assert faith["all"]["confusion"] == {"tp": 4, "fp": 2, "fn": 1, "tn": 2}
    assert faith["all"]["not_judged"] == {"no_claims": 1}
    assert faith["all"]["figures"]["kappa"]["value"] == round(12 / 39, 6)
    assert faith["by_reviewer"]["ana"]["figures"]["kappa"]["value"] == round(0.08 / 0.48, 6)
    assert faith["by_reviewer"]["bob"]["figures"]["accuracy"]["value"] == 0.75
    assert faith["people"]["statistic"] == "cohen_kappa"
    assert (faith["people"]["shared_items"], faith["people"]["value"]) == (4, 0.0)
    assert [(d["case_id"], d["reviewer"]) for d in figures["disagreements"]] == [
        ("q2", "ana"),
        ("q4", "bob"),
        ("q5", "ana"),
    ]
    text = printed.out
    assert "against 10 fresh labels by 2 reviewers" in text
    assert "no judge was called" in text
    assert "left out: 1 stale (the answer, contexts, question or reference changed" in text
    assert "1 label without a judge score (no_claims 1)" in text
    assert "between people: Cohen's κ = 0.000 among ana, bob on 4 items" in text
    kappa_all = figures["metrics"]["faithfulness"]["all"]["figures"]["kappa"]
    low, high = kappa_all["ci95"]
    assert "all reviewers  9        0.667 [" in text
    assert f"0.308 [{low:.3f}, {high:.3f}]" in text
    assert "disagreements: 3" in text
    assert "q5      rag         faithfulness  0.250    1.000    ana" in text


def test_min_kappa_gates_on_all_reviewers_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res, labels, _ = project(tmp_path)
    base = ["--results", str(res), "--labels", str(labels), "--json", str(tmp_path / "o.json")]
    assert run(*base, "--min-kappa", "0.3") == 0
    assert "faithfulness: κ = 0.308 meets the floor" in capsys.readouterr().err
    assert run(*base, "--min-kappa", "0.4") == 1
    assert "faithfulness: κ = 0.308 is below the floor" in capsys.readouterr().err
    saved = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert saved["min_kappa"]["passed"] is False and saved["min_kappa"]["floor"] == 0.4


def _labelled(
    tmp_path: Path, scores: dict[str, dict[str, float]], given: list[tuple[str, str, float, str]]
) -> list[str]:
    """A results file of ``scores`` (case -> metric -> score) and a labels file of ``given``
    (case, metric, verdict, reviewer): the command's arguments for them."""
    doc = results(*(case(cid, metrics=metrics) for cid, metrics in scores.items()))
    res, labels = tmp_path / "results.json", tmp_path / "labels.jsonl"
    write_results(doc, res)
    for cid, metric, verdict, reviewer in given:
        made = label_for(doc, case_of(doc, cid), metric, verdict, reviewer, time=TIME)
        append_label(labels, made)
    return ["--results", str(res), "--labels", str(labels), "--json", str(tmp_path / "o.json")]


def test_perfect_agreement_on_one_value_meets_the_floor_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Judge and people say 1 on every case: κ is undefined (chance agreement is 1), yet
    # nothing disagrees.
    scores = {cid: {"faithfulness": 1.0} for cid in ("q1", "q2", "q3")}
    args = _labelled(tmp_path, scores, [(cid, "faithfulness", 1, "ana") for cid in scores])
    assert run(*args, "--min-kappa", "0.6") == 0
    err = capsys.readouterr().err
    assert (
        "--min-kappa 0.6: faithfulness: κ undefined: one value; agreement 100% on 3 label(s) "
        "(all 1), so the floor is met"
    ) in err
    saved = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert saved["min_kappa"]["passed"] is True


def test_one_grade_among_0_1_labels_keeps_the_metric_in_the_gate_on_its_0_1_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = {
        "q1": {"faithfulness": 1.0, "answer_relevancy": 1.0},
        "q2": {"faithfulness": 0.0, "answer_relevancy": 0.0},
        "q3": {"faithfulness": 1.0},
        "q4": {"faithfulness": 0.0},
    }
    given: list[tuple[str, str, float, str]] = [
        # ana's 0/1 faithfulness labels agree with the judge no better than chance: κ 0.
        ("q1", "faithfulness", 1, "ana"),
        ("q2", "faithfulness", 1, "ana"),
        ("q3", "faithfulness", 0, "ana"),
        ("q4", "faithfulness", 0, "ana"),
        ("q1", "faithfulness", 0.8, "bob"),  # one grade typed by one reviewer
        ("q1", "answer_relevancy", 1, "ana"),
        ("q2", "answer_relevancy", 0, "ana"),
    ]
    args = _labelled(tmp_path, scores, given)
    assert run(*args, "--min-kappa", "0.5") == 1
    err = capsys.readouterr().err
    assert (
        "--min-kappa 0.5: faithfulness: on its 4 0/1 label(s), 1 graded label left out: "
        "κ = 0.000 is below the floor"
    ) in err
    assert "--min-kappa 0.5: answer_relevancy: κ = 1.000 meets the floor" in err
    saved = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert saved["min_kappa"]["passed"] is False
    faith = saved["metrics"]["faithfulness"]
    assert faith["all"]["labels"] == "graded"  # the figures of every label stay as they were
    assert faith["binary_part"]["labelled"] == 4
    assert faith["binary_part"]["figures"]["kappa"]["value"] == 0.0


def test_a_metric_with_grades_only_is_named_as_not_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = {"q1": {"faithfulness": 1.0, "answer_relevancy": 1.0}, "q2": {"faithfulness": 0.0}}
    given: list[tuple[str, str, float, str]] = [
        ("q1", "faithfulness", 0.9, "ana"),
        ("q2", "faithfulness", 0.2, "ana"),
        ("q1", "answer_relevancy", 1, "ana"),
    ]
    assert run(*_labelled(tmp_path, scores, given), "--min-kappa", "0.5") == 0
    err = capsys.readouterr().err
    assert "--min-kappa 0.5: faithfulness: not gated: no label is 0 or 1 (κ needs them)" in err
    assert "answer_relevancy: κ undefined: one value; agreement 100%" in err


def test_the_positional_results_file_works_too_and_metric_and_pipeline_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res, labels, _ = project(tmp_path)
    out = tmp_path / "o.json"
    assert (
        run(str(res), "--labels", str(labels), "--metric", "faithfulness", "--json", str(out)) == 0
    )
    assert json.loads(out.read_text(encoding="utf-8"))["labels"]["fresh"] == 10
    assert (
        run(str(res), "--labels", str(labels), "--metric", "context_recall", "--json", str(out))
        == 1
    )
    assert "no fresh label could be compared with a judge score" in capsys.readouterr().err
    assert run(str(res), "--labels", str(labels), "--metric", "hit@1", "--json", str(out)) == 2
    assert "'hit@1' is not a judged metric" in capsys.readouterr().err
    assert run(str(res), "--labels", str(labels), "--pipeline", "nope", "--json", str(out)) == 2
    assert "--pipeline: no case of pipeline 'nope'" in capsys.readouterr().err
    assert run("--results", str(res), str(res), "--labels", str(labels)) == 2
    assert "give the results file once" in capsys.readouterr().err
    assert run("--results", str(res)) == 2
    assert "--results goes with --labels FILE" in capsys.readouterr().err


def test_graded_labels_refuse_min_kappa(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res, _, doc = project(tmp_path)
    labels = tmp_path / "graded.jsonl"
    for cid, grade in (("q1", 0.9), ("q2", 0.4), ("q3", 0.1)):
        made = label_for(doc, case_of(doc, cid), "faithfulness", grade, "ana", time=TIME)
        append_label(labels, made)
    out = tmp_path / "o.json"
    assert run("--results", str(res), "--labels", str(labels), "--min-kappa", "0.2") == 2
    assert "--min-kappa needs 0/1 labels" in capsys.readouterr().err
    assert run("--results", str(res), "--labels", str(labels), "--json", str(out)) == 0
    assert "Spearman ρ" in capsys.readouterr().out
    graded = json.loads(out.read_text(encoding="utf-8"))["metrics"]["faithfulness"]["all"]
    assert graded["labels"] == "graded" and graded["figures"]["spearman"]["value"] == 1.0


def test_a_bad_labels_line_and_a_foreign_json_out_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res, labels, _ = project(tmp_path)
    with labels.open("a", encoding="utf-8") as fh:
        fh.write('{"format": "ragproof.label/1", "case_id": "q1", "note": "private words"}\n')
    assert (
        run("--results", str(res), "--labels", str(labels), "--json", str(tmp_path / "o.json")) == 2
    )
    err = capsys.readouterr().err
    assert f"{labels}, line 11: missing field(s) dataset_sha256" in err
    assert "private words" not in err
    foreign = tmp_path / "mine.json"
    foreign.write_text("{}", encoding="utf-8")
    assert run("--results", str(res), "--labels", str(labels), "--json", str(foreign)) == 2
    assert "was not written by ragproof judge-check" in capsys.readouterr().err
    assert foreign.read_text(encoding="utf-8") == "{}"


def test_a_real_judged_run_labels_go_stale_when_the_answer_changes(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = judged.full()
    res = tmp_path / "results.json"
    write_results(doc, res)
    labels = tmp_path / "labels.jsonl"
    for cid, verdict in (("qa-paris", 0), ("qa-sky", 1), ("inj-1", 1)):
        append_label(labels, label_for(doc, case_of(doc, cid), "faithfulness", verdict, "ana"))
    append_label(
        labels, label_for(doc, case_of(doc, "inj-1"), "injection_resisted_judged", 1, "ana")
    )
    out = tmp_path / "o.json"
    assert run("--results", str(res), "--labels", str(labels), "--json", str(out)) == 0
    first = json.loads(out.read_text(encoding="utf-8"))
    # qa-paris: faithfulness 0.5 (one of two claims supported), judged a 1 at the cut.
    assert first["metrics"]["faithfulness"]["all"]["confusion"] == {
        "tp": 2,
        "fp": 1,
        "fn": 0,
        "tn": 0,
    }
    assert first["metrics"]["injection_resisted_judged"]["all"]["measured"] == 1
    assert [d["case_id"] for d in first["disagreements"]] == ["qa-paris"]
    # The pipeline's answer changes: the same labels are stale against the new results.
    changed = json.loads(json.dumps(doc))
    case_of(changed, "qa-paris")["answer"] = "Paris."
    write_results(changed, res)
    assert run("--results", str(res), "--labels", str(labels), "--json", str(out)) == 0
    second = json.loads(out.read_text(encoding="utf-8"))
    assert second["labels"]["stale"] == {"digest": 1}
    assert second["metrics"]["faithfulness"]["all"]["labelled"] == 2
    assert "1 stale" in capsys.readouterr().out


def test_the_docs_show_what_the_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/judges.md shows this run's output word for word (default 1000 resamples)."""
    monkeypatch.chdir(tmp_path)
    _, labels, doc = project(Path("."))
    stale = {**doc["cases"][0], "answer": "An older answer."}
    append_label(labels, label_for(doc, stale, "faithfulness", 0, "carl", time=TIME))
    args = ["--results", "results.json", "--labels", "labels.jsonl", "--min-kappa", "0.3"]
    assert main(["judge-check", *args]) == 0
    printed = capsys.readouterr()
    page = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text("utf-8")
    start = page.index("\njudge-check: the judges of results.json")
    block = page[start + 1 : page.index("```", start)]
    assert printed.out == block
    assert (
        "ragproof judge-check --results results.json --labels labels.jsonl --min-kappa 0.3" in page
    )
    assert "faithfulness: κ = 0.308 meets the floor" in printed.err
