"""The dataset review area: each generated case with its source span, approve/reject/edit.

Routes: ``/dataset`` (the list), ``/dataset/{n}`` (one case, 1-based), and the writes
``POST /dataset/{n}/decide`` (approve or reject) and ``POST /dataset/{n}/edit``.
Every write goes to the reviewed file (:mod:`.reviewed`), then to the next case.
Keys: ``a`` approve, ``r`` reject, ``e`` edit, ``j``/``k`` (or arrows) next/previous.

This module gathers what the list and the case page show and lists the routes; the
markup is the templates ``review/dataset_list.html.j2`` and ``review/dataset_case.html.j2``;
the source span and provenance come from :mod:`.dataset_source`, the writes from
:mod:`.dataset_writes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.dataset_common import (
    AREA,
    DatasetReview,
    dataset_href,
    order_of,
    provenance_of,
    review_of,
    sequence_of,
    show_of,
)
from pytest_ragproof.review.dataset_source import (
    corpus_note,
    edits_table,
    provenance_table,
    source_of,
)
from pytest_ragproof.review.dataset_trace import trace_of, trace_panel, unanswerable_form
from pytest_ragproof.review.dataset_writes import decide as post_decide
from pytest_ragproof.review.dataset_writes import edit as post_edit
from pytest_ragproof.review.html import Html
from pytest_ragproof.review.layout import (
    NavItem,
    all_done,
    hidden_token,
    keys,
    message,
    page,
    progress,
    side,
    steps,
)
from pytest_ragproof.review.order import neighbours
from pytest_ragproof.review.reviewed import imported

__all__ = ["DatasetReview", "dataset_area"]


async def list_page(request: Request) -> Response:
    review = review_of(request)
    reviewed = review.reviewed
    rows = []
    for i in sequence_of(review):
        record = reviewed.records[i]
        rows.append(
            {
                "id": record["id"],
                "href": dataset_href(i + 1, "all"),
                "kind": record.get("kind"),
                "question_type": record.get("question_type"),
                "status": reviewed.status(i),
                "confidence": _confidence(provenance_of(record)),
                "question": record.get("question"),
            }
        )
    counts = reviewed.counts()
    body = render(
        "review/dataset_list.html.j2",
        source_name=reviewed.source.name,
        progress=progress(reviewed.decided(), len(reviewed), "case(s) decided"),
        all_decided=_all_decided(review),
        output=str(reviewed.output),
        resumed=reviewed.resumed,
        counts=", ".join(f"{n} {s}" for s, n in counts.items()),
        corpus_note=corpus_note(review),
        rows=rows,
    )
    return page(request, title="Dataset review", area=AREA, body=body)


def _all_decided(review: DatasetReview) -> Html:
    """Once no case is pending: how many were decided how, and the freeze command."""
    reviewed = review.reviewed
    counts = reviewed.counts()
    if not len(reviewed) or counts["pending"]:
        return Html("")
    how = ", ".join(f"{n} {status}" for status, n in counts.items() if n and status != "pending")
    return all_done(
        f"All {len(reviewed)} case(s) decided ({how}).",
        "Next, freeze the approved and edited cases",
        ["ragproof", "freeze", str(reviewed.output), "--approved-only"],
    )


def _confidence(provenance: Mapping[str, Any]) -> str:
    value = provenance.get("confidence")
    return f"{value:.2f}" if isinstance(value, int | float) else "–"


async def case_page(request: Request) -> Response:
    review = review_of(request)
    reviewed = review.reviewed
    show = show_of(request)
    n = request.path_params["n"]
    if not 1 <= n <= len(reviewed):
        return message(
            request,
            "No such case",
            f"there are {len(reviewed)} case(s)",
            area=AREA,
            status_code=404,
        )
    index = n - 1
    record = reviewed.records[index]
    before, after = neighbours(sequence_of(review), order_of(review, show), index)
    prev_href = None if before is None else dataset_href(before + 1, show)
    next_href = None if after is None else dataset_href(after + 1, show)
    provenance = provenance_of(record)
    trace = trace_of(record) if imported(record) else None
    token = hidden_token(request)
    sources = [str(s) for s in record.get("expected_source_ids") or []]
    case = {
        "id": record["id"],
        "kind": record.get("kind"),
        "question_type": record.get("question_type"),
        "history": [
            {"role": f"{t.get('role')}: ", "content": t.get("content")}
            for t in record.get("conversation_history") or []
            if isinstance(t, dict)
        ],
        "question": record.get("question"),
        "expected_answer": record.get("expected_answer"),
        "sources": ", ".join(sources),
        "source_lines": "\n".join(sources),
        "adversarial_payload": record.get("adversarial_payload"),
    }
    body = render(
        "review/dataset_case.html.j2",
        case=case,
        n=n,
        show=show,
        status=reviewed.status(index),
        prev=prev_href,
        next=next_href,
        token_field=token,
        progress=progress(reviewed.decided(), len(reviewed), "case(s) decided"),
        all_decided=_all_decided(review),
        steps=(steps(n, len(reviewed), prev_href, next_href)),
        all_href=dataset_href(n, "all"),
        pending_href=dataset_href(n, "pending"),
        keys=keys(
            ("a", "approve"),
            ("r", "reject"),
            ("e", "edit"),
            *(
                (
                    ("p", "production answer as expected"),
                    ("d", "retrieved ids as expected sources"),
                    ("u", "unanswerable"),
                )
                if trace is not None
                else ()
            ),
            ("j / →", "next"),
            ("k / ←", "previous"),
        ),
        unanswerable=unanswerable_form(token, n, show) if trace is not None else "",
        editable=bool(provenance) or imported(record),
        side=_side(record, provenance, trace),
        source=None
        if trace is not None or (not provenance and imported(record))
        else source_of(review, provenance),
    )
    return page(request, title=f"{record['id']} · dataset review", area=AREA, body=body)


def _side(
    record: Mapping[str, Any], provenance: Mapping[str, Any], trace: Mapping[str, Any] | None
) -> Html:
    """The right column: what production did (an imported trace), else the provenance."""
    metadata = record.get("metadata")
    edits = metadata.get("review_edits") if isinstance(metadata, Mapping) else None
    if trace is not None:
        return side(None, trace_panel(trace) + edits_table(edits), id="trace")
    if not provenance and imported(record):
        return side("Imported case", edits_table(edits))
    return side("Provenance", provenance_table(provenance))


def dataset_area(review: DatasetReview) -> Area:
    """The dataset review area over ``review`` (kept as ``app.state.dataset_review``)."""
    routes = [
        Route("/dataset", list_page),
        Route("/dataset/{n:int}", case_page),
        Route("/dataset/{n:int}/decide", post_decide, methods=["POST"]),
        Route("/dataset/{n:int}/edit", post_edit, methods=["POST"]),
    ]
    pending = order_of(review, "pending") or sequence_of(review)
    first_pending = pending[0] + 1 if pending else 1
    return Area(
        name=AREA,
        routes=routes,
        nav=[NavItem("Cases", "/dataset", AREA)],
        home=f"/dataset/{first_pending}",
        state={"dataset_review": review},
    )
