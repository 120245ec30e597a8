"""Fixture files in each tool's documented format, and the import command as a function."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ragproof.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = FIXTURES / "corpus"


@dataclass
class Ran:
    code: int
    out: str
    err: str


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A copy of the fixture files in a fresh folder (tests write beside them)."""
    target = tmp_path / "in"
    shutil.copytree(FIXTURES, target)
    return target


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    def run(*args: str | Path) -> Ran:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run
