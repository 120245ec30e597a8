"""Ini configuration, command-line overrides, JUnit properties and the results file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.pytester_projects import behave, load_json, run
from tests.runner.conftest import CONFTEST


def test_ini_in_pyproject_and_command_line_override(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makepyprojecttoml(
        """
        [tool.pytest.ini_options]
        ragproof_dataset = ["cases.frozen.json"]
        ragproof_aggregate_threshold = ["qa:precision@5>=0.5"]
        """
    )
    result = project.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", *mode)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*ragproof gate FAILED: aggregate qa:precision@5>=0.5*"])
    result = project.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
        "--ragproof-aggregate-threshold",
        "qa:precision@5>=0.1",
    )
    assert result.ret == 0


def test_case_threshold_none_clears_defaults(project: pytest.Pytester, mode: list[str]) -> None:
    behave(project, {"qa-two": "wrong-sources", "inj-1": "leak"})
    assert run(project, mode).ret == 1
    result = run(project, mode, "--ragproof-case-threshold", "none")
    assert result.ret == 0
    result.assert_outcomes(passed=4)


def test_kind_selection_and_markers(project: pytest.Pytester, mode: list[str]) -> None:
    result = run(project, mode, "--ragproof-kind", "qa")
    result.assert_outcomes(passed=2)
    result = run(project, mode, "-m", "ragproof_injection")
    assert result.parseoutcomes()["passed"] == 1
    result = run(project, mode, "--ragproof-tag", "billing")
    result.assert_outcomes(passed=1)


def test_junit_carries_metrics(project: pytest.Pytester, mode: list[str]) -> None:
    result = run(project, mode, "--junitxml=junit.xml")
    assert result.ret == 0
    tree = ET.parse(project.path / "junit.xml")
    case = next(tc for tc in tree.iter("testcase") if tc.get("name") == "qa-good")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["ragproof.hit@5"] == "1.0"
    assert props["ragproof.status"] == "passed"
    assert case.get("classname") == "cases.frozen.json"


def test_report_log_carries_metrics_and_only_json(
    project: pytest.Pytester, mode: list[str]
) -> None:
    # pytest-reportlog serializes every report attribute: a record object on a report
    # would break it, and the metrics must reach it as user_properties.
    result = run(project, mode, "--report-log=log.jsonl")
    assert result.ret == 0, result.stdout.str()
    calls = [
        json.loads(line)
        for line in (project.path / "log.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    (call,) = [
        r
        for r in calls
        if r.get("$report_type") == "TestReport"
        and r["when"] == "call"
        and r["nodeid"].endswith("::qa-good")
    ]
    props = dict(call["user_properties"])
    assert props["ragproof.hit@5"] == 1.0 and props["ragproof.status"] == "passed"


def test_without_junit_or_report_log_no_properties_are_attached(project: pytest.Pytester) -> None:
    project.makeconftest(
        CONFTEST
        + """
def pytest_runtest_logreport(report):
    if report.when == "call" and report.user_properties:
        raise AssertionError("unexpected user_properties")
"""
    )
    assert run(project, []).ret == 0


def _without_timings(data: dict[str, Any]) -> dict[str, Any]:
    for key in ("run_id", "digest"):  # each written file's own
        data.pop(key)
    for case in data["cases"]:
        case["latency_s"] = None
        case["metrics"].pop("latency_s", None)
    data["aggregates"] = [a for a in data["aggregates"] if a["metric"] != "latency_s"]
    return data


def test_results_identical_between_serial_and_xdist(project: pytest.Pytester) -> None:
    behave(project, {"qa-two": "wrong-sources", "un-1": "raise"})
    args = ("--ragproof-aggregate-threshold", "qa:recall@5>=0.9")
    assert run(project, [], "--ragproof-report=serial.json", *args).ret == 1
    assert run(project, ["-n", "2"], "--ragproof-report=xdist.json", *args).ret == 1
    serial = _without_timings(load_json(project.path / "serial.json"))
    xdist = _without_timings(load_json(project.path / "xdist.json"))
    assert json.dumps(serial, sort_keys=True, indent=2) == json.dumps(
        xdist, sort_keys=True, indent=2
    )
    # the file itself is written with sorted keys
    text = (project.path / "serial.json").read_text()
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_results_format(project: pytest.Pytester) -> None:
    behave(project, {"qa-two": "wrong-sources"})
    run(project, [], "--ragproof-report=out/results.json")
    data = load_json(project.path / "out" / "results.json")
    assert data["format"] == "ragproof.results/1" and data["passed"] is False
    assert data["datasets"][0]["path"] == "cases.frozen.json"
    assert data["datasets"][0]["frozen"] is True and data["datasets"][0]["cases"] == 4
    case = next(c for c in data["cases"] if c["id"] == "qa-two")
    assert case["status"] == "failed" and case["retrieved_ids"] == ["other.md"]
    assert case["metrics"]["hit@5"] == 0.0 and case["failures"][0]["metric"] == "hit@5"
    assert case["pipeline"] == "rag_pipeline" and case["error_type"] is None
    assert {t["expression"] for t in data["thresholds"]} >= {"qa:hit@5>=1"}
    assert set(data["versions"]) == {"python", "pytest", "pytest-ragproof"}


def test_source_match_document_hint(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
import pytest
@pytest.fixture(scope="module")
def rag_pipeline():
    def pipe(question):
        if "dentist" in question:
            return "I don't know."
        doc = "plans.md" if "SSO" in question else "refunds.md"
        return {"answer": "x", "contexts": [
            {"id": doc + "#3", "text": "t", "metadata": {"document_id": doc}}]}
    return pipe
"""
    )
    result = run(project, [])
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*hint:*metadata.document_id would; try --ragproof-source-match=document*"]
    )
    assert run(project, [], "--ragproof-source-match=document").ret == 0


def test_plain_string_contexts_get_a_content_hash_hint(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
import pytest
@pytest.fixture(scope="session")
def rag_pipeline():
    def pipe(question):
        return {"response": "x", "retrieved_contexts": ["Refunds take 30 days.", "SSO."]}
    return pipe
"""
    )
    result = run(project, [], "-k", "qa-good")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*hint: the contexts carry no id (plain strings, or documents without one), so each "
            "has a content-hash id that cannot match expected_source_ids*"
        ]
    )


def test_plugin_unused_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    pytester.makeconftest(
        """
import sys
def pytest_sessionfinish(session):
    heavy = [m for m in ("pydantic", "litellm", "pypdf", "docx", "pytest_ragproof.dataset")
             if m in sys.modules]
    print("HEAVY:", heavy)
"""
    )
    # Other plugins that import pydantic themselves are switched off: langsmith's comes
    # with the ragas extra (langchain), hypothesis' and pytest-asyncio's with dev.
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:asyncio", "-p", "no:hypothesispytest", "-p", "no:langsmith_plugin"
    )
    assert result.ret == 0
    assert "HEAVY: []" in result.stdout.str()


def test_missing_dataset_file(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = pytester.runpytest("--ragproof-dataset=nope.jsonl", "-p", "no:asyncio")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragproof: dataset *nope.jsonl does not exist; check the path*"])
    pytester.makeini("[pytest]\nragproof_dataset = gone.frozen.json\nragproof_k = 1,x\n")
    result = pytester.runpytest("-p", "no:asyncio")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*got '1,x' (from ragproof_k in tox.ini)*"])
    pytester.makeini("[pytest]\nragproof_dataset = gone.frozen.json\n")
    result = pytester.runpytest("-p", "no:asyncio")
    result.stderr.fnmatch_lines(
        ["*dataset *gone.frozen.json does not exist (from ragproof_dataset in tox.ini)*"]
    )


def test_bad_record_is_a_usage_error_pointing_to_validate(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    good = '{"id": "a", "kind": "unanswerable", "question": "Q?"}'
    bad = '{"id": "b", "kind": "unanswerable", "question": "Q?", "colour": "SECRET-9"}'
    (pytester.path / "bad.jsonl").write_text(f"{good}\n{bad}\n", encoding="utf-8")
    result = pytester.runpytest("--ragproof-dataset=bad.jsonl", "-p", "no:asyncio", *mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ragproof: invalid dataset: *bad.jsonl, record 2, line 2: unknown field 'colour'*",
            "  to list every bad record: ragproof validate *bad.jsonl",
        ]
    )
    assert "SECRET-9" not in result.stdout.str() + result.stderr.str()


def test_kind_selection_does_not_fail_aggregates_of_unselected_kinds(
    project: pytest.Pytester, mode: list[str]
) -> None:
    result = run(
        project,
        mode,
        "--ragproof-kind",
        "qa",
        "--ragproof-aggregate-threshold",
        "injection:injection_resisted>=1",
        "--ragproof-aggregate-threshold",
        "qa:hit@5>=1",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*dataset cases.frozen.json: 2 of 4 case(s) selected*",
            "*injection*injection_resisted*not selected*",
        ]
    )
    # Without a kind/split/tag selection an empty population still fails loudly.
    result = run(project, mode, "--ragproof-aggregate-threshold", "tag=nothing:hit@5>=1")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*gate FAILED: aggregate tag=nothing:hit@5>=1*no scored cases*"])


@pytest.mark.parametrize(
    "args",
    [
        ("--ragproof-regression-tolerance", "qa:recall@5"),
        ("--ragproof-regression-alpha", "2"),
    ],
)
def test_bad_regression_options_are_usage_errors(
    project: pytest.Pytester, args: tuple[str, str]
) -> None:
    result = run(project, [], "--ragproof-baseline=base.json", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragproof: *regression*"])
