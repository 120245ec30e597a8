"""Helpers for the quickstart tests: the example's location and a clean subprocess pytest."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.pytester_projects import QUIET_PLUGINS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "conftest_examples" / "quickstart"


def run_python(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd``, with no PYTEST_* variable of this run leaking in.

    Under xdist this process carries PYTEST_XDIST_WORKER and friends; a user's shell
    does not. A pytest run (``-m pytest``) still finds ragproof by its entry point, as a
    user's does, but without the development install's plugins a user's environment
    does not have (:data:`QUIET_PLUGINS`: langsmith's and hypothesis' cost each run about
    a second and a half).
    """
    if args[:2] == ["-m", "pytest"]:
        args = [*args[:2], *QUIET_PLUGINS, *args[2:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def copy_example(dest_parent: Path) -> Path:
    """A fresh copy of conftest_examples/quickstart (no caches) under ``dest_parent``."""
    dest = dest_parent / "quickstart"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


@pytest.fixture(scope="session")
def example_module() -> ModuleType:
    """The example's conftest.py imported as a plain module (its helpers, not its hooks)."""
    name = "ragproof_quickstart_example_conftest"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLE / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
