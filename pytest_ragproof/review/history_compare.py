"""The Compare page (``/compare?a=RUN&b=RUN``): run B against run A as its baseline.

The verdict lines, the change of each compared mean with its interval and p-value (a
chart drawn by :func:`pytest_ragproof.reporting.svg.delta_chart`, and a table), and
the cases whose status, answer or scores differ, side by side. Without ``a`` the
baseline is the run before B.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import RunComparison, RunSummary, compare_runs, list_runs
from pytest_ragproof.reporting.svg import DeltaRow, delta_chart
from pytest_ragproof.review.history_common import (
    AREA,
    fmt,
    run_href,
    signed,
    verdict_badge,
    view_of,
)
from pytest_ragproof.review.html import Html, join, table, tag
from pytest_ragproof.review.layout import message, page

__all__ = ["compare_page"]


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
            spread = f"{100 * a.interval.level:g}% [{signed(low)}, {signed(high)}]"
        text = f"{signed(a.delta)} · {spread} · {p} · {a.verdict}"
        rows.append(DeltaRow(label, a.delta, low, high, text, a.verdict))
    return rows


def _side(run: RunSummary, name: str) -> Html:
    return tag(
        "section",
        tag(
            "h2",
            f"{name}: ",
            tag("a", run.run_id, href=run_href(run.run_id)),
            " ",
            verdict_badge(run),
        ),
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
            tag("div", tag("span", m, class_="muted"), f" {fmt(pair[side])}")
            for m, pair in scores.items()
        ]
    )


def compare_page(request: Request) -> Response:
    view = view_of(request)
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
            tag("td", fmt(a.baseline_mean), class_="num"),
            tag("td", fmt(a.current_mean), class_="num"),
            tag("td", signed(a.delta), class_="num"),
            tag(
                "td",
                "–"
                if a.interval is None
                else f"[{signed(a.interval.low)}, {signed(a.interval.high)}]",
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
