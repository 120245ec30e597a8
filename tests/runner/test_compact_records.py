"""What a run keeps of each case to its end (issue 39.2): no more than its outputs read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ragproof.verdict.record import CaseRecord, Scores
from tests.pytester_projects import load_json, run

# Written by the project's conftest at the end of the run (on the process that decides
# it): what the run kept of each case, and what pytest's reports of the cases hold.
INSPECT = """

import json as _json

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    from pytest_ragproof.plugin.session import RUN_KEY
    from pytest_ragproof.verdict.record import Scores

    run = session.config.stash.get(RUN_KEY, None)
    if run is None or not run.records or run.outcome is None:
        return
    kept = {
        r.id: {
            "answer": r.answer,
            "contexts": r.contexts,
            "retrieved_ids": r.retrieved_ids,
            "packed": isinstance(r.metrics, Scores),
            "metrics": dict(r.metrics),
        }
        for r in run.records.values()
    }
    out = {"records": kept, "listed": "cases" in run.outcome.document}
    pathlib.Path("kept.json").write_text(_json.dumps(out, sort_keys=True))

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    reports = {}
    for rep in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("", []):
        if "frozen.json::" in rep.nodeid:
            reports.setdefault(rep.nodeid, []).append(rep)
    shapes = {
        nodeid: {
            "n": len(reps),
            "one_keywords": len({id(r.keywords) for r in reps}) == 1,
            "keywords": sorted(reps[0].keywords),
            "sections": [list(r.sections) for r in reps],
            "user_properties": [list(r.user_properties) for r in reps],
        }
        for nodeid, reps in reports.items()
    }
    pathlib.Path("reports.json").write_text(_json.dumps(shapes, sort_keys=True))
"""


@pytest.fixture
def inspected(project: pytest.Pytester) -> pytest.Pytester:
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + INSPECT, encoding="utf-8")
    return project


def _kept(pytester: pytest.Pytester) -> dict[str, Any]:
    return load_json(pytester.path / "kept.json")


def test_a_run_without_outputs_keeps_no_texts_and_packs_scores(
    inspected: pytest.Pytester, mode: list[str]
) -> None:
    result = run(inspected, mode)
    assert result.ret == 0, result.stdout.str()
    kept = _kept(inspected)
    assert not kept["listed"]  # no output reads the case entries: none are built
    good = kept["records"]["qa-good"]
    assert good["answer"] is None and good["contexts"] is None and good["retrieved_ids"] is None
    assert good["packed"]
    assert good["metrics"]["hit@5"] == 1.0 and "token_f1" in good["metrics"]
    # The summary still reads every score: the component table and thresholds print.
    result.stdout.fnmatch_lines(["*cases: 4 passed, 0 failed, 0 error*", "*retriever*"])


@pytest.mark.parametrize(
    "option", ["--ragproof-report=out.json", "--ragproof-html=out.html", "--ragproof-markdown=o.md"]
)
def test_an_output_that_reads_case_entries_keeps_them(
    inspected: pytest.Pytester, option: str
) -> None:
    result = run(inspected, [], option)
    assert result.ret == 0, result.stdout.str()
    kept = _kept(inspected)
    assert kept["listed"]
    good = kept["records"]["qa-good"]
    assert not good["packed"]
    assert good["answer"] == "Refunds are accepted within 30 days."
    assert good["retrieved_ids"] == ["refunds.md", "plans.md"]
    assert [c["text"] for c in good["contexts"]] == [good["answer"]] * 2


def test_the_summary_is_the_same_with_and_without_a_results_file(
    inspected: pytest.Pytester, mode: list[str]
) -> None:
    """A run that keeps less of each case prints what the same run writing results does."""
    quiet = run(inspected, mode)
    written = run(inspected, mode, "--ragproof-report=out.json")
    assert quiet.ret == written.ret == 0
    doc = load_json(inspected.path / "out.json")
    good = next(c for c in doc["cases"] if c["id"] == "qa-good")
    assert good["contexts"][0]["text"] == "Refunds are accepted within 30 days."

    def summary(result: pytest.RunResult) -> list[str]:
        lines = result.stdout.lines
        start = next(i for i, line in enumerate(lines) if "ragproof summary" in line)
        return [
            line
            for line in lines[start:]
            if "latency" not in line and "results written" not in line and " in " not in line
        ]

    assert summary(quiet) == summary(written)


def test_a_cases_reports_share_their_keywords(inspected: pytest.Pytester, mode: list[str]) -> None:
    result = run(inspected, mode)
    assert result.ret == 0, result.stdout.str()
    shapes = load_json(inspected.path / "reports.json")
    assert len(shapes) == 4
    assert "qa-good" in shapes["cases.frozen.json::qa-good"]["keywords"]
    for shape in shapes.values():
        assert shape["n"] == 3  # setup, call, teardown
        assert shape["one_keywords"]
        assert shape["sections"] == [[], [], []]
        assert shape["user_properties"] == [[], [], []]


def test_captured_output_and_properties_stay_on_the_reports(inspected: pytest.Pytester) -> None:
    """Only an empty list is replaced: what a report carries is left as it is."""
    conftest = inspected.path / "conftest.py"
    text = conftest.read_text(encoding="utf-8").replace(
        "    def pipeline(question, case):\n",
        "    def pipeline(question, case):\n        print('called', case.id)\n",
    )
    conftest.write_text(text, encoding="utf-8")
    result = run(inspected, [], "--junitxml=j.xml")
    assert result.ret == 0, result.stdout.str()
    shape = load_json(inspected.path / "reports.json")["cases.frozen.json::qa-good"]
    calls = [s for s in shape["sections"] if s]
    # The call's report and the teardown's (which repeats the item's sections so far).
    assert calls == [[["Captured stdout call", "called qa-good\n"]]] * 2
    properties = [dict(p) for p in shape["user_properties"] if p]
    assert len(properties) == 2  # the call's and the teardown's copy of the item's
    assert all(p["ragproof.status"] == "passed" for p in properties)


def test_scores_read_as_the_dict_they_pack() -> None:
    metrics = {"abstained": 0.0, "hit@1": 1.0, "mrr": 0.5}
    scores = Scores(metrics)
    assert scores == metrics and list(scores) == list(metrics)
    assert scores["mrr"] == 0.5 and scores.get("nope") is None and "hit@1" in scores
    assert len(scores) == 3 and dict(scores.items()) == metrics
    with pytest.raises(KeyError):
        scores["nope"]
    assert Scores({"mrr": 0.25, "abstained": 1.0, "hit@1": 0.0})["abstained"] == 1.0
    assert repr(scores) == f"Scores({metrics!r})"
    with pytest.raises(TypeError):  # never written as it is: to_dict gives a dict
        json.dumps({"metrics": scores})


def test_a_packed_record_is_sent_and_written_as_a_dict() -> None:
    record = CaseRecord("c1", "d.json", "d.json::c1", "qa", "simple", [], "p")
    record.metrics = {"hit@1": 1.0, "mrr": 1.0}
    record.answer = "yes"
    record.contexts = [{"id": "a", "document_id": None, "text": "t"}]
    record.drop_entry_only()
    out = record.to_dict()
    assert type(out["metrics"]) is dict and out["metrics"] == {"hit@1": 1.0, "mrr": 1.0}
    assert out["answer"] is None and out["contexts"] is None
    again = CaseRecord.from_dict(json.loads(json.dumps(out)))
    assert again.metrics == record.metrics
