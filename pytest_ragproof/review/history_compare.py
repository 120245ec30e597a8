"""The Compare page (``/compare?a=RUN&b=RUN``): run B against run A as its baseline.

The verdict lines, the change of each compared mean with its interval and p-value (a
chart drawn by :func:`pytest_ragproof.reporting.svg.delta_chart`, and a table), and
the cases whose status, answer or scores differ, side by side. Without ``a`` the
baseline is the run before B. The markup is the template ``review/compare.html.j2``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import RunComparison, RunSummary, compare_runs, list_runs
from pytest_ragproof.reporting.svg import DeltaRow, delta_chart
from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.history_common import (
    AREA,
    fmt,
    run_href,
    signed,
    view_of,
)
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


def _side(run: RunSummary) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "href": run_href(run.run_id),
        "verdict": run.verdict,
        "facts": f"{run.time} · commit {run.git_commit or 'unknown'}"
        + (f" ({run.git_branch})" if run.git_branch else "")
        + f" · {run.dataset_label} · {run.n_passed}/{run.n_cases} passed",
    }


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
    changes = [
        {
            "pipeline": a.pipeline,
            "label": a.label,
            "n": a.n,
            "a": fmt(a.baseline_mean),
            "b": fmt(a.current_mean),
            "delta": signed(a.delta),
            "interval": "–"
            if a.interval is None
            else f"[{signed(a.interval.low)}, {signed(a.interval.high)}]",
            "test": "–" if a.test is None else a.test.method,
            "p": "–" if a.test is None else f"{a.test.p_value:.3g}",
            "verdict": a.verdict,
            "verdict_class": a.verdict.replace(" ", "-"),
        }
        for a in comparison.aggregates
    ]
    cases = [
        {
            "case_id": d.case_id,
            "pipeline": d.pipeline,
            "kind": d.kind,
            "status_a": d.status_a,
            "status_b": d.status_b,
            "answer_a": d.answer_a,
            "answer_b": d.answer_b,
            "scores_a": [(m, fmt(pair[0])) for m, pair in d.scores.items()],
            "scores_b": [(m, fmt(pair[1])) for m, pair in d.scores.items()],
        }
        for d in result.cases
    ]
    title = f"change of each compared mean, {result.b.run_id} against {result.a.run_id}"
    body = render(
        "review/compare.html.j2",
        a=_side(result.a),
        b=_side(result.b),
        lines="\n".join(result.lines),
        chart=delta_chart(title, rows) if rows else None,
        changes=changes,
        cases=cases,
    )
    return page(request, title="Compare runs", area=AREA, body=body)
