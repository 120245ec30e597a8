"""Baseline usage errors and dataset changes, through real pytest runs."""

from __future__ import annotations

import json

import pytest

from tests.pytester_projects import load_json, run, write_frozen
from tests.regression.conftest import all_cases, update

SERIAL: list[str] = []


def test_missing_baseline_says_how_to_create_it(project: pytest.Pytester) -> None:
    result = run(project, SERIAL, "--ragproof-baseline=missing.json")
    assert result.ret == 1
    result.assert_outcomes(passed=15)
    result.stdout.fnmatch_lines(
        [
            "*ragproof gate FAILED: baseline *missing.json does not exist; create it from a good "
            "run with `pytest --ragproof-baseline=missing.json --ragproof-baseline-update` and "
            "commit missing.json*"
        ]
    )


def test_a_file_that_is_not_a_results_file_is_refused(project: pytest.Pytester) -> None:
    (project.path / "base.json").write_text('{"format": "something/else"}', encoding="utf-8")
    result = run(project, SERIAL, "--ragproof-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # before any case runs
    result.stderr.fnmatch_lines(["*ERROR: ragproof: *base.json is not a ragproof results file*"])
    # Suggesting --ragproof-baseline-update here would offer to replace the user's file.
    assert "--ragproof-baseline-update" not in result.stdout.str()
    result = run(project, SERIAL, "--ragproof-baseline=base.json", "--ragproof-baseline-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--ragproof-baseline-update will not replace base.json: it is not a ragproof results*"]
    )
    kept = (project.path / "base.json").read_text(encoding="utf-8")
    assert kept == '{"format": "something/else"}'
    (project.path / "base.json").write_text("not json", encoding="utf-8")
    result = run(project, SERIAL, "--ragproof-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ERROR: ragproof: *base.json is not a ragproof results file: not one "
            "JSON object (Expecting value at line 1, column 1); give the file pytest "
            "--ragproof-report=PATH wrote*"
        ]
    )


def test_a_truncated_baseline_names_the_line_and_column(project: pytest.Pytester) -> None:
    update(project, SERIAL)
    path = project.path / "base.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(path.read_text(encoding="utf-8"))
    where = f"line {raised.value.lineno}, column {raised.value.colno}"
    result = run(project, SERIAL, "--ragproof-baseline=base.json")
    # Found before any case runs, as a schema error is (issue 40.8).
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert " passed" not in result.stdout.str()
    result.stderr.fnmatch_lines(
        [
            f"*ERROR: ragproof: results file {path} is truncated: its JSON "
            f"breaks off at {where} (a write or copy cut off?); write it again (pytest "
            "--ragproof-report=PATH) or use an intact copy"
        ]
    )
    assert "JSONDecodeError" not in result.stdout.str() + result.stderr.str()


def test_bad_tolerance_and_alpha_give_an_example(project: pytest.Pytester) -> None:
    # Bad regression options are usage errors before any case runs.
    update(project, SERIAL)
    result = run(
        project,
        SERIAL,
        "--ragproof-baseline=base.json",
        "--ragproof-regression-tolerance=qa:recall@5>0.1",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ragproof: Could not parse regression tolerance "
            "'qa:recall@5>0.1'; expected [[]SELECTOR:[]]METRIC=DELTA, "
            "e.g. --ragproof-regression-tolerance 'qa:recall@5=0.02'*"
        ]
    )
    result = run(project, SERIAL, "--ragproof-baseline=base.json", "--ragproof-regression-alpha=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*regression-alpha must be between 0 and 1, got 2*"])


def test_dataset_change_is_refused_unless_allowed(project: pytest.Pytester) -> None:
    update(project, SERIAL)
    old = load_json(project.path / "base.json")["datasets"][0]["sha256"]
    cases = all_cases()
    extra = dict(cases[0], id="qa-new")
    write_frozen(project, [*cases[1:], extra])  # qa-01 removed, qa-new added
    result = run(project, SERIAL, "--ragproof-baseline=base.json", "--ragproof-report=r.json")
    assert result.ret == 1
    result.assert_outcomes(passed=15)
    new = load_json(project.path / "r.json")["datasets"][0]["sha256"]
    assert new != old
    result.stdout.fnmatch_lines(
        [
            "*ragproof baseline base.json: not compared (dataset changed)*",
            f"*gate FAILED: baseline refused: the baseline was made from cases.frozen.json sha256 "
            f"{old[:12]} but this run evaluates cases.frozen.json sha256 {new[:12]}; refresh the "
            "baseline with --ragproof-baseline-update, or compare the case ids both share with "
            "--ragproof-baseline-allow-dataset-change*",
        ]
    )

    result = run(
        project,
        SERIAL,
        "--ragproof-baseline=base.json",
        "--ragproof-baseline-allow-dataset-change",
        "--ragproof-report=r.json",
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*0 improved, 0 regressed, 1 new, 1 removed*",
            "*new: qa-new*",
            "*removed: qa-01*",
            "*rag_pipeline  qa  *hit@5  *11*unchanged*",
            "*note: dataset changed*compared on the 14 case id(s) both runs share*",
        ]
    )
    comparison = load_json(project.path / "r.json")["baseline"]
    assert comparison["dataset_changed"] is True and comparison["refused"] is None


def test_a_report_file_serves_as_baseline_without_its_timings(project: pytest.Pytester) -> None:
    assert run(project, SERIAL, "--ragproof-report=report.json").ret == 0
    assert "latency_s" in (project.path / "report.json").read_text(encoding="utf-8")
    result = run(
        project,
        SERIAL,
        "--ragproof-baseline=report.json",
        "--ragproof-aggregate-threshold=latency_s.p95<=5",
        "--ragproof-report=r.json",
    )
    assert result.ret == 0, result.stdout.str()
    # Latency is never compared, and the line says why (not "no case scored in both runs":
    # every case was scored in both, the baseline's timings were left out on purpose).
    why = "timings depend on the machine that ran them, so a baseline never holds them"
    result.stdout.fnmatch_lines([f"*  note: latency_s [[]rag_pipeline[]] not compared: {why}"])
    assert "no case scored in both runs" not in result.stdout.str()
    baseline = load_json(project.path / "r.json")["baseline"]
    assert "latency_s" not in {a["metric"] for a in baseline["aggregates"]}
    assert {a["verdict"] for a in baseline["aggregates"]} == {"unchanged"}
    assert f"latency_s [rag_pipeline] not compared: {why}" in baseline["notes"]
