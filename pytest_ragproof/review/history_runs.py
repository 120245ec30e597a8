"""The Runs page (``/runs``): every run of the store, the headline trends, the compare form.

Above the list of runs (newest first, with verdict, case counts, dataset version,
commit and branch), one trend chart per headline or gated metric and pipeline over the
newest runs (``?last=N``), drawn as SVG on the server by
:func:`pytest_ragproof.reporting.svg.trend_chart`. The list is paginated,
:data:`PAGE_SIZE` runs a page (``?page=N``, 1 the newest); the compare form offers the
runs of the page shown.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import TrendSeries, count_runs, headline_trends, list_runs
from pytest_ragproof.metrics.selector import metric_label
from pytest_ragproof.reporting.svg import TrendMark, trend_chart
from pytest_ragproof.review.history_common import (
    AREA,
    fmt,
    run_href,
    run_label,
    short,
    verdict_badge,
    view_of,
)
from pytest_ragproof.review.html import Html, join, table, tag
from pytest_ragproof.review.layout import message, page

__all__ = ["runs_page"]

TREND_RUNS = 100  # the trends' default span: the newest runs
PAGE_SIZE = 50  # runs listed a page


def _trend_figure(series: TrendSeries) -> Html:
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
    return tag(
        "figure",
        tag("figcaption", tag("b", label), f" [{series.pipeline}]"),
        Html(svg),
        data_metric=label,
        data_pipeline=series.pipeline,
    )


def _last(request: Request) -> int:
    raw = request.query_params.get("last", "")
    return int(raw) if raw.isdigit() and int(raw) >= 2 else TREND_RUNS


def _page_number(request: Request, pages: int) -> int:
    raw = request.query_params.get("page", "")
    return min(int(raw), pages) if raw.isdigit() and int(raw) >= 1 else 1


def _pager(number: int, pages: int, last: int) -> Html:
    """Links to the newer and older pages, keeping the trends' span."""
    span = "" if last == TREND_RUNS else f"&last={last}"
    links: list[Html | str] = []
    if number > 1:
        links += [tag("a", "« newer", href=f"/runs?page={number - 1}{span}", rel="prev"), " "]
    links.append(tag("span", f"page {number} of {pages}", class_="muted"))
    if number < pages:
        links += [" ", tag("a", "older »", href=f"/runs?page={number + 1}{span}", rel="next")]
    return tag("nav", links, class_="pager", aria_label="pages of runs")


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
    if not runs:
        body = join(
            [
                tag("h1", "Runs"),
                tag(
                    "p",
                    f"The store {view.shown} holds no run yet: record runs with "
                    "--ragproof-history or add results files with `ragproof history add`.",
                    class_="note",
                ),
            ]
        )
        return page(request, title="Runs", area=AREA, body=body)
    rows = [
        tag(
            "tr",
            tag("td", tag("a", r.run_id, href=run_href(r.run_id))),
            tag("td", r.time.replace("T", " ").rstrip("Z"), title=r.time),
            tag("td", verdict_badge(r)),
            tag("td", r.n_cases, class_="num"),
            tag("td", r.n_passed, class_="num"),
            tag("td", r.n_failed, class_="num"),
            tag("td", r.n_error, class_="num"),
            tag("td", r.dataset_label),
            tag("td", tag("code", short(r.git_commit)), title=r.git_commit or "unknown"),
            tag("td", r.git_branch or ""),
            tag("td", ", ".join(r.pipelines)),
            data_run=r.run_id,
        )
        for r in runs
    ]
    headers = ["run", "time (UTC)", "verdict", "cases", "passed", "failed", "error"]
    headers += ["dataset", "commit", "branch", "pipelines"]
    choices = [tag("option", run_label(r), value=r.run_id) for r in runs]
    compare_form = tag(
        "form",
        tag("label", "baseline (A) ", tag("select", choices[1:] + choices[:1], name="a")),
        " ",
        tag("label", "against (B) ", tag("select", choices, name="b")),
        " ",
        tag("button", "Compare", type="submit"),
        action="/compare",
        method="get",
        class_="compare-form",
    )
    shown = min(last, total)
    first = (number - 1) * PAGE_SIZE + 1
    body = join(
        [
            tag("h1", "Runs"),
            tag(
                "p",
                f"{total} run(s) in {view.shown}; the trends span the newest {shown} "
                "(dots; a diamond where the gate failed; the dashed line is the gate's bound).",
                class_="muted",
            ),
            compare_form,
            tag("h2", "Trends"),
            tag("div", [_trend_figure(s) for s in trends], class_="charts", id="trends")
            if trends
            else tag("p", "No headline or gated metric in these runs.", class_="muted"),
            tag("h2", "Every run"),
            tag(
                "p",
                f"runs {first}-{first + len(runs) - 1} of {total}, newest first",
                class_="muted",
            ),
            table(headers, rows, id="runs"),
            _pager(number, pages, last),
        ]
    )
    return page(request, title="Runs", area=AREA, body=body)
