"""ragproof options given to a run with no ragproof dataset say so in one line.

Such a run used to end on the other tests' verdict without a word from ragproof: a CI
job green while evaluating nothing. ``--ragproof-strict`` (ini ``ragproof_strict``)
makes the line a usage error. Settings in the ini file alone stay quiet. Every test
runs serially and under ``-n 2``.
"""

from __future__ import annotations

import pytest

UNIT = "def test_unit():\n    assert True\n"
MARKED = """
import pytest

@pytest.mark.rag(dataset="cases.frozen.json")
def test_marked(rag_case):
    return "I don't know."
"""
UNCONFIGURED = (
    "ragproof: --ragproof-report, --ragproof-baseline given, but no ragproof dataset is "
    "configured or collected (no ini file, rootdir *): ragproof evaluated nothing in this run"
)
NOT_SELECTED = (
    "* ragproof: --ragproof-report given, but no ragproof dataset is collected (the "
    "configured ones are not selected by the given paths): ragproof evaluated nothing in "
    "this run*"
)


@pytest.fixture
def project(project: pytest.Pytester) -> pytest.Pytester:
    """The runner's project (a frozen dataset and a pipeline, which its ini file may
    configure) with a unit test beside it."""
    project.mkdir("tests")
    (project.path / "tests" / "test_unit.py").write_text(UNIT, encoding="utf-8")
    return project


def _run(project: pytest.Pytester, mode: list[str], *args: str) -> pytest.RunResult:
    return project.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", *mode, *args)


def test_options_without_a_dataset_warn_in_one_line(
    project: pytest.Pytester, mode: list[str]
) -> None:
    given = ("--ragproof-report=r.json", "--ragproof-baseline=base.json")
    result = _run(project, mode, "tests", *given)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [f"warning: {UNCONFIGURED} (--ragproof-strict makes this an error)"]
    )
    assert result.stdout.str().count("ragproof evaluated nothing") == 1

    result = _run(project, mode, "tests", *given, "--ragproof-strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines([f"ERROR: {UNCONFIGURED}"])
    assert "makes this an error" not in result.stdout.str()


def test_the_strict_ini_key_makes_it_an_error(project: pytest.Pytester, mode: list[str]) -> None:
    project.makeini("[pytest]\nragproof_strict = true\n")
    result = _run(project, mode, "tests", "--ragproof-judges=all")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["ERROR: ragproof: --ragproof-judges given, but no ragproof dataset is configured*"]
    )


def test_configured_datasets_left_out_by_the_paths_warn_when_options_are_given(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makeini("[pytest]\nragproof_dataset = cases.frozen.json\n")
    result = _run(project, mode, "tests", "--ragproof-report=r.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*not selected by the given paths*", NOT_SELECTED])

    result = _run(project, mode, "tests", "--ragproof-report=r.json", "--ragproof-strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines([NOT_SELECTED])


def test_ini_settings_alone_and_runs_with_cases_stay_quiet(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makeini(
        "[pytest]\nragproof_dataset = cases.frozen.json\nragproof_report = r.json\n"
        "ragproof_strict = true\n"
    )
    result = _run(project, mode, "tests")
    assert result.ret == 0, result.stdout.str()
    assert "evaluated nothing" not in result.stdout.str()
    result = _run(project, mode, "--ragproof-baseline=r.json", "--ragproof-baseline-update")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=5)
    assert "evaluated nothing" not in result.stdout.str()


def test_marker_mode_cases_are_a_dataset_collected(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makepyfile(test_marked=MARKED)
    result = _run(
        project, mode, "test_marked.py", "--ragproof-kind=unanswerable", "--ragproof-strict"
    )
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert "evaluated nothing" not in result.stdout.str()
