"""Every ``--ragproof-*`` option and ``ragproof_*`` ini key, registered with pytest and read.

The options are declared once, pytest-free, in :mod:`pytest_ragproof.verdict.option_table`
(``ragproof merge`` and ``evaluate()`` read the same table); this module registers each
entry as a flag and an ini key and reads a value back. Cheap to import (pytest's parser
types and the table). Command-line values replace ini values; list options given on the
command line replace the whole ini list. Where a value came from and the checks that
relate options live in :mod:`pytest_ragproof.plugin.usage`.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragproof.verdict import option_table
from pytest_ragproof.verdict.options import Option

__all__ = ["BY_NAME", "OPTIONS", "Option", "datasets_configured", "get", "register"]

# Snapshots for readers that want a name; the functions below read the table at call time.
OPTIONS: tuple[Option, ...] = option_table.OPTIONS
BY_NAME: dict[str, Option] = option_table.by_name()


def register(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragproof", "RAG regression tests (pytest-ragproof)")
    for opt in option_table.OPTIONS:
        kwargs: dict[str, Any] = {"default": None, "dest": opt.dest, "help": opt.help}
        if opt.flag:
            kwargs["action"] = "store_true"
        else:
            kwargs["action"] = "append" if opt.multiple else "store"
            kwargs["metavar"] = opt.metavar
        group.addoption(opt.cli, **kwargs)
        ini_default: Any = [] if opt.multiple else opt.default
        if opt.ini_type == "bool":
            ini_default = bool(opt.default)
        elif ini_default is not None and not isinstance(ini_default, str | list):
            ini_default = str(ini_default)  # a number from defaults.py, as the ini gives it
        parser.addini(opt.ini, opt.help, type=opt.ini_type, default=ini_default)


def get(config: pytest.Config, name: str) -> Any:
    """The effective value: command line if given, else ini, else the default."""
    opt = option_table.by_name()[name]
    value = config.getoption(opt.dest, default=None)
    if value is not None:
        return list(value) if opt.multiple else value
    ini = config.getini(opt.ini)
    if opt.multiple:
        return [str(v) for v in ini]
    if opt.ini_type == "bool":
        return bool(ini)
    return ini if ini not in ("", None) else opt.default


def datasets_configured(config: pytest.Config) -> bool:
    """Is any dataset given? Cheap: decides whether the runner loads at all."""
    return bool(
        config.getoption("ragproof_dataset", default=None) or config.getini("ragproof_dataset")
    )
