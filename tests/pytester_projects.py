"""What the pytester projects of the runner and regression tests share.

A frozen dataset written into the project, a behaviour table the scripted
pipeline of each project's conftest reads, the run command, and the ``mode``
fixture that runs every plugin test serially and under ``-n 2``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

#: Plugins of the development install that no project run uses. Switched off in every
#: pytester run: each run (and each of its xdist workers) would set them up again, which
#: made a project run three to four times slower (langsmith's comes with the ragas extra).
QUIET_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:anyio")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, whose runs (in process or not) leave out :data:`QUIET_PLUGINS`."""
    inprocess, subprocess = pytester.runpytest_inprocess, pytester.runpytest_subprocess

    def quiet_inprocess(*args: str | os.PathLike[str], **kwargs: Any) -> pytest.RunResult:
        return inprocess(*QUIET_PLUGINS, *args, **kwargs)

    def quiet_subprocess(
        *args: str | os.PathLike[str], timeout: float | None = None
    ) -> pytest.RunResult:
        return subprocess(*QUIET_PLUGINS, *args, timeout=timeout)

    monkeypatch.setattr(pytester, "runpytest_inprocess", quiet_inprocess)
    monkeypatch.setattr(pytester, "runpytest_subprocess", quiet_subprocess)
    return pytester


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
