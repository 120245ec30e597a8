"""The run object of a pytest run of ragproof, registered as a plugin (``ragproof-run``).

One object per process (controller and each xdist worker), made by :func:`get_run`.
Its parts live by responsibility: the state it is built with (``state``), running and
reporting an item (``items``), the worker -> controller merge (``workers``), the end
of the run (``finish``); this module holds collection, which ties them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pytest_ragproof.plugin.xdist_support as xdist_support
from pytest_ragproof.plugin.collect import DatasetFile
from pytest_ragproof.plugin.finish import FinishHooks
from pytest_ragproof.plugin.items import ItemHooks
from pytest_ragproof.plugin.refs import case_ref, relpath

RUN_KEY = pytest.StashKey["RagproofRun"]()


def get_run(config: pytest.Config) -> RagproofRun:
    """The run object, created on first use when no dataset option activated it."""
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        run = RagproofRun(config)
        config.stash[RUN_KEY] = run
        config.pluginmanager.register(run, "ragproof-run")
        from pytest_ragproof.plugin.junit import AtomicJUnit

        config.pluginmanager.register(AtomicJUnit(), "ragproof-junit")
    return run


class RagproofRun(ItemHooks, FinishHooks):
    """Everything one pytest run of ragproof knows, and its hooks."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(config)
        if not self.is_worker:
            self.register_xdist_hooks()
        # The invocation folder and its parents up to the rootdir, nearest first: their
        # conftests provide the pipeline of a dataset given by option (collect.from_home).
        here, root = config.invocation_params.dir, config.rootpath
        homes = [here, *here.parents] if here.is_relative_to(root) else []
        self._homes = homes[: homes.index(root) + 1] if root in homes else []
        self._home_nodes: dict[Path, pytest.Collector] = {}

    # -- collection ---------------------------------------------------------
    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        if isinstance(collector, pytest.Directory) and collector.path in self._homes:
            self._home_nodes[collector.path] = collector

    def home_node(self) -> pytest.Collector | None:
        """The collected folder nearest the invocation folder (up to the rootdir)."""
        return next((self._home_nodes[p] for p in self._homes if p in self._home_nodes), None)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        if not self.collect_paths:
            return None
        resolved = file_path.resolve()
        if resolved not in self.collect_paths:
            return None
        # Outside the rootdir pytest would name the file after the argument that reached
        # it ('' for the dataset itself); its cases keep the path the run shows instead.
        nodeid = (
            None
            if file_path.is_relative_to(self.config.rootpath)
            else relpath(self.config, resolved)
        )
        node: DatasetFile = DatasetFile.from_parent(parent, path=file_path, nodeid=nodeid)
        node.run = self
        return node

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[Any]) -> None:
        """``--ragproof-shard K/N``: tests that are not dataset cases run in shard 1 only."""
        if self.others_here or self.shard is None:
            return
        others = [item for item in items if case_ref(item) is None]
        if others:
            items[:] = [item for item in items if case_ref(item) is not None]
            config.hook.pytest_deselected(items=others)
            self.notes.append(
                f"shard {self.shard.text}: {len(others)} test(s) that are not dataset cases "
                "run in shard 1 only (--ragproof-shard-others=all runs them in every shard)"
            )

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        # Marker items have no population known up front: deselected ones count too.
        for item in items:
            self._count_marker_item(item)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if xdist_support.is_controller(self.config):
            return
        self.selected = {i.nodeid for i in session.items if self._count_marker_item(i)}
        if self.selected and self.cfg.judges is not None:
            self.scorers.warm_up()

    def _count_marker_item(self, item: pytest.Item) -> bool:
        """Is ``item`` ragproof's? A marker-mode one joins the expected population too."""
        ref = case_ref(item)
        if ref is not None and ref.origin == "marker":
            self.expected.add(item.nodeid)
            self.marker_ids.add(item.nodeid)
        return ref is not None
