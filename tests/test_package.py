"""Packaging smoke tests: the CLI entry and the lazy public API."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_ragproof.cli import main


def test_cli_without_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: ragproof" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ragproof", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("ragproof ")


def test_unknown_public_name_raises_attribute_error() -> None:
    import pytest_ragproof

    with pytest.raises(AttributeError):
        getattr(pytest_ragproof, "does_not_exist")  # noqa: B009


def test_a_mistyped_command_is_named_with_the_closest_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["valdate", "cases.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'valdate': did you mean 'validate'?" in err
    assert "Traceback" not in err


def test_help_and_one_command_import_only_that_command() -> None:
    """`ragproof --help` imports no subcommand module, `ragproof validate --help` only its own
    (the module docstring of cli.py promises it; the commands import the library they run)."""
    code = (
        "import sys\n"
        "from pytest_ragproof.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m.rpartition('.')[2] for m in sys.modules\n"
        "             if m.startswith('pytest_ragproof.commands.') and '._' not in m))\n"
    )
    top = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=True
    )
    assert top.stdout.strip().splitlines()[-1] == "[]"
    one = subprocess.run(
        [sys.executable, "-c", code, "validate", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert one.stdout.strip().splitlines()[-1] == "['validate']"
