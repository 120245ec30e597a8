"""What every case page of a results review shares: the area, its URLs, the filter, who reviews.

The case pages (:mod:`.cases`) and the labelling (:mod:`.cases_labels`) both link to a
case by :func:`case_href`, read the filter the same way and reach the review and the
reviewer of a request here.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request

from pytest_ragproof.review.layout import APP_KEY
from pytest_ragproof.review.results import FILTERS, ResultsReview

__all__ = ["AREA", "case_href", "filter_of", "review_of", "reviewer_of"]

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
