"""A run given ragproof options that had nothing for ragproof to do says so.

``pytest --ragproof-baseline=base.json`` in a project whose ini file configures no
dataset, or whose configured datasets the given paths leave out, would otherwise end
with the other tests' verdict and not a word from ragproof: a CI job that looks green
while evaluating nothing. Only options given on the command line (or in
``PYTEST_ADDOPTS``) count: settings in the ini file alone are a project's standing
configuration, and ``pytest tests/unit`` in such a project stays quiet.
``--ragproof-strict`` (ini ``ragproof_strict``) makes the line a usage error (exit 4).

Runs in every pytest run, so it stays cheap: the option table and pytest only.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragproof.plugin.options import get
from pytest_ragproof.plugin.rootdir import command_line
from pytest_ragproof.verdict import option_table

NAME = "ragproof-idle"


def given_flags(config: pytest.Config) -> list[str]:
    """The ragproof flags on the command line, in their order (``--ragproof-strict`` aside)."""
    flags = {o.cli for o in option_table.OPTIONS if o.name != "strict"}
    seen: list[str] = []
    for word in command_line(config):
        if word == "--":
            break
        flag = word.split("=", 1)[0]
        if flag in flags and flag not in seen:
            seen.append(flag)
    return seen


def register(config: pytest.Config) -> None:
    """Watch the run for ragproof's part when ragproof flags were given (not on xdist workers)."""
    if hasattr(config, "workerinput"):
        return
    flags = given_flags(config)
    if flags:
        config.pluginmanager.register(IdleCheck(config, flags), NAME)


class IdleCheck:
    """At the end of the run: did the ragproof options given find a dataset to act on?"""

    def __init__(self, config: pytest.Config, flags: list[str]) -> None:
        self.config = config
        self.flags = flags
        self.strict = bool(get(config, "strict"))
        self.message: str | None = None

    def _idle_reason(self) -> str | None:
        """Why ragproof had nothing to do in this run, or None when it had cases."""
        run: Any = self.config.pluginmanager.get_plugin("ragproof-run")
        if run is None:
            where = (
                f"ini file {self.config.inipath}"
                if self.config.inipath is not None
                else f"no ini file, rootdir {self.config.rootpath}"
            )
            return f"no ragproof dataset is configured or collected ({where})"
        if run.datasets or run.records or run.expected or run.marker_ids:
            return None
        return (
            "no ragproof dataset is collected (the configured ones are not selected by the "
            "given paths)"
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        reason = self._idle_reason()
        if reason is None:
            return
        self.message = (
            f"ragproof: {', '.join(self.flags)} given, but {reason}: ragproof evaluated "
            "nothing in this run"
        )
        if self.strict:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        else:
            self.message += " (--ragproof-strict makes this an error)"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.message is not None:
            prefix = "ERROR: " if self.strict else "warning: "
            terminalreporter.write_line(
                prefix + self.message, red=self.strict, yellow=not self.strict
            )
