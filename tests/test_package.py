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
