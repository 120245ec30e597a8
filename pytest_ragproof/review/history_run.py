"""The Run page (``/runs/{run}``) and one stored case of it (``/runs/{run}/case``).

The Run page shows a run's facts, its gates and its cases, filtered by kind, status,
pipeline and text; each case links to its review page when this run is the results
file under review, else to what the store holds of it (status, answer, failed
thresholds, every score).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import CaseRow, run_cases
from pytest_ragproof.review.history_common import AREA, fmt, run_href, verdict_badge, view_of
from pytest_ragproof.review.html import Html, breakable, join, table, tag, th
from pytest_ragproof.review.layout import APP_KEY, message, page

__all__ = ["case_page", "run_page"]

KINDS = ("qa", "unanswerable", "injection")
STATUSES = ("passed", "failed", "error", "xfailed", "xpassed")


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
    return f"{run_href(run_id)}/case?" + urlencode({"pipeline": case.pipeline, "id": case.case_id})


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
    view = view_of(request)
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
                    class_="case-id",
                ),
                tag("td", c.pipeline),
                tag("td", c.kind),
                tag("td", c.question_type),
                tag("td", tag("span", c.status, class_=f"badge status-{c.status}")),
                [tag("td", fmt(c.scores.get(m)), class_="num") for m in metrics],
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
        ("verdict", verdict_badge(run)),
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
            tag("td", fmt(a["mean"]), class_="num"),
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
            tag(
                "p",
                tag(
                    "a",
                    "compare with the run before",
                    href="/compare?" + urlencode({"a": "", "b": run.run_id}),
                ),
            ),
            # join, not +: str + str is a plain str, which join would escape as text
            join(
                [
                    tag("h2", "Gates"),
                    table(("pipeline", "selector", "metric", "mean", "bound", "verdict"), gates),
                ]
            )
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
            tag(
                "div",
                table(
                    [
                        "case",
                        "pipeline",
                        "kind",
                        "type",
                        "status",
                        *(th(breakable(m), class_="num") for m in metrics),
                        "failed thresholds / error",
                    ],
                    rows,
                    id="cases",
                ),
                class_="table-scroll",
            ),
        ]
    )
    return page(request, title=f"Run {run.run_id}", area=AREA, body=body)


def case_page(request: Request) -> Response:
    view = view_of(request)
    ref = request.path_params["run"]
    if "pipeline" not in request.query_params and "id" not in request.query_params:
        # No case named: the page of a run whose id ends in "/case" (a case link always
        # names its case).
        request.scope["path_params"] = {"run": f"{ref}/case"}
        return run_page(request)
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
        tag("tr", tag("th", m), tag("td", fmt(v), class_="num"))
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
                tag("p", f"latency {fmt(case.latency_s)} s", class_="muted"),
            ),
        ]
    )
    return page(request, title=f"{case.case_id} in {detail.run.run_id}", area=AREA, body=body)
