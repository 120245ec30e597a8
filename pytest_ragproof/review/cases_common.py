"""What every case page of a results review shares: the area, its URLs, the filter, who reviews.

The case pages (:mod:`.cases`) and the labelling (:mod:`.cases_labels`) both link to a
case by :func:`case_href`, read the filter the same way and reach the review and the
reviewer of a request here.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from pytest_ragproof.review.layout import APP_KEY, message
from pytest_ragproof.review.results import FILTERS, ResultsReview, Snapshot

__all__ = ["AREA", "case_href", "filter_of", "no_such_case", "review_of", "reviewer_of"]

AREA = "cases"


def case_href(n: int, show: str = "all") -> str:
    return f"/case/{n}" + (f"?{urlencode({'filter': show})}" if show != "all" else "")


def review_of(request: Request) -> ResultsReview:
    review: ResultsReview = request.app.state.results_review
    return review


def reviewer_of(request: Request) -> str:
    return str(getattr(request.app.state, APP_KEY).reviewer)


def filter_of(value: str | None) -> str:
    return value if value in FILTERS else "all"


def no_such_case(request: Request, snapshot: Snapshot, n: int) -> Response | None:
    """The 404 page for a case number outside the results, else None."""
    if 1 <= n <= len(snapshot.cases):
        return None
    return message(
        request,
        "No such case",
        f"there are {len(snapshot.cases)} case(s)",
        area=AREA,
        status_code=404,
    )
