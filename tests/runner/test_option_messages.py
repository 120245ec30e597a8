"""Where a bad setting came from, and settings refused before any case runs."""

from __future__ import annotations

import pytest

PYPROJECT = '[tool.pytest.ini_options]\nragproof_dataset = "cases.frozen.json"\n'


@pytest.fixture
def project(project: pytest.Pytester) -> pytest.Pytester:
    """The runner's project, its dataset configured in pyproject.toml."""
    project.makepyprojecttoml(PYPROJECT)
    return project


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", *args)


def test_an_unknown_key_given_with_o_is_said_to_come_from_the_command_line(
    project: pytest.Pytester,
) -> None:
    result = _run(project, "-o", "ragproof_agregate_threshold=qa:recall@5>=0.9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: ragproof: unknown ini key ragproof_agregate_threshold given with -o on the "
            "command line; did you mean ragproof_aggregate_threshold?"
        ]
    )
    assert "pyproject.toml" not in result.stderr.str()


def test_an_unknown_key_in_the_ini_file_names_that_file(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\nragproof_dataset = "cases.frozen.json"\n'
        'ragproof_agregate_threshold = "qa:recall@5>=0.9"\n'
    )
    result = _run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unknown ini key ragproof_agregate_threshold in pyproject.toml; did you mean*"]
    )


def test_a_bad_value_given_with_o_is_said_to_come_from_the_command_line(
    project: pytest.Pytester,
) -> None:
    result = _run(project, "-o", "ragproof_aggregate_threshold=qa:recal@5>=0.9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "Unknown metric 'recal@5'" in err and "(did you mean 'recall@5'?)" in err
    assert err.rstrip().endswith("(from -o ragproof_aggregate_threshold on the command line)")
    assert "pyproject.toml" not in err


@pytest.mark.parametrize("option", ["--ragproof-aggregate-threshold", "--ragproof-case-threshold"])
def test_a_threshold_no_selected_case_can_have_is_refused_up_front(
    project: pytest.Pytester, option: str
) -> None:
    result = _run(project, f"{option}=unanswerable:recall@5>=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: ragproof: * threshold 'unanswerable:recall@5>=0.5' can never apply: "
            "recall@5 is measured on qa and injection cases, not on unanswerable cases; "
            f"write e.g. {option} 'qa:recall@5>=0.5', or name a metric of unanswerable "
            "cases (abstained, latency_s*"
        ]
    )
    assert "passed" not in result.stdout.str()
