"""What the pytester projects of the runner and regression tests share.

A frozen dataset written into the project, a behaviour table the scripted
pipeline of each project's conftest reads, the run command, and the ``mode``
fixture that runs every plugin test serially and under ``-n 2``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

#: Plugins of the development install that no project run uses. Switched off in every
#: pytester run: each run (and each of its xdist workers) would set them up again, which
#: made a project run three to four times slower (langsmith's comes with the ragas extra).
QUIET_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:anyio")


@functools.cache
def _installed_plugins() -> tuple[str, ...]:
    """The entry-point names of the installed pytest plugins (what autoload loads)."""
    return tuple(sorted({ep.name for ep in entry_points(group="pytest11")}))


def autoloaded_plugins(args: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``-p NAME`` for each installed plugin that pytest's autoload would load in a run with
    ``args``: all but :data:`QUIET_PLUGINS` and those the args switch off (``-p no:NAME``).

    In-process runs name them with autoload off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``):
    the same plugins under the same names, without autoload's scan of every installed
    distribution's file list, which cost each ``-n 2`` worker a third of its start.
    """
    words = [str(a) for a in (*QUIET_PLUGINS, *args)]
    off = {w.split("no:", 1)[1] for w in words if w.startswith(("no:", "-pno:"))}
    return [arg for name in _installed_plugins() if name not in off for arg in ("-p", name)]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, whose runs (in process or not) leave out :data:`QUIET_PLUGINS`;
    in-process runs load the other installed plugins by name (:func:`autoloaded_plugins`)."""
    inprocess, subprocess = pytester.runpytest_inprocess, pytester.runpytest_subprocess

    def quiet_inprocess(*args: str | os.PathLike[str], **kwargs: Any) -> pytest.RunResult:
        # The variable is seen by this run and inherited by its xdist workers, which get
        # the -p options with the run's other arguments.
        with monkeypatch.context() as env:
            env.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            return inprocess(*QUIET_PLUGINS, *autoloaded_plugins(args), *args, **kwargs)

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


def resigned(doc: dict[str, Any]) -> dict[str, Any]:
    """The digest of ``doc`` computed again, as anyone can (it is not a signature): an edited
    file whose digest matches, so only the checks that decide from data can find the edit."""
    from pytest_ragproof.results.digest import DIGEST_COVERS, digest

    covers = list(DIGEST_COVERS)
    return {"sha256": digest(doc, covers), "covers": covers}
