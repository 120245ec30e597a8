"""``--ragproof-history``: record the run in a history store (docs/history.md).

Only the process that decides the run writes (the xdist controller, or the only
process). The store is opened once when the run starts, so a bad path, a store
newer than this pytest-ragproof or an unreachable server stops the run before any
case runs; at the end the run's results document is added in one transaction. A
run that is only part of the run (a shard, pytest's selection, a stopped run) is
not recorded: its aggregates are not the run's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import pytest_ragproof.plugin.options as options
import pytest_ragproof.plugin.usage as usage
from pytest_ragproof.errors import ConfigError, HistoryError, MissingExtraError

if TYPE_CHECKING:
    from pytest_ragproof.history.target import Target
    from pytest_ragproof.verdict.decide import Line, RunFacts


def history_target(config: pytest.Config) -> Target | None:
    """The store the run records into, checked and opened once (None: no history)."""
    value = options.get(config, "history")
    if not value:
        return None
    from pytest_ragproof.history.store import open_store
    from pytest_ragproof.history.target import resolve_target

    from_ini = usage.given(config, "history") == options.BY_NAME["history"].ini
    ini_dir = config.inipath.parent if config.inipath is not None else config.rootpath
    base = ini_dir if from_ini else config.invocation_params.dir
    try:
        target = resolve_target(str(value), base, default_base=config.rootpath)
        open_store(target).close()
    except (HistoryError, MissingExtraError) as exc:
        raise ConfigError(f"--ragproof-history: {exc}") from None
    return target


def record(target: Target, document: dict[str, Any], facts: RunFacts) -> Line | None:
    """Add the run to the store; the summary line that says what happened (None: no case
    of ragproof's ran, nothing to record)."""
    from pytest_ragproof.history.store import open_store
    from pytest_ragproof.verdict.decide import Line

    if not facts.records:
        return None
    partial = bool(facts.expected) and facts.selected != facts.expected
    if facts.sharded or facts.stopped or partial:
        why = (
            "a shard (add the merged results: ragproof history add)"
            if facts.sharded
            else "the run stopped early"
            if facts.stopped
            else "pytest's selection left cases out"
        )
        return Line(f"history: run not recorded in {target.shown}: {why}", "note")
    try:
        with open_store(target) as store:
            added = store.add(document, "pytest")
    except (HistoryError, MissingExtraError) as exc:
        return Line(f"history: run NOT recorded: {exc}", "failure")
    return Line(f"history: run {added.run_id} recorded in {target.shown}")
