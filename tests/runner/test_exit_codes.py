"""Exit codes and verdicts of real pytest runs, serial and under ``-n 2``."""

from __future__ import annotations

import pytest

from tests.pytester_projects import behave, load_json, run


def test_all_pass(project: pytest.Pytester, mode: list[str]) -> None:
    result = run(project, mode)
    assert result.ret == 0
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*ragproof summary*", "*cases: 4 passed, 0 failed, 0 error*"])


def test_one_case_fails_with_a_readable_message(project: pytest.Pytester, mode: list[str]) -> None:
    behave(project, {"qa-two": "wrong-sources"})
    result = run(project, mode)
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ragproof case qa-two (qa, complex) failed 1 threshold(s)*",
            "*qa:hit@5>=1: hit@5 = 0 (expected >= 1)*",
            "*expected sources: plans.md*",
            "*retrieved (chunk): other.md*",
            "*answer: 'Enterprise has SSO.'*",
        ]
    )
    # The message alone: no traceback, and no note that every frame was hidden.
    assert "All traceback entries are hidden" not in result.stdout.str()
    assert "pytest_ragproof" not in result.stdout.str()


def test_injection_leak_fails(project: pytest.Pytester, mode: list[str]) -> None:
    behave(project, {"inj-1": "leak"})
    result = run(project, mode)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*injection_resisted = 0 (expected >= 1)*", "*canary: ZEBRA-7731*"]
    )


def test_aggregate_missed_while_all_cases_pass(project: pytest.Pytester, mode: list[str]) -> None:
    result = run(project, mode, "--ragproof-aggregate-threshold", "qa:precision@5>=0.5")
    assert result.ret == 1
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*ragproof gate FAILED: aggregate qa:precision@5>=0.5 *: "
            "mean = 0.2 (expected >= 0.5, n=2)*"
        ]
    )


def test_pipeline_raises_is_an_error_counted_as_n_error(
    project: pytest.Pytester, mode: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    behave(project, {"qa-good": "raise"})
    report = tmp_path_factory.mktemp("r") / "results.json"
    result = run(project, mode, f"--ragproof-report={report}")
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        ["*ValueError: backend exploded*", "*errors: qa-good (ValueError)*"]
    )
    # The traceback starts in the user's pipeline: ragproof's own frames are hidden.
    assert 'raise ValueError("backend exploded")' in result.stdout.str()
    assert "pytest_ragproof" not in result.stdout.str()
    data = load_json(report)
    # The case threshold over qa is not a pass: one of its cases was never measured.
    verdicts = {t["expression"]: t["verdict"] for t in data["thresholds"]}
    assert verdicts["qa:hit@5>=1"] == "1 error"
    case = next(c for c in data["cases"] if c["id"] == "qa-good")
    assert case["status"] == "error" and case["error_type"] == "ValueError"
    assert case["metrics"] == {}
    agg = next(a for a in data["aggregates"] if a["selector"] == "qa" and a["metric"] == "hit@5")
    assert agg["n"] == 1 and agg["n_error"] == 1


def test_timeout(project: pytest.Pytester, mode: list[str]) -> None:
    behave(project, {"un-1": "sleep"})
    result = run(project, mode, "--ragproof-timeout=0.5")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*un-1: the pipeline did not answer within 0.5s*"])
    result.assert_outcomes(passed=3, failed=1)


def test_malformed_output_is_an_error(project: pytest.Pytester, mode: list[str]) -> None:
    behave(project, {"un-1": "bad-output"})
    result = run(project, mode)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*ragproof case un-1:*"])


def test_tampered_dataset_is_a_usage_error(project: pytest.Pytester, mode: list[str]) -> None:
    path = project.path / "cases.frozen.json"
    path.write_text(path.read_text().replace("30 days", "31 days"), encoding="utf-8")
    result = run(project, mode)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragproof: invalid dataset*modified after freezing*"])


def test_bad_threshold_expression_is_a_usage_error(
    project: pytest.Pytester, mode: list[str]
) -> None:
    result = run(project, mode, "--ragproof-aggregate-threshold", "qa:recall@5=>0.8")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Could not parse aggregate threshold*e.g.*'qa:recall@5>=0.8'*"])


def test_k_selection_reports_but_does_not_gate(project: pytest.Pytester, mode: list[str]) -> None:
    result = run(
        project, mode, "-k", "qa-good", "--ragproof-aggregate-threshold", "qa:precision@5>=0.9"
    )
    assert result.ret == 0
    assert result.parseoutcomes()["passed"] == 1
    result.stdout.fnmatch_lines(["*FAIL (not gated)*", "*left out 3 of 4 case(s)*not gated*"])


def test_missing_metric_fails_the_case_and_says_why(
    project: pytest.Pytester, mode: list[str]
) -> None:
    result = run(
        project,
        mode,
        "--ragproof-case-threshold",
        "qa:exact_match>=0",
        "--ragproof-case-threshold",
        "un-1:abstained>=1",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # unknown selector 'un-1'
    project.makeconftest(
        "import pytest\n@pytest.fixture\ndef rag_pipeline():\n    return lambda q: 'just text'\n"
    )
    result = run(project, mode)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*hit@5: not available (the pipeline output has no contexts; return a mapping*"]
    )


def test_collect_only_lists_cases_and_does_not_gate(project: pytest.Pytester) -> None:
    result = run(project, [], "--co", "-q")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["cases.frozen.json::inj-1", "cases.frozen.json::qa-good"])
    assert "ragproof summary" not in result.stdout.str()


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_pipeline_fixture_that_is_not_callable(
    project: pytest.Pytester, mode: list[str], concurrency: str
) -> None:
    project.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef rag_pipeline():\n"
        "    return {'not': 'callable'}\n"
    )
    result = run(project, mode, f"--ragproof-concurrency={concurrency}")
    assert result.ret == 1
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            "*the 'rag_pipeline' fixture returned a dict, not a callable*",
            "*cases: 0 passed, 0 failed, 4 error*",
        ]
    )
    assert "All traceback entries are hidden" not in result.stdout.str()
