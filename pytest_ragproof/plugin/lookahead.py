"""``--ragproof-concurrency`` in a pytest run: which cases may run ahead, and when.

pytest runs one item at a time; an I/O-bound pipeline should not wait for it. When
the pipeline fixture outlives a case (session-, package- or module-scoped), the
current case and the next ones this process will run (its xdist queue under xdist)
are handed to one :class:`~pytest_ragproof.execution.prefetch.Prefetcher`; a
function-scoped fixture makes a new pipeline per case, so nothing runs ahead and
the summary says why, once.
"""

from __future__ import annotations

from typing import Any

import pytest

import pytest_ragproof.plugin.xdist_support as xdist_support
from pytest_ragproof.execution.prefetch import OnOutcome, Prefetcher
from pytest_ragproof.plugin.collect import CaseItem
from pytest_ragproof.verdict.config import RunConfig


def fixture_scope(item: pytest.Item, name: str) -> str:
    """Scope of the pipeline fixture as resolved for this item ('function' if unknown)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}).get(name) if info is not None else None
    return str(defs[-1].scope) if defs else "function"


class LookAhead:
    """The run's prefetcher, made on first use, and the cases it may start."""

    def __init__(self, cfg: RunConfig, notes: list[str]) -> None:
        self.cfg = cfg
        self.notes = notes  # the run's notes: a scope that prevents running ahead is one
        self.prefetcher: Prefetcher | None = None
        self._scope = "session"
        self._warned = False

    def prefetcher_for(
        self, item: CaseItem, on_outcome: OnOutcome | None = None, *, evaluators: bool = False
    ) -> Prefetcher | None:
        n = self.cfg.concurrency
        # Judges and evaluators look ahead too, so their calls overlap (the pipeline still
        # gets n calls at once: with n = 1 they are made one after another on ragproof's
        # thread).
        window = self.cfg.lookahead_with_evaluators() if evaluators else self.cfg.lookahead
        if window <= 1:
            return None
        scope = fixture_scope(item, self.cfg.pipeline_fixture)
        if scope not in ("session", "module", "package"):
            if not self._warned:
                self._warned = True
                what = f"--ragproof-concurrency={n}" if n > 1 else "judging or evaluating ahead"
                self.notes.append(
                    f"{what} did not apply: the fixture "
                    f"'{self.cfg.pipeline_fixture}' is {scope}-scoped, so each case gets a new "
                    "pipeline and cases cannot run ahead; make it session- or module-scoped"
                )
            return None
        if self.prefetcher is None:
            self.prefetcher = Prefetcher(self.cfg, n, window=window, on_outcome=on_outcome)
        self._scope = scope
        return self.prefetcher

    def upcoming(self, item: CaseItem, n: int) -> list[tuple[str, Any]]:
        """The current item and the next case items this process will run (at most n)."""
        out: list[tuple[str, Any]] = [(item.nodeid, item.case)]
        for other in xdist_support.run_order(item):
            if len(out) >= n:
                break
            if other is item or not isinstance(other, CaseItem):
                continue
            if self._scope == "module" and other.parent is not item.parent:
                break
            out.append((other.nodeid, other.case))
        return out

    def close(self) -> None:
        if self.prefetcher is not None:
            self.prefetcher.close(self.cfg.timeout or 5.0)
