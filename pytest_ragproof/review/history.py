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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import (
    CaseRow,
    RunComparison,
    RunSummary,
    TrendSeries,
    compare_runs,
    headline_trends,
    list_runs,
    run_cases,
)
from pytest_ragproof.reporting.svg import DeltaRow, TrendMark, delta_chart, trend_chart
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.html import Html, join, table, tag, th
from pytest_ragproof.review.layout import APP_KEY, NavItem, message, page

if TYPE_CHECKING:
    from pytest_ragproof.history.store import Store

__all__ = ["HistoryView", "history_area"]

AREA = "history"
TREND_RUNS = 100  # the trends' default span: the newest runs
KINDS = ("qa", "unanswerable", "injection")
STATUSES = ("passed", "failed", "error", "xfailed", "xpassed")


@dataclass(frozen=True)
class HistoryView:
    """What the history pages read: the store, and how it was named (for the page)."""

    store: Store
    shown: str  # the store as the command was given it (never a password)


def _view(request: Request) -> HistoryView:
    view: HistoryView = request.app.state.history_view
    return view


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _signed(value: float | None) -> str:
    if value is None:
        return "–"
    return "0" if value == 0 else f"{value:+.3g}"


def _short(commit: str | None) -> str:
    return (commit or "")[:10]


def _verdict(run: RunSummary) -> Html:
    return tag("span", run.verdict, class_=f"badge status-{run.verdict}")


def run_href(run_id: str) -> str:
    return f"/runs/{run_id}"


def _run_label(run: RunSummary) -> str:
    commit = f" {_short(run.git_commit)}" if run.git_commit else ""
    return f"{run.run_id}{commit}"


# -- the Runs page -------------------------------------------------------------------------


def _trend_figure(series: TrendSeries) -> Html:
    label = series.metric if series.selector == "*" else f"{series.selector}:{series.metric}"
    title = f"{label} [{series.pipeline}]"
    marks = []
    for p in series.points:
        where = f" ({_short(p.git_commit)})" if p.git_commit else ""
        gate = f", gate {p.bound}: {p.verdict}" if p.bound else ""
        marks.append(
            TrendMark(
                p.mean,
                f"{p.run_id}{where}: {_fmt(p.mean)} (n {p.n}){gate}",
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


def runs_page(request: Request) -> Response:
    view = _view(request)
    last = _last(request)
    try:
        runs = list_runs(view.store)
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
            tag("td", _verdict(r)),
            tag("td", r.n_cases, class_="num"),
            tag("td", r.n_passed, class_="num"),
            tag("td", r.n_failed, class_="num"),
            tag("td", r.n_error, class_="num"),
            tag("td", r.dataset_label),
            tag("td", tag("code", _short(r.git_commit)), title=r.git_commit or "unknown"),
            tag("td", r.git_branch or ""),
            tag("td", ", ".join(r.pipelines)),
            data_run=r.run_id,
        )
        for r in runs
    ]
    headers = ["run", "time (UTC)", "verdict", "cases", "passed", "failed", "error"]
    headers += ["dataset", "commit", "branch", "pipelines"]
    choices = [tag("option", _run_label(r), value=r.run_id) for r in runs]
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
    shown = min(last, len(runs))
    body = join(
        [
            tag("h1", "Runs"),
            tag(
                "p",
                f"{len(runs)} run(s) in {view.shown}; the trends span the newest {shown} "
                "(dots; a diamond where the gate failed; the dashed line is the gate's bound).",
                class_="muted",
            ),
            compare_form,
            tag("h2", "Trends"),
            tag("div", [_trend_figure(s) for s in trends], class_="charts", id="trends")
            if trends
            else tag("p", "No headline or gated metric in these runs.", class_="muted"),
            tag("h2", "Every run"),
            table(headers, rows, id="runs"),
        ]
    )
    return page(request, title="Runs", area=AREA, body=body)


# -- the Run page --------------------------------------------------------------------------


def _review_links(request: Request, run_id: str) -> dict[tuple[str, str], str]:
    """(case id, pipeline) -> its case review page, when this run is the reviewed results."""
    review = getattr(request.app.state, "results_review", None)
    if review is None:
        return {}
    reviewer = str(getattr(request.app.state, APP_KEY).reviewer)
    snapshot = review.snapshot(reviewer)
    if str(snapshot.document.get("run_id") or "") != run_id:
        return {}
    return {
        (str(c.get("id")), str(c.get("pipeline"))): f"/case/{i + 1}"
        for i, c in enumerate(snapshot.cases)
    }


def _store_case_href(run_id: str, case: CaseRow) -> str:
    return f"/runs/{run_id}/case?" + urlencode({"pipeline": case.pipeline, "id": case.case_id})


def _matches(case: CaseRow, text: str) -> bool:
    haystack = " ".join(
        [case.case_id, case.question_type, *case.tags, case.answer or "", *case.failures]
    ).lower()
    return all(word in haystack for word in text.lower().split())


def _select(name: str, label: str, options: Sequence[str], current: str) -> Html:
    return tag(
        "label",
        f"{label} ",
        tag(
            "select",
            tag("option", "any", value=""),
            [tag("option", o, value=o, selected=o == current) for o in options],
            name=name,
        ),
    )


def run_page(request: Request) -> Response:
    view = _view(request)
    ref = request.path_params["run"]
    kind = request.query_params.get("kind") or None
    status = request.query_params.get("status") or None
    pipeline = request.query_params.get("pipeline") or None
    text = request.query_params.get("q", "").strip()
    try:
        detail = run_cases(view.store, ref, kind=kind, status=status, pipeline=pipeline)
    except RagproofError as exc:
        return message(request, "No such run", str(exc), area=AREA, status_code=404)
    run = detail.run
    cases = [c for c in detail.cases if not text or _matches(c, text)]
    links = _review_links(request, run.run_id)
    metrics = ("hit@5", "recall@5", "token_f1", "abstained", "injection_resisted")
    rows = []
    for c in cases:
        review = links.get((c.case_id, c.pipeline))
        rows.append(
            tag(
                "tr",
                tag(
                    "td",
                    tag(
                        "a",
                        c.case_id,
                        href=review or _store_case_href(run.run_id, c),
                        class_="review" if review else "stored",
                    ),
                ),
                tag("td", c.pipeline),
                tag("td", c.kind),
                tag("td", c.question_type),
                tag("td", tag("span", c.status, class_=f"badge status-{c.status}")),
                [tag("td", _fmt(c.scores.get(m)), class_="num") for m in metrics],
                tag("td", ", ".join(c.failures) or (c.error_type or "")),
                data_case=c.case_id,
            )
        )
    filters = tag(
        "form",
        tag("input", type="search", name="q", value=text, placeholder="id, tag, answer…"),
        " ",
        _select("kind", "kind", KINDS, kind or ""),
        " ",
        _select("status", "status", STATUSES, status or ""),
        " ",
        _select("pipeline", "pipeline", run.pipelines, pipeline or ""),
        " ",
        tag("button", "Filter", type="submit"),
        action=run_href(run.run_id),
        method="get",
        class_="filters",
    )
    where = (
        "each case links to its review page (this run is the results file under review)"
        if links
        else "each case links to what the store holds of it"
    )
    facts = [
        ("verdict", _verdict(run)),
        ("time (UTC)", run.time + ("" if run.time_known else " (when it was added)")),
        (
            "cases",
            f"{run.n_cases}: {run.n_passed} passed, {run.n_failed} failed, {run.n_error} error",
        ),
        ("dataset", run.dataset_label),
        (
            "commit",
            f"{run.git_commit or 'unknown'}" + (f" ({run.git_branch})" if run.git_branch else ""),
        ),
        ("pipelines", ", ".join(run.pipelines)),
        ("source", run.source),
    ]
    gates = [
        tag(
            "tr",
            tag("td", a["pipeline"]),
            tag("td", a["selector"]),
            tag("td", a["metric"]),
            tag("td", _fmt(a["mean"]), class_="num"),
            tag("td", a["bound"]),
            tag("td", a["verdict"]),
        )
        for a in detail.aggregates
        if a.get("bound")
    ]
    body = join(
        [
            tag("h1", f"Run {run.run_id}"),
            tag("table", [tag("tr", tag("th", k), tag("td", v)) for k, v in facts], class_="facts"),
            tag("p", tag("a", "compare with the run before", href=f"/compare?a=&b={run.run_id}")),
            tag("h2", "Gates")
            + table(("pipeline", "selector", "metric", "mean", "bound", "verdict"), gates)
            if gates
            else Html(""),
            tag("h2", "Cases"),
            filters,
            tag(
                "p",
                f"{len(cases)} of {run.n_cases} case(s) shown; {where}.",
                class_="muted",
                id="case-count",
            ),
            table(
                [
                    "case",
                    "pipeline",
                    "kind",
                    "type",
                    "status",
                    *(th(m, class_="num") for m in metrics),
                    "failed thresholds / error",
                ],
                rows,
                id="cases",
            ),
        ]
    )
    return page(request, title=f"Run {run.run_id}", area=AREA, body=body)


def case_page(request: Request) -> Response:
    view = _view(request)
    ref = request.path_params["run"]
    pipeline = request.query_params.get("pipeline", "")
    case_id = request.query_params.get("id", "")
    try:
        detail = run_cases(view.store, ref, pipeline=pipeline)
    except RagproofError as exc:
        return message(request, "No such run", str(exc), area=AREA, status_code=404)
    case = next((c for c in detail.cases if c.case_id == case_id), None)
    if case is None:
        return message(
            request,
            "No such case",
            f"run {detail.run.run_id} has no case {case_id!r} of pipeline {pipeline!r}",
            area=AREA,
            status_code=404,
        )
    scores = [
        tag("tr", tag("th", m), tag("td", _fmt(v), class_="num"))
        for m, v in sorted(case.scores.items())
    ]
    answer = (
        tag("p", case.answer, class_="text answer")
        if case.answer is not None
        else tag("p", "no answer stored (a redacted run, or the pipeline failed)", class_="muted")
    )
    body = join(
        [
            tag("p", tag("a", f"← run {detail.run.run_id}", href=run_href(detail.run.run_id))),
            tag(
                "h1",
                f"{case.case_id} ",
                tag("span", case.status, class_=f"badge status-{case.status}"),
            ),
            tag(
                "p",
                f"pipeline {case.pipeline} · {case.kind} · {case.question_type} · dataset "
                f"{case.dataset}" + (f" · tags {', '.join(case.tags)}" if case.tags else ""),
                class_="muted",
            ),
            tag(
                "p",
                "The store keeps a run's answers, scores and failed thresholds, not the "
                "questions: the dataset file has those.",
                class_="muted",
            ),
            tag("section", tag("h2", "Answer"), answer),
            tag(
                "section",
                tag("h2", "Failed thresholds"),
                tag("ul", [tag("li", f) for f in case.failures])
                if case.failures
                else tag("p", case.error_type or "none", class_="muted"),
            ),
            tag(
                "section",
                tag("h2", "Scores"),
                tag("table", scores, class_="figures"),
                tag("p", f"latency {_fmt(case.latency_s)} s", class_="muted"),
            ),
        ]
    )
    return page(request, title=f"{case.case_id} in {detail.run.run_id}", area=AREA, body=body)


# -- the Compare page ----------------------------------------------------------------------


def _delta_rows(result: RunComparison) -> list[DeltaRow]:
    rows = []
    several = len({a.pipeline for a in result.comparison.aggregates}) > 1
    for a in result.comparison.aggregates:
        if a.delta is None or a.baseline_mean is None or a.current_mean is None:
            continue
        if not (0.0 <= a.baseline_mean <= 1.0 and 0.0 <= a.current_mean <= 1.0):
            continue
        label = a.label + (f" [{a.pipeline}]" if several else "")
        p = "p –" if a.test is None else f"p {a.test.p_value:.3g}"
        if a.interval is None:
            spread = f"no interval ({a.n} pair)"
            low = high = None
        else:
            low, high = a.interval.low, a.interval.high
            spread = f"{100 * a.interval.level:g}% [{_signed(low)}, {_signed(high)}]"
        text = f"{_signed(a.delta)} · {spread} · {p} · {a.verdict}"
        rows.append(DeltaRow(label, a.delta, low, high, text, a.verdict))
    return rows


def _side(run: RunSummary, name: str) -> Html:
    return tag(
        "section",
        tag("h2", f"{name}: ", tag("a", run.run_id, href=run_href(run.run_id)), " ", _verdict(run)),
        tag(
            "p",
            f"{run.time} · commit {run.git_commit or 'unknown'}"
            + (f" ({run.git_branch})" if run.git_branch else "")
            + f" · {run.dataset_label} · {run.n_passed}/{run.n_cases} passed",
            class_="muted",
        ),
        class_=f"run-{name[0].lower()}",
    )


def _scores_cell(scores: Mapping[str, tuple[float | None, float | None]], side: int) -> Html:
    return join(
        [
            tag("div", tag("span", m, class_="muted"), f" {_fmt(pair[side])}")
            for m, pair in scores.items()
        ]
    )


def compare_page(request: Request) -> Response:
    view = _view(request)
    ref_b = request.query_params.get("b", "").strip() or "latest"
    ref_a = request.query_params.get("a", "").strip()
    try:
        if not ref_a:  # the run before B
            runs = list_runs(view.store)
            ids = [r.run_id for r in runs]
            from pytest_ragproof.history.queries import resolve_run

            b_id = resolve_run(view.store, ref_b).run_id
            position = ids.index(b_id)
            if position + 1 >= len(ids):
                return message(
                    request,
                    "Nothing to compare",
                    f"run {b_id} is the oldest run in the store: pick a baseline run (a=…)",
                    area=AREA,
                    status_code=404,
                )
            ref_a = ids[position + 1]
        result = compare_runs(view.store, ref_a, ref_b, allow_dataset_change=True)
    except RagproofError as exc:
        return message(request, "Cannot compare", str(exc), area=AREA, status_code=404)
    comparison = result.comparison
    rows = _delta_rows(result)
    table_rows = [
        tag(
            "tr",
            tag("td", a.pipeline),
            tag("td", a.label),
            tag("td", a.n, class_="num"),
            tag("td", _fmt(a.baseline_mean), class_="num"),
            tag("td", _fmt(a.current_mean), class_="num"),
            tag("td", _signed(a.delta), class_="num"),
            tag(
                "td",
                "–"
                if a.interval is None
                else f"[{_signed(a.interval.low)}, {_signed(a.interval.high)}]",
                class_="num",
            ),
            tag("td", "–" if a.test is None else a.test.method),
            tag("td", "–" if a.test is None else f"{a.test.p_value:.3g}", class_="num"),
            tag("td", a.verdict, class_=f"verdict-{a.verdict.replace(' ', '-')}"),
        )
        for a in comparison.aggregates
    ]
    case_rows = [
        tag(
            "tr",
            tag("td", d.case_id),
            tag("td", d.pipeline),
            tag("td", d.kind),
            tag("td", d.status_a or "–", class_=f"status-{d.status_a}"),
            tag("td", d.status_b or "–", class_=f"status-{d.status_b}"),
            tag("td", tag("div", d.answer_a, class_="text"), _scores_cell(d.scores, 0)),
            tag("td", tag("div", d.answer_b, class_="text"), _scores_cell(d.scores, 1)),
            data_case=d.case_id,
        )
        for d in result.cases
    ]
    chart = (
        Html(
            delta_chart(
                f"change of each compared mean, {result.b.run_id} against {result.a.run_id}", rows
            )
        )
        if rows
        else tag("p", "No metric was scored in both runs.", class_="muted")
    )
    body = join(
        [
            tag("h1", "Compare runs"),
            tag("div", _side(result.a, "A (baseline)"), _side(result.b, "B"), class_="grid two"),
            tag("pre", "\n".join(result.lines), class_="lines", id="verdict-lines"),
            tag("h2", "Per-metric changes (B − A)"),
            tag("figure", chart, id="deltas"),
            table(
                (
                    "pipeline",
                    "metric",
                    "paired n",
                    "A",
                    "B",
                    "delta",
                    "95% interval",
                    "test",
                    "p",
                    "verdict",
                ),
                table_rows,
                id="metric-changes",
            ),
            tag("h2", f"Cases that differ ({len(result.cases)})"),
            table(
                (
                    "case",
                    "pipeline",
                    "kind",
                    "A",
                    "B",
                    "A: answer, scores",
                    "B: answer, scores",
                ),
                case_rows,
                id="case-changes",
            )
            if case_rows
            else tag("p", "No case differs in status, answer or scores.", class_="muted"),
        ]
    )
    return page(request, title="Compare runs", area=AREA, body=body)


def history_area(view: HistoryView) -> Area:
    return Area(
        name=AREA,
        routes=[
            Route("/runs", runs_page),
            Route("/runs/{run}", run_page),
            Route("/runs/{run}/case", case_page),
            Route("/compare", compare_page),
        ],
        nav=[NavItem("Runs", "/runs", AREA), NavItem("Compare", "/compare", AREA)],
        home="/runs",
        state={"history_view": view},
    )
