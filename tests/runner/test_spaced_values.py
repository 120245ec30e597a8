"""``--ragproof-X VALUE`` (a space, an existing path outside the project) in a project whose
pyproject.toml configures the dataset.

pytest finds its rootdir and ini file before it knows a plugin's options, so such a value
reads as a test path there: the rootdir moved to the value's folder, the project's
configuration was lost, and the run passed on the unit tests alone. It is now refused
with the ``=`` form. Real pytest processes: rootdir and ini discovery is the point.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PYPROJECT = '[tool.pytest.ini_options]\nragproof_dataset = ["cases.frozen.json"]\n'
UNIT = "def test_unit():\n    assert True\n"


@pytest.fixture
def project(project: pytest.Pytester) -> pytest.Pytester:
    """The runner's project, its dataset configured in pyproject.toml, and a unit test."""
    project.makepyprojecttoml(PYPROJECT)
    project.mkdir("tests")
    (project.path / "tests" / "test_unit.py").write_text(UNIT, encoding="utf-8")
    return project


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the project, holding the files the options name."""
    folder = tmp_path_factory.mktemp("ci-files")
    (folder / "base.json").write_text("{}", encoding="utf-8")
    (folder / "history.sqlite").write_bytes(b"")
    (folder / "cases.frozen.json").write_text("{}", encoding="utf-8")
    return folder


def _run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:pytest-shard", *args
    )


@pytest.mark.parametrize(
    ("flag", "name"),
    [
        ("--ragproof-baseline", "base.json"),
        ("--ragproof-history", "history.sqlite"),
        ("--ragproof-cache-dir", ""),
        ("--ragproof-dataset", "cases.frozen.json"),
    ],
)
def test_a_spaced_value_that_would_move_the_rootdir_is_refused_with_the_equals_form(
    project: pytest.Pytester, elsewhere: Path, flag: str, name: str
) -> None:
    value = str(elsewhere / name) if name else str(elsewhere)
    result = _run(project, flag, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(
        [
            f"ERROR: ragproof: pytest took {value} for a test path while it looked for the "
            "project's configuration (it reads the command line before it knows plugins' "
            f"options), so {project.path / 'pyproject.toml'} was not read; write "
            f"{flag}={value} (with '=')"
        ]
    )
    assert "passed" not in result.stdout.str()


def test_the_equals_form_keeps_the_projects_configuration(
    project: pytest.Pytester, elsewhere: Path
) -> None:
    result = _run(project, f"--ragproof-cache-dir={elsewhere}")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines([f"rootdir: {project.path}*", "*cases: 4 passed*"])


def test_a_spaced_value_that_moves_nothing_is_left_alone(project: pytest.Pytester) -> None:
    project.mkdir(".llm-cache")
    result = _run(project, "--ragproof-cache-dir", ".llm-cache", "--ragproof-kind", "qa")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*cases: 2 passed*"])
