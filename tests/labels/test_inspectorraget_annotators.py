"""People as annotators in the InspectorRAGet export: ``ragproof report --labels`` and
``--ragproof-inspectorraget-labels``; field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.labels import Label, append_label, label_for
from pytest_ragproof.reporting.inspectorraget import build_inspectorraget
from pytest_ragproof.reporting.inspectorraget_format import validate_export
from pytest_ragproof.results.document import write_results
from tests.reporting.conftest import Runs, run_plugin
from tests.reporting.judged import Judged, case_of

TIME = "2026-12-02T10:00:00Z"


def labels_for(doc: dict[str, Any]) -> list[Label]:
    made = []
    votes = {
        ("qa-paris", "ana"): 0,
        ("qa-paris", "bob"): 1,
        ("qa-sky", "ana"): 1,
        ("qa-empty", "bob"): 0,  # the judge made no claim there; bob says unfaithful
        ("inj-1", "ana"): 1,
    }
    for (cid, reviewer), verdict in votes.items():
        made.append(label_for(doc, case_of(doc, cid), "faithfulness", verdict, reviewer, time=TIME))
    made.append(
        label_for(doc, case_of(doc, "inj-1"), "injection_resisted_judged", 0, "bob", time=TIME)
    )
    return made


def evaluation(export: dict[str, Any], task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in export["evaluations"] if e["task_id"] == task_id)
    return found


def test_each_reviewer_is_a_worker_of_a_human_metric_beside_the_judge(judged: Judged) -> None:
    doc = judged.full()
    labels = labels_for(doc)
    qa = build_inspectorraget(
        {**doc, "cases": [c for c in doc["cases"] if c["kind"] == "qa"]}, labels=labels
    )
    metric = next(m for m in qa["metrics"] if m["name"] == "faithfulness_human")
    assert metric["author"] == "human"
    assert metric["type"] == "categorical"
    assert metric["aggregator"] == "majority"
    assert metric["values"] == [
        {"value": "no", "numeric_value": 0},
        {"value": "yes", "numeric_value": 1},
    ]
    assert metric["display_name"] == "Faithfulness (people)"
    judge = next(m for m in qa["metrics"] if m["name"] == "faithfulness")
    assert judge["author"] == "algorithm"  # the judge's own metric is unchanged
    # qa-paris: faithfulness 0.5, a yes at the cut; ana says no, bob yes.
    assert evaluation(qa, "qa-paris")["annotations"]["faithfulness_human"] == {
        "system": {"value": "yes"},
        "human:ana": {"value": "no"},
        "human:bob": {"value": "yes"},
    }
    # The judge's metric is text in this file (qa-empty has no score); bob's label on
    # qa-empty gives every scored case a human verdict, so the human metric is plotted.
    assert evaluation(qa, "qa-paris")["annotations"]["faithfulness"] == {"system": {"value": "0.5"}}
    assert evaluation(qa, "qa-empty")["annotations"]["faithfulness_human"] == {
        "human:bob": {"value": "no"}
    }
    assert "faithfulness_human" not in evaluation(qa, "qa-boom")["annotations"]  # a judge error
    assert "answer_relevancy_human" not in {m["name"] for m in qa["metrics"]}
    assert "(faithfulness_human): each reviewer is a worker human:<reviewer>" in qa["description"]

    injection = build_inspectorraget(
        {**doc, "cases": [c for c in doc["cases"] if c["kind"] == "injection"]}, labels=labels
    )
    resisted = next(
        m for m in injection["metrics"] if m["name"] == "injection_resisted_judged_human"
    )
    assert [v["value"] for v in resisted["values"]] == ["followed", "resisted"]
    assert evaluation(injection, "inj-1")["annotations"]["injection_resisted_judged_human"] == {
        "system": {"value": "resisted"},
        "human:bob": {"value": "followed"},
    }


def test_a_human_metric_some_scored_case_lacks_is_text(judged: Judged) -> None:
    doc = judged.full()
    labels = [x for x in labels_for(doc) if x.case_id != "qa-empty"]
    qa = build_inspectorraget(
        {**doc, "cases": [c for c in doc["cases"] if c["kind"] == "qa"]}, labels=labels
    )
    metric = next(m for m in qa["metrics"] if m["name"] == "faithfulness_human")
    assert (metric["type"], metric["author"]) == ("text", "human")
    assert evaluation(qa, "qa-paris")["annotations"]["faithfulness_human"]["human:ana"] == {
        "value": "no"
    }


def test_graded_labels_make_a_numerical_human_metric(judged: Judged) -> None:
    doc = judged.full()
    inj = [c for c in doc["cases"] if c["kind"] == "injection"]
    label = label_for(doc, inj[0], "faithfulness", 0.75, "ana", time=TIME)
    export = build_inspectorraget({**doc, "cases": inj}, labels=[label])
    metric = next(m for m in export["metrics"] if m["name"] == "faithfulness_human")
    assert (metric["type"], metric["range"], metric["aggregator"]) == (
        "numerical",
        [0, 1, 0.1],
        "average",
    )
    assert evaluation(export, "inj-1")["annotations"]["faithfulness_human"] == {
        "system": {"value": 1.0},
        "human:ana": {"value": 0.75},
    }


def test_report_labels_counts_stale_ones_and_leaves_them_out(
    judged: Judged, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = judged.full()
    res = tmp_path / "results.json"
    write_results(doc, res)
    labels = tmp_path / "labels.jsonl"
    for label in labels_for(doc):
        append_label(labels, label)
    older = {**case_of(doc, "qa-sky"), "answer": "An older answer."}
    append_label(labels, label_for(doc, older, "faithfulness", 0, "carl", time=TIME))
    out = tmp_path / "ir.json"
    args = ["report", str(res), "--format", "inspectorraget", "--labels", str(labels)]
    assert main([*args, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert (
        "annotators: 6 label(s) by 2 reviewer(s) (human:ana, human:bob); 1 stale label(s) left "
        "out (the answer, contexts, question or reference changed since it was given)"
    ) in err
    qa = json.loads((tmp_path / "ir.qa.json").read_text(encoding="utf-8"))
    validate_export(qa)
    workers = {w for e in qa["evaluations"] for w in e["annotations"].get("faithfulness_human", {})}
    assert workers == {"system", "human:ana", "human:bob"}  # carl's stale label is not there
    # --kind: labels of the other kinds are not in the file, and said so.
    assert main([*args, "--kind", "qa", "-o", str(tmp_path / "qa.json")]) == 0
    assert "2 label(s) of cases not in these results left out" in capsys.readouterr().err
    assert main(["report", str(res), "--format", "html", "--labels", str(labels)]) == 2
    assert "--labels applies to --format inspectorraget only" in capsys.readouterr().err


def test_the_pytest_option_exports_annotators(runs: Runs) -> None:
    doc = runs.single()
    project = runs.project
    labels = project / "labels.jsonl"
    labels.unlink(missing_ok=True)
    verdicts = {"qa-simple": 1, "qa-two": 0}
    for cid, verdict in verdicts.items():
        record = case_of(doc, cid)
        append_label(labels, label_for(doc, record, "faithfulness", verdict, "ana", time=TIME))
    proc = run_plugin(
        project,
        "--ragproof-inspectorraget=people.json",
        "--ragproof-inspectorraget-labels=labels.jsonl",
    )
    assert "inspectorraget annotators: 2 label(s) by 1 reviewer(s) (human:ana)" in proc.stdout
    qa = json.loads((project / "people.qa.json").read_text(encoding="utf-8"))
    validate_export(qa)
    # No judge ran: the human metric has people only, on two of the qa cases, so it is text.
    metric = next(m for m in qa["metrics"] if m["name"] == "faithfulness_human")
    assert (metric["type"], metric["author"]) == ("text", "human")
    assert evaluation(qa, "qa-two")["annotations"]["faithfulness_human"] == {
        "human:ana": {"value": "no"}
    }
    alone = run_plugin(project, "--ragproof-inspectorraget-labels=labels.jsonl")
    assert alone.returncode == 4
    assert "goes with --ragproof-inspectorraget PATH" in alone.stdout + alone.stderr
    (project / "bad.jsonl").write_text("{oops\n", encoding="utf-8")
    bad = run_plugin(
        project, "--ragproof-inspectorraget=x.json", "--ragproof-inspectorraget-labels=bad.jsonl"
    )
    assert bad.returncode == 4
    assert "bad.jsonl, line 1: not a JSON object (invalid JSON)" in bad.stdout + bad.stderr
