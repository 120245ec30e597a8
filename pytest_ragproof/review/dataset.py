"""The dataset review area: each generated case with its source span, approve/reject/edit.

Routes: ``/dataset`` (the list), ``/dataset/{n}`` (one case, 1-based), and the writes
``POST /dataset/{n}/decide`` (approve or reject) and ``POST /dataset/{n}/edit``.
Every write goes to the reviewed file (:mod:`.reviewed`), then to the next case.
Keys: ``a`` approve, ``r`` reject, ``e`` edit, ``j``/``k`` (or arrows) next/previous.

This module builds the list and the case page and lists the routes; the source span
and provenance come from :mod:`.dataset_source`, the writes from :mod:`.dataset_writes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

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
from pytest_ragproof.review.html import Html, join, table, tag
from pytest_ragproof.review.layout import (
    NavItem,
    all_done,
    hidden_token,
    keys,
    message,
    page,
    progress,
    steps,
)
from pytest_ragproof.review.order import neighbours
from pytest_ragproof.review.reviewed import imported

__all__ = ["DatasetReview", "dataset_area"]


def _status_badge(status: str) -> Html:
    return tag("span", status, class_=f"badge status-{status}")


async def list_page(request: Request) -> Response:
    review = review_of(request)
    reviewed = review.reviewed
    rows = []
    for i in sequence_of(review):
        record = reviewed.records[i]
        provenance = provenance_of(record)
        rows.append(
            tag(
                "tr",
                tag("td", tag("a", record["id"], href=dataset_href(i + 1, "all"))),
                tag("td", record.get("kind")),
                tag("td", record.get("question_type")),
                tag("td", _status_badge(reviewed.status(i))),
                tag("td", _confidence(provenance)),
                tag("td", record.get("question"), class_="text"),
            )
        )
    counts = reviewed.counts()
    body = join(
        [
            tag("h1", f"Dataset review: {reviewed.source.name}"),
            progress(reviewed.decided(), len(reviewed), "case(s) decided"),
            _all_decided(review),
            tag(
                "p",
                f"writing {reviewed.output}",
                " (resumed)" if reviewed.resumed else "",
                " · ",
                ", ".join(f"{n} {s}" for s, n in counts.items()),
                class_="muted",
            ),
            corpus_note(review),
            table(
                ("case", "kind", "type", "status", "confidence", "question"), rows, class_="list"
            ),
        ]
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
    prev_n = None if before is None else before + 1
    next_n = None if after is None else after + 1
    provenance = provenance_of(record)
    trace = trace_of(record) if imported(record) else None
    status = reviewed.status(index)
    token = hidden_token(request)
    history = record.get("conversation_history") or []
    conversation = (
        tag(
            "ol",
            [
                tag(
                    "li",
                    tag("b", f"{t.get('role')}: "),
                    tag("span", t.get("content"), class_="text"),
                )
                for t in history
                if isinstance(t, dict)
            ],
            class_="conversation",
        )
        if history
        else Html("")
    )
    sources = record.get("expected_source_ids") or []
    fields = join(
        [
            tag("h2", "Question"),
            conversation,
            tag("p", record.get("question"), class_="text", id="question"),
            tag("h2", "Expected answer"),
            tag(
                "p", record.get("expected_answer") or "(none)", class_="text", id="expected-answer"
            ),
            tag("h2", "Expected sources"),
            tag("p", ", ".join(sources) or "(none)", id="expected-sources"),
            (
                join(
                    [
                        tag("h2", "Planted payload"),
                        tag("p", record.get("adversarial_payload"), class_="text"),
                    ]
                )
                if record.get("adversarial_payload")
                else ""
            ),
        ]
    )
    edit_form = (
        tag(
            "form",
            token,
            tag("input", type="hidden", name="show", value=show),
            _text_field("Question", record.get("question") or "", "question", "edit-question"),
            _text_field(
                "Expected answer",
                record.get("expected_answer") or "",
                "expected_answer",
                "edit-expected-answer",
            ),
            _text_field(
                "Expected sources (one document id a line)",
                "\n".join(sources),
                "expected_source_ids",
                "edit-expected-sources",
                rows=2,
            ),
            tag("button", "Save edit (Ctrl+Enter)", type="submit"),
            method="post",
            action=f"/dataset/{n}/edit",
            id="edit",
            class_="edit",
        )
        if provenance or imported(record)
        else tag(
            "p", "hand-written case (no provenance): approve or reject it here", class_="muted"
        )
    )

    def decide(status_value: str, label: str, key: str) -> Html:
        return tag(
            "form",
            token,
            tag("input", type="hidden", name="status", value=status_value),
            tag("input", type="hidden", name="show", value=show),
            tag("button", label, " ", tag("kbd", key), type="submit"),
            method="post",
            action=f"/dataset/{n}/decide",
            id=status_value,
            class_="decide",
        )

    body = join(
        [
            tag(
                "header",
                tag("h1", record["id"]),
                tag("span", record.get("kind"), class_="badge"),
                tag("span", record.get("question_type"), class_="badge")
                if record.get("question_type")
                else "",
                _status_badge(status),
                class_="case-head",
            ),
            progress(reviewed.decided(), len(reviewed), "case(s) decided"),
            _all_decided(review),
            _pager(n, len(reviewed), prev_n, next_n, show),
            keys(
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
            tag(
                "section",
                decide("approved", "Approve", "a"),
                decide("rejected", "Reject", "r"),
                unanswerable_form(token, n, show) if trace is not None else "",
                tag("details", tag("summary", "Edit ", tag("kbd", "e")), edit_form, id="edit-box"),
                class_="actions",
            ),
            tag(
                "div",
                tag("section", fields, class_="fields"),
                _side(record, provenance, trace),
                class_="grid",
            ),
            ""
            if trace is not None or (not provenance and imported(record))
            else join([tag("h2", "Source span"), source_of(review, provenance)]),
        ]
    )
    section = tag(
        "div",
        body,
        class_="review dataset",
        data_prev=dataset_href(prev_n, show) if prev_n else None,
        data_next=dataset_href(next_n, show) if next_n else None,
    )
    return page(request, title=f"{record['id']} · dataset review", area=AREA, body=section)


def _side(
    record: Mapping[str, Any], provenance: Mapping[str, Any], trace: Mapping[str, Any] | None
) -> Html:
    """The right column: what production did (an imported trace), else the provenance."""
    metadata = record.get("metadata")
    edits = metadata.get("review_edits") if isinstance(metadata, Mapping) else None
    if trace is not None:
        return tag("section", trace_panel(trace), edits_table(edits), class_="side", id="trace")
    if not provenance and imported(record):
        return tag("section", tag("h2", "Imported case"), edits_table(edits), class_="side")
    return tag("section", tag("h2", "Provenance"), provenance_table(provenance), class_="side")


def _pager(n: int, total: int, prev_n: int | None, next_n: int | None, show: str) -> Html:
    return tag(
        "p",
        steps(
            n,
            total,
            dataset_href(prev_n, show) if prev_n else None,
            dataset_href(next_n, show) if next_n else None,
        ),
        " · show: ",
        tag("a", "all", href=dataset_href(n, "all"), class_="active" if show == "all" else None),
        " ",
        tag(
            "a",
            "pending",
            href=dataset_href(n, "pending"),
            class_="active" if show == "pending" else None,
        ),
        " · ",
        tag("a", "list", href="/dataset"),
        class_="pager",
    )


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


def _text_field(label: str, value: str, name: str, element_id: str, *, rows: int = 3) -> Html:
    """One labelled box of the edit form (review.js fills the boxes by ``element_id`` when a
    trace's answer or sources are taken)."""
    return tag("label", label, tag("textarea", value, name=name, rows=rows, id=element_id))
