"""The areas of each kind of review session, for :func:`.app.create_app`."""

from __future__ import annotations

from pytest_ragproof.review.agreement import agreement_area
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.cases import cases_area
from pytest_ragproof.review.dataset import DatasetReview, dataset_area
from pytest_ragproof.review.results import ResultsReview

__all__ = ["dataset_areas", "results_areas"]


def results_areas(review: ResultsReview) -> list[Area]:
    """A results review: the case pages and the agreement page."""
    return [cases_area(review), agreement_area(review)]


def dataset_areas(review: DatasetReview) -> list[Area]:
    """A dataset review: the generated cases."""
    return [dataset_area(review)]
