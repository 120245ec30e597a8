"""What every page of the dataset review shares: the review, the area, the order and URLs.

:class:`DatasetReview` is what the area reads (the reviewed file and, when given, the
corpus); the pages (:mod:`.dataset`), the source view (:mod:`.dataset_source`) and the
writes (:mod:`.dataset_writes`) reach it through :func:`review_of`, walk the cases in
the filter's order (:func:`order_of`) and link a case with :func:`dataset_href`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from pytest_ragproof.corpus.types import Corpus, Document
from pytest_ragproof.review.order import natural_order
from pytest_ragproof.review.reviewed import ReviewedFile

__all__ = [
    "AREA",
    "DatasetReview",
    "dataset_href",
    "order_of",
    "provenance_of",
    "review_of",
    "sequence_of",
    "show_of",
]

AREA = "dataset"


@dataclass
class DatasetReview:
    """The reviewed file and, when given, the corpus the cases were generated from."""

    reviewed: ReviewedFile
    corpus: Corpus | None = None

    def document(self, doc_id: str) -> Document | None:
        if self.corpus is None:
            return None
        return next((d for d in self.corpus.documents if d.id == doc_id), None)


def provenance_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    provenance = record.get("provenance")
    return provenance if isinstance(provenance, Mapping) else {}


def review_of(request: Request) -> DatasetReview:
    review: DatasetReview = request.app.state.dataset_review
    return review


def sequence_of(review: DatasetReview) -> list[int]:
    """0-based indexes of every case in the order the app lists them: by id, naturally
    (``qa-1, qa-3, qa-11``); the reviewed file keeps the input's order."""
    return natural_order([str(r["id"]) for r in review.reviewed.records])


def order_of(review: DatasetReview, show: str) -> list[int]:
    """0-based indexes of the cases the filter shows, in :func:`sequence_of`'s order."""
    every = sequence_of(review)
    if show == "pending":
        return [i for i in every if review.reviewed.status(i) == "pending"]
    return every


def dataset_href(n: int, show: str) -> str:
    return f"/dataset/{n}" + (f"?{urlencode({'show': show})}" if show != "all" else "")


def show_of(request: Request) -> str:
    show = request.query_params.get("show", "all")
    return show if show in ("all", "pending") else "all"
