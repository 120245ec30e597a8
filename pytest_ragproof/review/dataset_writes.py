"""The writes of the dataset review: ``POST /dataset/{n}/decide`` and ``/dataset/{n}/edit``.

Each decision (approve, reject, an edit that approves) goes to the reviewed file
(:mod:`.reviewed`), then leads to the next case the filter shows, else to the list;
the decision that leaves no case pending leads to the list, which says all is decided.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pytest_ragproof.errors import DatasetError
from pytest_ragproof.review.dataset_common import (
    AREA,
    DatasetReview,
    dataset_href,
    order_of,
    review_of,
    sequence_of,
)
from pytest_ragproof.review.layout import APP_KEY, message
from pytest_ragproof.review.order import following
from pytest_ragproof.review.reviewed import Decision, now

__all__ = ["decide", "edit"]


def _after(review: DatasetReview, index: int, show: str, was: str) -> Response:
    """Where a decision leads: to the list, which says all is decided, when it decided
    the last pending case; else to the next case the filter shows, else to the list."""
    if was == "pending" and not review.reviewed.counts()["pending"]:
        return RedirectResponse("/dataset", status_code=303)
    then = following(sequence_of(review), order_of(review, show), index)
    target = dataset_href(then + 1, show) if then is not None else "/dataset"
    return RedirectResponse(target, status_code=303)


def _writes(request: Request) -> tuple[DatasetReview, int, str] | Response:
    from pytest_ragproof.review.security import form_of

    review = review_of(request)
    n = request.path_params["n"]
    if not 1 <= n <= len(review.reviewed):
        return message(
            request,
            "No such case",
            f"there are {len(review.reviewed)} case(s)",
            area=AREA,
            status_code=404,
        )
    show = form_of(request).get("show", "all")
    return review, n - 1, show if show in ("all", "pending") else "all"


async def decide(request: Request) -> Response:
    from pytest_ragproof.review.security import form_of

    found = _writes(request)
    if isinstance(found, Response):
        return found
    review, index, show = found
    status = form_of(request).get("status", "")
    if status not in ("approved", "rejected", "pending"):
        return message(
            request,
            "Bad request",
            "status must be approved, rejected or pending",
            area=AREA,
            status_code=400,
        )
    reviewer = getattr(request.app.state, APP_KEY).reviewer
    was = review.reviewed.status(index)
    try:
        review.reviewed.decide(index, Decision(status), reviewer=reviewer, time=now())
    except DatasetError as exc:
        return message(request, "Not saved", str(exc), area=AREA, status_code=400)
    return _after(review, index, show, was)


async def edit(request: Request) -> Response:
    from pytest_ragproof.review.security import form_of

    found = _writes(request)
    if isinstance(found, Response):
        return found
    review, index, show = found
    form = form_of(request)
    edits: dict[str, Any] = {}
    for name in ("question", "expected_answer"):
        if name in form:
            edits[name] = form[name].replace("\r\n", "\n").strip()
    if "expected_source_ids" in form:
        edits["expected_source_ids"] = [
            line.strip() for line in form["expected_source_ids"].splitlines() if line.strip()
        ]
    if "kind" in form:
        if form["kind"] not in ("qa", "unanswerable"):
            return message(
                request,
                "Bad request",
                "kind must be qa or unanswerable",
                area=AREA,
                status_code=400,
            )
        edits["kind"] = form["kind"]
    record = review.reviewed.records[index]
    for name in ("expected_answer",):
        if edits.get(name) == "" and record.get(name) is None:
            edits[name] = None
    if edits.get("expected_source_ids") == [] and not record.get("expected_source_ids"):
        edits["expected_source_ids"] = record.get("expected_source_ids")
    reviewer = getattr(request.app.state, APP_KEY).reviewer
    was = review.reviewed.status(index)
    try:
        review.reviewed.decide(index, Decision("approved", edits), reviewer=reviewer, time=now())
    except DatasetError as exc:
        return message(request, "Not saved", str(exc), area=AREA, status_code=400)
    return _after(review, index, show, was)
