"""The history pages of the review app: Runs, Run and Compare, drawn from a history store.

``ragproof review --history STORE`` serves them alone; ``ragproof review results.json
--history STORE`` serves them beside the case pages of that results file, and the Run
page of that very run links each case to its review page.

Routes:

* ``/runs``: every run, newest first, with its verdict, case counts, dataset version
  (``name@sha12``), commit and branch; above the list, the trend of each headline
  metric (and every metric a gate bounded) per pipeline over the newest runs
  (``?last=N``, 100 by default), the gate's bound drawn; a form picks two runs to
  compare.
* ``/runs/{run}``: one run (an id, a unique prefix, ``latest`` or ``-N``): its cases,
  filtered by kind, status, pipeline and text (``?kind=qa&status=failed&q=refund``).
* ``/runs/{run}/case?pipeline=P&id=ID``: one case as the store has it (status, answer,
  failed thresholds, every score).
* ``/compare?a=RUN&b=RUN``: run B against run A as its baseline: the verdict lines, the
  change of each compared mean with its interval and p-value (chart and table), and the
  cases whose status, answer or scores differ, side by side.

Every chart is SVG drawn on the server (:mod:`pytest_ragproof.reporting.svg`), readable
without the page's script. The store is only read.

This module lists the routes; each page is its own module (:mod:`.history_runs`,
:mod:`.history_run`, :mod:`.history_compare`) over :mod:`.history_common`.
"""

from __future__ import annotations

from starlette.routing import Route

from pytest_ragproof.review.app import Area
from pytest_ragproof.review.history_common import AREA, HistoryView
from pytest_ragproof.review.history_compare import compare_page
from pytest_ragproof.review.history_run import case_page, run_page
from pytest_ragproof.review.history_runs import runs_page
from pytest_ragproof.review.layout import NavItem

__all__ = ["HistoryView", "history_area"]


def history_area(view: HistoryView) -> Area:
    return Area(
        name=AREA,
        routes=[
            Route("/runs", runs_page),
            # ``path``: a run id may hold a slash (percent-encoded in the links, decoded by
            # the server before routing); a case link names its case in the query.
            Route("/runs/{run:path}/case", case_page),
            Route("/runs/{run:path}", run_page),
            Route("/compare", compare_page),
        ],
        nav=[NavItem("Runs", "/runs", AREA), NavItem("Compare", "/compare", AREA)],
        home="/runs",
        state={"history_view": view},
    )
