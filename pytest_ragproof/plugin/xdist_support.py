"""Everything that depends on pytest-xdist, in one room.

Which process this is (worker or controller), the look-ahead into a worker's
queue that ``--ragproof-concurrency`` uses (with its fallback when xdist's
internals are not what this code expects), and the ``workeroutput`` channel by
which workers tell the controller about their marker-mode cases. Nothing here
imports xdist: a run without it takes the serial paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

WORKER_OUTPUT_KEY = "ragproof"


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_controller(config: pytest.Config) -> bool:
    """An xdist controller: it distributes items and never runs or collects them."""
    return config.pluginmanager.has_plugin("dsession")


def run_order(item: pytest.Item) -> list[pytest.Item]:
    """Items after ``item`` in the order this process will run them.

    Serially that is ``session.items``. An xdist worker runs only what the
    controller sent it: its queue (read from xdist's worker object), falling back
    to no look-ahead when that is not available.
    """
    items = item.session.items
    if is_worker(item.config):
        for plugin in item.config.pluginmanager.get_plugins():
            if type(plugin).__name__ == "WorkerInteractor":
                try:
                    indices = [plugin.nextitem_index]
                    with plugin.torun.lock() as pending:
                        indices.extend(pending)
                    return [items[i] for i in indices if isinstance(i, int)]
                except (AttributeError, TypeError, IndexError):
                    break
        return []
    try:
        index = items.index(item)
    except ValueError:
        return []
    return items[index + 1 :]


def send_to_controller(config: pytest.Config, data: dict[str, Any]) -> None:
    """From a worker's ``pytest_sessionfinish``: data the controller reads at node down."""
    config.workeroutput[WORKER_OUTPUT_KEY] = data  # type: ignore[attr-defined]


class XdistHooks:
    """The controller's xdist hooks, registered beside the run (optional hooks)."""

    def __init__(
        self,
        on_collected: Callable[[list[str]], None],
        on_worker_done: Callable[[dict[str, Any]], None],
    ) -> None:
        self.on_collected = on_collected
        self.on_worker_done = on_worker_done

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.on_collected(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        info = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
        if info:
            self.on_worker_done(info)
