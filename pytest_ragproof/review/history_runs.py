"""The Runs page (``/runs``): every run of the store, the headline trends, the compare form.

Above the list of runs (newest first, with verdict, case counts, dataset version,
commit and branch), one trend chart per headline or gated metric and pipeline over the
newest runs (``?last=N``), drawn as SVG on the server by
:func:`pytest_ragproof.reporting.svg.trend_chart`. The list is paginated,
:data:`PAGE_SIZE` runs a page (``?page=N``, 1 the newest); the compare form offers the
runs of the page shown. The markup is the template ``review/runs.html.j2``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import TrendSeries, count_runs, headline_trends, list_runs
from pytest_ragproof.metrics.selector import metric_label
from pytest_ragproof.reporting.svg import TrendMark, trend_chart
from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.history_common import (
    AREA,
    fmt,
    run_href,
    run_label,
    short,
    view_of,
)
from pytest_ragproof.review.layout import message, page

__all__ = ["runs_page"]

TREND_RUNS = 100  # the trends' default span: the newest runs
PAGE_SIZE = 50  # runs listed a page


def _trend(series: TrendSeries) -> dict[str, Any]:
    """One trend chart: its label, pipeline and SVG (markup the chart module escaped)."""
    label = metric_label(series.selector, series.metric)
    title = f"{label} [{series.pipeline}]"
    marks = []
    for p in series.points:
        where = f" ({short(p.git_commit)})" if p.git_commit else ""
        gate = f", gate {p.bound}: {p.verdict}" if p.bound else ""
        marks.append(
            TrendMark(
                p.mean,
                f"{p.run_id}{where}: {fmt(p.mean)} (n {p.n}){gate}",
                failed=p.verdict == "fail",
            )
        )
    values = [p.mean for p in series.points if p.mean is not None]
    caption = f"{len(series.points)} run(s)"
    if values:
        caption += f" · min {min(values):.3g} · max {max(values):.3g}"
    svg = trend_chart(title, marks, bound=series.bound_value, caption=caption)
    return {"label": label, "pipeline": series.pipeline, "svg": svg}


def _last(request: Request) -> int:
    raw = request.query_params.get("last", "")
    return int(raw) if raw.isdigit() and int(raw) >= 2 else TREND_RUNS


def _page_number(request: Request, pages: int) -> int:
    raw = request.query_params.get("page", "")
    return min(int(raw), pages) if raw.isdigit() and int(raw) >= 1 else 1


def runs_page(request: Request) -> Response:
    view = view_of(request)
    last = _last(request)
    try:
        total = count_runs(view.store)
        pages = max(1, -(-total // PAGE_SIZE))
        number = _page_number(request, pages)
        runs = list_runs(view.store, limit=PAGE_SIZE, offset=(number - 1) * PAGE_SIZE)
        trends = headline_trends(view.store, last=last)
    except RagproofError as exc:
        return message(request, "History store unreadable", str(exc), area=AREA, status_code=500)
    rows = [
        {
            "run_id": r.run_id,
            "label": run_label(r),
            "href": run_href(r.run_id),
            "time": r.time,
            "time_shown": r.time.replace("T", " ").rstrip("Z"),
            "verdict": r.verdict,
            "n_cases": r.n_cases,
            "n_passed": r.n_passed,
            "n_failed": r.n_failed,
            "n_error": r.n_error,
            "dataset": r.dataset_label,
            "commit": short(r.git_commit),
            "commit_title": r.git_commit or "unknown",
            "branch": r.git_branch or "",
            "pipelines": ", ".join(r.pipelines),
        }
        for r in runs
    ]
    body = render(
        "review/runs.html.j2",
        shown=view.shown,
        runs=rows,
        total=total,
        span=min(last, total),
        trends=[_trend(s) for s in trends] if runs else [],
        first=(number - 1) * PAGE_SIZE + 1,
        number=number,
        pages=pages,
        # the pager's links keep the trends' span
        span_query="" if last == TREND_RUNS else f"&last={last}",
    )
    return page(request, title="Runs", area=AREA, body=body)
