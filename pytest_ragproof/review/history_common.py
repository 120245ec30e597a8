"""What every history page shares: the store it reads, the area, run links and number formats.

The Runs (:mod:`.history_runs`), Run (:mod:`.history_run`) and Compare
(:mod:`.history_compare`) pages reach the store of a request through :func:`view_of`,
link a run with :func:`run_href` and show numbers, commits and verdicts the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request

from pytest_ragproof.history.queries import RunSummary

if TYPE_CHECKING:
    from pytest_ragproof.history.store import Store

__all__ = [
    "AREA",
    "HistoryView",
    "fmt",
    "run_href",
    "run_label",
    "short",
    "signed",
    "view_of",
]

AREA = "history"


@dataclass(frozen=True)
class HistoryView:
    """What the history pages read: the store, and how it was named (for the page)."""

    store: Store
    shown: str  # the store as the command was given it (never a password)


def view_of(request: Request) -> HistoryView:
    view: HistoryView = request.app.state.history_view
    return view


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def signed(value: float | None) -> str:
    if value is None:
        return "–"
    return "0" if value == 0 else f"{value:+.3g}"


def short(commit: str | None) -> str:
    return (commit or "")[:10]


def run_href(run_id: str) -> str:
    """The URL of a run's page: the id percent-encoded, whatever it holds (a run id is
    the results file's, any text; the route takes it back whole, slashes too)."""
    return f"/runs/{quote(run_id, safe='')}"


def run_label(run: RunSummary) -> str:
    commit = f" {short(run.git_commit)}" if run.git_commit else ""
    return f"{run.run_id}{commit}"
