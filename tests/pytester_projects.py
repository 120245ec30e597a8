"""What the pytester projects of the runner and regression tests share.

A frozen dataset written into the project, a behaviour table the scripted
pipeline of each project's conftest reads, the run command, and the ``mode``
fixture that runs every plugin test serially and under ``-n 2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(params=["serial", "xdist"])
def mode(request: pytest.FixtureRequest) -> list[str]:
    return [] if request.param == "serial" else ["-n", "2"]


def write_frozen(pytester: pytest.Pytester, cases: list[dict[str, Any]]) -> None:
    """``cases.frozen.json`` in the project, frozen from ``cases`` (no source left behind)."""
    from pytest_ragproof import freeze

    src = pytester.path / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    freeze(src)
    src.unlink()


def behave(pytester: pytest.Pytester, table: dict[str, str]) -> None:
    """Tell the project's scripted pipeline how to behave, per case id."""
    (pytester.path / "behaviour.json").write_text(json.dumps(table), encoding="utf-8")


def run(pytester: pytest.Pytester, mode: list[str], *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--ragproof-dataset=cases.frozen.json",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
        *args,
    )


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
