"""The case pages of a results review: one per case and pipeline, human verdicts as labels.

Routes: ``/cases`` (the list, with the filters), ``/case/{n}`` (case ``n``, 1-based in
the results' order), ``POST /case/{n}/label`` (one verdict on one judged metric,
appended to the labels file) and ``POST /case/{n}/undo`` (appends a withdrawal,
``verdict: null``, of this reviewer's latest label on the case).

Keys: ``y``/``n`` answer the current metric (the first not yet labelled; ↑/↓ move),
``j``/``k`` (or →/←) next/previous case, ``s`` the next case not yet reviewed,
``u`` undo.

This module gathers what the list and the case page show (the case page's links in a
:class:`Pager`) and lists the routes; the markup is the templates ``review/cases.html.j2``
and ``review/case.html.j2``; the parts of a case come from :mod:`.cases_parts`, the
verdict forms and their writes from :mod:`.cases_labels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.cases_common import (
    AREA,
    case_href,
    filter_of,
    no_such_case,
    review_of,
    reviewer_of,
)
from pytest_ragproof.review.cases_labels import label as post_label
from pytest_ragproof.review.cases_labels import metric_row
from pytest_ragproof.review.cases_labels import undo as post_undo
from pytest_ragproof.review.cases_parts import contexts_of, conversation_of, scores_of
from pytest_ragproof.review.html import Html
from pytest_ragproof.review.layout import (
    NavItem,
    all_done,
    hidden_token,
    keys,
    page,
    progress,
    steps,
)
from pytest_ragproof.review.order import following, neighbours
from pytest_ragproof.review.results import FILTERS, ResultsReview, Snapshot

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case

__all__ = ["case_href", "cases_area"]


@dataclass(frozen=True)
class Pager:
    """Where the case page's links and keys lead: the previous and next case of the
    filter, the next not yet reviewed, and the list (hrefs; None: nowhere to go)."""

    n: int
    total: int
    prev: str | None
    next: str | None
    skip: str | None
    list: str


def pager_of(snapshot: Snapshot, show: str, index: int) -> Pager:
    """The pager of case ``index`` (0-based) under the filter ``show``."""
    before, after = neighbours(snapshot.sequence, snapshot.order(show), index)
    skip = following(snapshot.sequence, snapshot.order("unreviewed"), index)

    def href(i: int | None) -> str | None:
        return None if i is None else case_href(i + 1, show)

    return Pager(
        n=index + 1,
        total=len(snapshot.cases),
        prev=href(before),
        next=href(after),
        skip=href(skip),
        list="/cases" + (f"?filter={show}" if show != "all" else ""),
    )


def _filters(snapshot: Snapshot, show: str, n: int | None) -> Html:
    links = []
    for name, label in FILTERS.items():
        order = snapshot.order(name)
        target = n if n is not None and (n - 1) in order else (order[0] + 1 if order else None)
        href = (
            (case_href(target, name) if target else f"/cases?filter={name}")
            if n
            else (f"/cases?filter={name}" if name != "all" else "/cases")
        )
        links.append(
            {
                "href": href,
                "active": name == show,
                "name": name,
                "label": label,
                "count": len(order),
            }
        )
    return render("review/filters.html.j2", filters=links)


async def list_page(request: Request) -> Response:
    review = review_of(request)
    snapshot = review.snapshot(reviewer_of(request))
    show = filter_of(request.query_params.get("filter"))
    rows = []
    for i in snapshot.order(show):
        case = snapshot.cases[i]
        mine = [
            snapshot.state.label_of(snapshot.reviewer, case.id, case.pipeline, m)
            for m, _ in snapshot.metrics[i]
        ]
        rows.append(
            {
                "id": case.id,
                "href": case_href(i + 1, show),
                "pipeline": case.pipeline,
                "kind": case.kind,
                "status": case.status,
                "judged": len(snapshot.metrics[i]),
                "labelled": sum(1 for m in mine if m is not None),
                "disagreement": snapshot.disagreement(i),
            }
        )
    done, total = snapshot.progress()
    state = snapshot.state
    summary = [f"labels: {review.labels_path.name}", f"{len(state.fresh)} counted"]
    if state.stale:
        summary.append(f"{len(state.stale)} stale (not counted)")
    if state.unmatched:
        summary.append(f"{len(state.unmatched)} of cases not in these results")
    body = render(
        "review/cases.html.j2",
        results_name=review.results_path.name,
        progress=progress(done, total, "judged case(s) reviewed"),
        all_reviewed=_all_reviewed(review, snapshot),
        labels_path=str(review.labels_path),
        label_summary=" · ".join(summary),
        filters=_filters(snapshot, show, None),
        rows=rows,
    )
    return page(request, title="Cases", area=AREA, body=body)


def _all_reviewed(review: ResultsReview, snapshot: Snapshot) -> Html:
    """Once this reviewer labelled every judged case: how many, and the judge-check command."""
    done, total = snapshot.progress()
    if not total or done < total:
        return Html("")
    return all_done(
        f"All {total} judged case(s) reviewed by you.",
        "Next, measure the judges against the labels",
        [
            "ragproof",
            "judge-check",
            "--results",
            str(review.results_path),
            "--labels",
            str(review.labels_path),
        ],
    )


def _case_view(case: Case) -> dict[str, Any]:
    """The fields of a case the page shows (the template escapes every one)."""
    return {
        "id": case.id,
        "pipeline": case.pipeline,
        "kind": case.kind,
        "question_type": case.question_type,
        "status": case.status,
        "question": case.question,
        "answer": case.answer,
        "expected_answer": case.expected_answer,
        "expected_sources": ", ".join(case.expected_source_ids),
        "reference_contexts": list(case.reference_contexts),
        "adversarial_payload": case.adversarial_payload,
        "canary": case.canary,
    }


async def case_page(request: Request) -> Response:
    review = review_of(request)
    snapshot = review.snapshot(reviewer_of(request))
    show = filter_of(request.query_params.get("filter"))
    n = int(request.path_params["n"])
    missing = no_such_case(request, snapshot, n)
    if missing is not None:
        return missing
    index = n - 1
    case = snapshot.cases[index]
    pager = pager_of(snapshot, show, index)
    metrics = snapshot.metrics[index]
    first_open = next(
        (
            m
            for m, _ in metrics
            if snapshot.state.label_of(snapshot.reviewer, case.id, case.pipeline, m) is None
        ),
        metrics[0][0] if metrics else None,
    )
    done, total = snapshot.progress()
    body = render(
        "review/case.html.j2",
        case=_case_view(case),
        n=n,
        show=show,
        pager=pager,
        progress=progress(done, total, "judged case(s) reviewed"),
        all_reviewed=_all_reviewed(review, snapshot),
        filters=_filters(snapshot, show, n),
        steps=(steps(n, pager.total, pager.prev, pager.next)),
        keys=keys(
            ("y / n", "yes / no on the current metric"),
            ("↑ / ↓", "another metric"),
            ("j / →", "next case"),
            ("k / ←", "previous case"),
            ("s", "next not yet reviewed"),
            ("u", "undo"),
        ),
        conversation=conversation_of(case),
        contexts=contexts_of(case),
        rows=[
            metric_row(request, snapshot, case, n, show, m, kind, m == first_open)
            for m, kind in metrics
        ],
        token_field=hidden_token(request),
        scores=scores_of(case, {m for m, _ in metrics}),
    )
    return page(request, title=f"{case.id} · {case.pipeline}", area=AREA, body=body)


def cases_area(review: ResultsReview) -> Area:
    snapshot = review.snapshot("")
    first = next(iter(snapshot.order("judged")), 0) + 1 if snapshot.cases else None
    return Area(
        name=AREA,
        routes=[
            Route("/cases", list_page),
            Route("/case/{n:int}", case_page),
            Route("/case/{n:int}/label", post_label, methods=["POST"]),
            Route("/case/{n:int}/undo", post_undo, methods=["POST"]),
        ],
        nav=[NavItem("Cases", "/cases", AREA)],
        home=case_href(first) if first else "/cases",
        state={"results_review": review},
    )
