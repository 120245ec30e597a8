"""The import command as a function, and OTLP JSON built by hand (``otlp.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from tests.interop.conftest import Ran


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    def run(*args: str | Path) -> Ran:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run
