"""The Run page (``/runs/{run}``) and one stored case of it (``/runs/{run}/case``).

The Run page shows a run's facts, its gates and its cases, filtered by kind, status,
pipeline and text; each case links to its review page when this run is the results
file under review, else to what the store holds of it (status, answer, failed
thresholds, every score). The markup is the templates ``review/run.html.j2`` and
``review/run_case.html.j2``.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.history.queries import CaseRow, run_cases
from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.history_common import AREA, fmt, run_href, view_of
from pytest_ragproof.review.layout import APP_KEY, message, page

__all__ = ["case_page", "run_page"]

KINDS = ("qa", "unanswerable", "injection")
STATUSES = ("passed", "failed", "error", "xfailed", "xpassed")
METRICS = ("hit@5", "recall@5", "token_f1", "abstained", "injection_resisted")  # columns


def _review_links(request: Request, run_id: str) -> dict[tuple[str, str], str]:
    """(case id, pipeline) -> its case review page, when this run is the reviewed results."""
    review = getattr(request.app.state, "results_review", None)
    if review is None:
        return {}
    reviewer = str(getattr(request.app.state, APP_KEY).reviewer)
    snapshot = review.snapshot(reviewer)
    if (snapshot.results.run_id or "") != run_id:
        return {}
    return {(c.id, c.pipeline): f"/case/{i + 1}" for i, c in enumerate(snapshot.cases)}


def _store_case_href(run_id: str, case: CaseRow) -> str:
    return f"{run_href(run_id)}/case?" + urlencode({"pipeline": case.pipeline, "id": case.case_id})


def _matches(case: CaseRow, text: str) -> bool:
    haystack = " ".join(
        [case.case_id, case.question_type, *case.tags, case.answer or "", *case.failures]
    ).lower()
    return all(word in haystack for word in text.lower().split())


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
    rows = []
    for c in cases:
        review = links.get((c.case_id, c.pipeline))
        rows.append(
            {
                "case_id": c.case_id,
                "href": review or _store_case_href(run.run_id, c),
                "link_class": "review" if review else "stored",
                "pipeline": c.pipeline,
                "kind": c.kind,
                "question_type": c.question_type,
                "status": c.status,
                "scores": [fmt(c.scores.get(m)) for m in METRICS],
                "failed": ", ".join(c.failures) or (c.error_type or ""),
            }
        )
    facts = [
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
        {
            "pipeline": a["pipeline"],
            "selector": a["selector"],
            "metric": a["metric"],
            "mean": fmt(a["mean"]),
            "bound": a["bound"],
            "verdict": a["verdict"],
        }
        for a in detail.aggregates
        if a.get("bound")
    ]
    body = render(
        "review/run.html.j2",
        run=run,
        facts=facts,
        compare_href="/compare?" + urlencode({"a": "", "b": run.run_id}),
        gates=gates,
        run_href=run_href(run.run_id),
        text=text,
        kinds=KINDS,
        kind=kind or "",
        statuses=STATUSES,
        status=status or "",
        pipelines=run.pipelines,
        pipeline=pipeline or "",
        shown=len(cases),
        where="each case links to its review page (this run is the results file under review)"
        if links
        else "each case links to what the store holds of it",
        metrics=METRICS,
        cases=rows,
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
    facts = f"pipeline {case.pipeline} · {case.kind} · {case.question_type} · dataset "
    facts += f"{case.dataset}" + (f" · tags {', '.join(case.tags)}" if case.tags else "")
    body = render(
        "review/run_case.html.j2",
        run_id=detail.run.run_id,
        run_href=run_href(detail.run.run_id),
        case=case,
        facts=facts,
        scores=[(m, fmt(v)) for m, v in sorted(case.scores.items())],
        latency=fmt(case.latency_s),
    )
    return page(request, title=f"{case.case_id} in {detail.run.run_id}", area=AREA, body=body)
