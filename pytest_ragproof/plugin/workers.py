"""Under pytest-xdist: what workers tell the controller, and how the controller merges it.

Case records travel on the test reports (:mod:`~pytest_ragproof.plugin.items`). What
does not: which items a worker collected and selected, the marker-mode population
(an xdist controller never collects, so it cannot count ``@pytest.mark.rag`` cases
itself), and the notes a worker made. Workers send these once, at the end of their
session, through :func:`~pytest_ragproof.plugin.xdist_support.send_to_controller`.
"""

from __future__ import annotations

from typing import Any

import pytest_ragproof.plugin.xdist_support as xdist_support
from pytest_ragproof.plugin.state import RunState


class WorkerMerge(RunState):
    """Both sides of the worker -> controller channel."""

    def register_xdist_hooks(self) -> None:
        """On the controller (or a serial run): listen to the workers."""
        self.config.pluginmanager.register(
            xdist_support.XdistHooks(self._on_worker_collected, self._on_worker_done),
            "ragproof-xdist",
        )

    def send_to_controller(self) -> None:
        """On a worker, at the end of its session: its marker-mode population and notes."""
        xdist_support.send_to_controller(
            self.config,
            {
                "expected": sorted(self.marker_ids),
                "selected": sorted((self.selected or set()) & self.marker_ids),
                "marker_population": self.marker_population,
                "notes": list(self.notes),
            },
        )

    def _on_worker_collected(self, ids: list[str]) -> None:
        if self.selected is None:
            self.selected = {i for i in ids if i in self.expected}

    def _on_worker_done(self, info: dict[str, Any]) -> None:
        # Workers report their marker-mode population (collected and deselected).
        self.expected.update(info["expected"])
        self.marker_population.update(info.get("marker_population", {}))
        self.selected = (self.selected or set()) | set(info["selected"])
        self.notes.extend(n for n in info.get("notes", []) if n not in self.notes)
