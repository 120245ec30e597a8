"""``--ragproof-baseline``: real pytest runs of the plugin, serial and under ``-n 2``."""

from __future__ import annotations

import pytest

from tests.pytester_projects import behave, load_json, run
from tests.regression.conftest import QA_IDS, update

TOL = "--ragproof-regression-tolerance"


def test_update_then_compare_has_no_regressions(project: pytest.Pytester, mode: list[str]) -> None:
    first = update(project, mode, "--ragproof-report=first.json")
    assert first.ret == 0
    first.stdout.fnmatch_lines(["*ragproof baseline: written to *base.json (15 case record(s))*"])
    text = (project.path / "base.json").read_text(encoding="utf-8")
    assert "latency_s" not in text
    assert "latency_s" in (project.path / "first.json").read_text(encoding="utf-8")
    baseline = load_json(project.path / "base.json")
    assert baseline["format"] == "ragproof.results/1" and len(baseline["cases"]) == 15

    result = run(project, mode, "--ragproof-baseline=base.json", f"{TOL}=qa:recall@5=0")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=15)
    result.stdout.fnmatch_lines(
        [
            "*ragproof baseline base.json (alpha 0.05):*",
            "*cases [[]rag_pipeline[]]: 0 improved, 0 regressed, 0 new, 0 removed*",
            "*rag_pipeline*qa*recall@5*12*1.000*1.000*+0.000*unchanged*",
        ]
    )
    assert "gate FAILED" not in result.stdout.str()

    # A second update of an unchanged pipeline rewrites the same bytes.
    update(project, mode)
    assert (project.path / "base.json").read_text(encoding="utf-8") == text


def test_systematic_drop_fails_the_run(project: pytest.Pytester, mode: list[str]) -> None:
    update(project, mode)
    behave(project, {cid: "half" for cid in QA_IDS})  # recall@5 1.0 -> 0.5, hit@5 stays 1
    result = run(
        project,
        mode,
        "--ragproof-baseline=base.json",
        f"{TOL}=qa:recall@5=0.1",
        "--ragproof-report=r.json",
    )
    assert result.ret == 1
    result.assert_outcomes(passed=15)
    result.stdout.fnmatch_lines(
        [
            "*REGRESSION*",
            "*ragproof gate FAILED: regression qa:recall@5 [[]rag_pipeline[]]: mean 1 -> 0.5 "
            "(worse by 0.5, tolerance 0.1), wilcoxon-normal p = * < alpha 0.05, n = 12 paired*",
        ]
    )
    data = load_json(project.path / "r.json")
    assert data["passed"] is False
    (row,) = [a for a in data["baseline"]["aggregates"] if a["metric"] == "recall@5"]
    assert row["verdict"] == "regression" and row["failed"] is True
    assert row["test"]["p_value"] < 0.01

    # The same drop inside a wider tolerance does not gate.
    result = run(project, mode, "--ragproof-baseline=base.json", f"{TOL}=qa:recall@5=0.6")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*recall@5*within tolerance*"])


def test_small_drop_is_not_significant(project: pytest.Pytester) -> None:
    mode: list[str] = []
    update(project, mode)
    behave(project, {"qa-03": "half"})
    result = run(project, mode, "--ragproof-baseline=base.json", f"{TOL}=recall@5=0")
    assert result.ret == 0, result.stdout.str()
    # One case moved: no exact test can reach p < 0.05 with one pair, and the summary says so.
    result.stdout.fnmatch_lines(
        [
            "*rag_pipeline  [*] *recall@5*13*1.000*0.962*-0.038*too few pairs*",
            "*recall@5 [[]rag_pipeline[]]: too few changed cases to test: 1; the Wilcoxon "
            "signed-rank test needs at least 6 moving one way for p < 0.05*",
        ]
    )


def test_case_flips_are_listed_and_gate_only_when_asked(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-02": "miss"})
    update(project, mode)
    behave(project, {"qa-05": "miss"})
    result = run(project, mode, "--ragproof-baseline=base.json")
    assert result.ret == 1  # qa-05's own item fails; the flip itself does not gate
    result.assert_outcomes(passed=14, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*cases [[]rag_pipeline[]]: 1 improved, 1 regressed, 0 new, 0 removed*",
            "*improved: qa-02 (failed -> passed)*",
            "*regressed: qa-05 (passed -> failed)*",
            "*case flips do not gate the run*",
        ]
    )
    assert "gate FAILED" not in result.stdout.str()

    result = run(
        project, mode, "--ragproof-baseline=base.json", "--ragproof-fail-on-case-regression"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*ragproof gate FAILED: 1 case(s) regressed against the baseline [[]rag_pipeline[]]: "
            "qa-05 (--ragproof-fail-on-case-regression)*"
        ]
    )


def test_new_and_removed_cases(project: pytest.Pytester) -> None:
    mode: list[str] = []
    update(project, mode, "--ragproof-kind=qa")
    result = run(project, mode, "--ragproof-baseline=base.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*0 improved, 0 regressed, 3 new, 0 removed*", "*new: inj-1, un-1, un-2*"]
    )
    update(project, mode)
    result = run(project, mode, "--ragproof-baseline=base.json", "--ragproof-kind=qa")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*0 improved, 0 regressed, 0 new, 3 removed*",
            "*removed: inj-1, un-1, un-2*",
            "*note: setting kinds differs from the baseline: [[][]] -> [[]'qa'[]]*",
        ]
    )


def test_a_baseline_compares_the_headline_set_without_thresholds(
    project: pytest.Pytester, mode: list[str]
) -> None:
    assert update(project, mode, "--ragproof-case-threshold=none").ret == 0
    behave(project, {cid: "miss" for cid in QA_IDS[:8]})
    result = run(
        project,
        mode,
        "--ragproof-baseline=base.json",
        "--ragproof-case-threshold=none",
        "--ragproof-report=r.json",
    )
    assert result.ret == 1
    result.assert_outcomes(passed=15)
    result.stdout.fnmatch_lines(
        [
            "*rag_pipeline*qa*hit@5*12*1.000*0.333*-0.667*REGRESSION*",
            "*ragproof gate FAILED: regression qa:hit@5 [[]rag_pipeline[]]: mean 1 -> 0.3333*",
        ]
    )
    compared = {
        (a["selector"], a["metric"])
        for a in load_json(project.path / "r.json")["baseline"]["aggregates"]
    }
    assert compared == {
        ("qa", "hit@5"),
        ("qa", "recall@5"),
        ("qa", "mrr"),
        ("qa", "token_f1"),
        ("qa", "abstained"),
        ("unanswerable", "abstained"),
        ("injection", "injection_resisted"),
    }


def test_a_stopped_run_does_not_update_the_baseline(project: pytest.Pytester) -> None:
    update(project, [])
    before = (project.path / "base.json").read_bytes()
    behave(project, {QA_IDS[0]: "miss"})
    result = update(project, [], "-x")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*ragproof baseline: not updated (the run stopped early): base.json unchanged*"]
    )
    assert (project.path / "base.json").read_bytes() == before


def test_a_partial_run_reports_baseline_regressions_without_gating(
    project: pytest.Pytester, mode: list[str]
) -> None:
    update(project, mode)
    behave(project, {cid: "half" for cid in QA_IDS})
    result = run(project, mode, "--ragproof-baseline=base.json", "-k", "qa-")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*REGRESSION*",
            "*note: pytest's selection * left out 3 of 15 case(s): aggregates are reported, "
            "not gated*",
            "*note: baseline: * finding(s) reported, not gated: the run did not evaluate every "
            "case*",
        ]
    )
    assert "ragproof gate FAILED" not in result.stdout.str()
