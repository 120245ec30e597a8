"""The rootdir and ini file pytest found before it knew ragproof's options.

pytest finds the rootdir and the ini file (``determine_setup``) from its command line
*before* it loads the installed plugins (``pytest11`` entry points) and so before it knows
their options. At that point ``--ragproof-baseline /ci/base.json`` reads as an unknown
flag and a free argument; a free argument that names an existing path is taken for a test
path, so the rootdir moves to that path's folder and the project's ini file (and its
``ragproof_dataset``) is never read (pytest-dev/pytest#8846). pytest's own options
(``--junitxml /x``) are known by then, and ``--flag=VALUE`` keeps the value with its flag.

A plugin cannot redo that set-up afterwards: by the time it is loaded, the ini file's
``addopts``, ``pythonpath``, ``required_plugins`` and ``-p`` plugins have been applied or
left out. So a run whose rootdir or ini file a ragproof value moved stops before any
conftest is loaded, as a usage error that gives the ``=`` form. A value that moved
nothing (a path inside the project) is left alone.

The one room for pytest's set-up internals (``_pytest.config.findpaths``).
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.verdict import option_table


def command_line(config: pytest.Config) -> list[str]:
    """The arguments pytest found its rootdir from: ``PYTEST_ADDOPTS``, then the command's."""
    env = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    return [*env, *(str(a) for a in config.invocation_params.args)]


def spaced_values(args: Sequence[str]) -> list[tuple[str, str]]:
    """(flag, value) of each value-taking ragproof option given as ``--flag VALUE``."""
    valued = {o.cli for o in option_table.OPTIONS if not o.flag}
    pairs: list[tuple[str, str]] = []
    for word, value in itertools.pairwise(args):
        if word == "--":
            break
        if word in valued:
            pairs.append((word, value))
    return pairs


def _exists(value: str) -> bool:
    try:
        return Path(value).exists()
    except (OSError, ValueError):
        return False


def _found_with_our_options(
    config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> tuple[Path, Path | None] | None:
    """The rootdir and ini file pytest finds when ragproof's options are known (None: this
    pytest's set-up takes inputs not known here, so it is not second-guessed)."""
    import inspect

    from _pytest.config.findpaths import determine_setup

    ns = parser.parse_known_args(args)
    if getattr(ns, "help", False) or getattr(ns, "version", False):
        return None
    inputs: dict[str, Any] = {
        "inifile": getattr(ns, "inifilename", None),
        "override_ini": getattr(ns, "override_ini", None),
        "args": getattr(ns, "file_or_dir", None) or [],
        "rootdir_cmd_arg": getattr(ns, "rootdir", None) or None,
        "invocation_dir": config.invocation_params.dir,
    }
    params = inspect.signature(determine_setup).parameters
    if not set(params) <= set(inputs):
        return None
    found = determine_setup(**{k: v for k, v in inputs.items() if k in params})
    return found[0], found[1]


def check_setup(config: pytest.Config, parser: pytest.Parser) -> None:
    """Refuse a run whose rootdir or ini file a spaced ragproof value moved."""
    args = command_line(config)
    taken = [(flag, value) for flag, value in spaced_values(args) if _exists(value)]
    if not taken:
        return  # (every run without such a value ends here, before any import)
    found = _found_with_our_options(config, parser, args)
    if found is None or found == (config.rootpath, config.inipath):
        return
    root, ini = found
    if ini is not None and config.inipath != ini:
        lost = f"{ini} was not read"
    elif config.inipath is not None and ini is None:
        lost = f"{config.inipath} was read instead of no ini file"
    else:
        lost = f"the rootdir is {config.rootpath}, not {root}"
    values = ", ".join(value for _, value in taken)
    fixed = " ".join(f"{flag}={value}" for flag, value in taken)
    raise pytest.UsageError(
        f"ragproof: pytest took {values} for a test path while it looked for the project's "
        f"configuration (it reads the command line before it knows plugins' options), so "
        f"{lost}; write {fixed} (with '=')"
    )
