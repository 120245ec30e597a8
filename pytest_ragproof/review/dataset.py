"""The dataset review area: each generated case with its source span, approve/reject/edit.

Routes: ``/dataset`` (the list), ``/dataset/{n}`` (one case, 1-based), and the writes
``POST /dataset/{n}/decide`` (approve or reject) and ``POST /dataset/{n}/edit``.
Every write goes to the reviewed file (:mod:`.reviewed`), then to the next case.
Keys: ``a`` approve, ``r`` reject, ``e`` edit, ``j``/``k`` (or arrows) next/previous.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pytest_ragproof.corpus.types import Corpus, Document
from pytest_ragproof.errors import DatasetError
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.html import Html, join, table, tag
from pytest_ragproof.review.layout import (
    APP_KEY,
    NavItem,
    hidden_token,
    keys,
    message,
    page,
    progress,
    steps,
)
from pytest_ragproof.review.reviewed import Decision, ReviewedFile, now

__all__ = ["DatasetReview", "dataset_area"]

WINDOW = 1500  # characters of the document shown on each side of the span
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


def _provenance_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    provenance = record.get("provenance")
    return provenance if isinstance(provenance, Mapping) else {}


def _review(request: Request) -> DatasetReview:
    review: DatasetReview = request.app.state.dataset_review
    return review


def _order(review: DatasetReview, show: str) -> list[int]:
    """0-based indexes of the cases the filter shows."""
    n = len(review.reviewed)
    if show == "pending":
        return [i for i in range(n) if review.reviewed.status(i) == "pending"]
    return list(range(n))


def _href(n: int, show: str) -> str:
    return f"/dataset/{n}" + (f"?{urlencode({'show': show})}" if show != "all" else "")


def _show(request: Request) -> str:
    show = request.query_params.get("show", "all")
    return show if show in ("all", "pending") else "all"


def _status_badge(status: str) -> Html:
    return tag("span", status, class_=f"badge status-{status}")


async def list_page(request: Request) -> Response:
    review = _review(request)
    reviewed = review.reviewed
    rows = []
    for i, record in enumerate(reviewed.records):
        provenance = _provenance_of(record)
        rows.append(
            tag(
                "tr",
                tag("td", tag("a", record["id"], href=_href(i + 1, "all"))),
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
            tag(
                "p",
                f"writing {reviewed.output}",
                " (resumed)" if reviewed.resumed else "",
                " · ",
                ", ".join(f"{n} {s}" for s, n in counts.items()),
                class_="muted",
            ),
            _corpus_note(review),
            table(
                ("case", "kind", "type", "status", "confidence", "question"), rows, class_="list"
            ),
        ]
    )
    return page(request, title="Dataset review", area=AREA, body=body)


def _confidence(provenance: Mapping[str, Any]) -> str:
    value = provenance.get("confidence")
    return f"{value:.2f}" if isinstance(value, int | float) else "–"


def _corpus_note(review: DatasetReview) -> Html:
    if review.corpus is None:
        return tag(
            "p",
            "The corpus was not given (--corpus PATH): source spans are shown as "
            "document, chunk and offsets only.",
            class_="note",
            id="no-corpus",
        )
    return Html("")


def _source(review: DatasetReview, provenance: Mapping[str, Any]) -> Html:
    doc_id = provenance.get("document_id")
    span = provenance.get("span")
    where = tag(
        "p",
        "document ",
        tag("code", doc_id),
        " · chunk ",
        tag("code", provenance.get("chunk_id") or "–"),
        " · span ",
        tag(
            "code", f"[{span[0]}, {span[1]})" if isinstance(span, list) and len(span) == 2 else "–"
        ),
        class_="muted",
    )
    if review.corpus is None:
        return join([where, _corpus_note(review)])
    document = review.document(str(doc_id)) if doc_id else None
    if document is None:
        return join(
            [
                where,
                tag(
                    "p",
                    f"document {doc_id} is not in the corpus given ({review.corpus.root})",
                    class_="note",
                ),
            ]
        )
    text = document.text
    if not (isinstance(span, list) and len(span) == 2 and 0 <= span[0] <= span[1] <= len(text)):
        return join([where, tag("p", "the span is outside this document's text", class_="note")])
    start, end = int(span[0]), int(span[1])
    left = max(0, start - WINDOW)
    right = min(len(text), end + WINDOW)
    return join(
        [
            where,
            tag(
                "pre",
                "…" if left > 0 else "",
                text[left:start],
                tag("mark", text[start:end], id="span"),
                text[end:right],
                "…" if right < len(text) else "",
                class_="document",
            ),
        ]
    )


def _provenance(provenance: Mapping[str, Any]) -> Html:
    rows = []
    for name in (
        "document_id",
        "chunk_id",
        "span",
        "confidence",
        "model",
        "prompt_version",
        "generator_version",
        "seed",
        "usage",
    ):
        if name in provenance:
            value = provenance[name]
            shown = (
                ", ".join(f"{k} {v}" for k, v in value.items())
                if isinstance(value, dict)
                else str(value)
            )
            rows.append(tag("tr", tag("th", name), tag("td", shown)))
    edits = provenance.get("edits") or []
    history = Html("")
    if edits:
        history = join(
            [
                tag("h3", "Edits"),
                tag(
                    "table",
                    tag("tr", [tag("th", t) for t in ("field", "before", "reviewer", "time")]),
                    [
                        tag(
                            "tr",
                            tag("td", e.get("field")),
                            tag("td", _value(e.get("before")), class_="text"),
                            tag("td", e.get("reviewer")),
                            tag("td", e.get("time")),
                        )
                        for e in edits
                        if isinstance(e, dict)
                    ],
                    class_="edits",
                ),
            ]
        )
    return join([tag("table", rows, class_="provenance"), history])


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


async def case_page(request: Request) -> Response:
    review = _review(request)
    reviewed = review.reviewed
    show = _show(request)
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
    order = _order(review, show)
    position = order.index(index) if index in order else None
    prev_n = order[position - 1] + 1 if position is not None and position > 0 else None
    if position is not None:
        next_n = order[position + 1] + 1 if position + 1 < len(order) else None
    else:
        next_n = next((i + 1 for i in order if i > index), None)
    provenance = _provenance_of(record)
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
            tag(
                "label",
                "Question",
                tag("textarea", record.get("question") or "", name="question", rows=3),
            ),
            tag(
                "label",
                "Expected answer",
                tag(
                    "textarea", record.get("expected_answer") or "", name="expected_answer", rows=3
                ),
            ),
            tag(
                "label",
                "Expected sources (one document id a line)",
                tag("textarea", "\n".join(sources), name="expected_source_ids", rows=2),
            ),
            tag("button", "Save edit (Ctrl+Enter)", type="submit"),
            method="post",
            action=f"/dataset/{n}/edit",
            id="edit",
            class_="edit",
        )
        if provenance
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
            _pager(n, len(reviewed), prev_n, next_n, show),
            keys(
                ("a", "approve"),
                ("r", "reject"),
                ("e", "edit"),
                ("j / →", "next"),
                ("k / ←", "previous"),
            ),
            tag(
                "section",
                decide("approved", "Approve", "a"),
                decide("rejected", "Reject", "r"),
                tag("details", tag("summary", "Edit ", tag("kbd", "e")), edit_form, id="edit-box"),
                class_="actions",
            ),
            tag(
                "div",
                tag("section", fields, class_="fields"),
                tag("section", tag("h2", "Provenance"), _provenance(provenance), class_="side"),
                class_="grid",
            ),
            tag("h2", "Source span"),
            _source(review, provenance),
        ]
    )
    section = tag(
        "div",
        body,
        class_="review dataset",
        data_prev=_href(prev_n, show) if prev_n else None,
        data_next=_href(next_n, show) if next_n else None,
    )
    return page(request, title=f"{record['id']} · dataset review", area=AREA, body=section)


def _pager(n: int, total: int, prev_n: int | None, next_n: int | None, show: str) -> Html:
    return tag(
        "p",
        steps(
            n,
            total,
            _href(prev_n, show) if prev_n else None,
            _href(next_n, show) if next_n else None,
        ),
        " · show: ",
        tag("a", "all", href=_href(n, "all"), class_="active" if show == "all" else None),
        " ",
        tag(
            "a", "pending", href=_href(n, "pending"), class_="active" if show == "pending" else None
        ),
        " · ",
        tag("a", "list", href="/dataset"),
        class_="pager",
    )


def _after(request: Request, review: DatasetReview, index: int, show: str) -> Response:
    """Where a decision leads: the next case the filter shows, else the list."""
    order = _order(review, show)
    following = [i for i in order if i > index] or [i for i in order if i != index]
    target = _href(following[0] + 1, show) if following else "/dataset"
    return RedirectResponse(target, status_code=303)


def _writes(request: Request) -> tuple[DatasetReview, int, str] | Response:
    from pytest_ragproof.review.security import form_of

    review = _review(request)
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
    try:
        review.reviewed.decide(index, Decision(status), reviewer=reviewer, time=now())
    except DatasetError as exc:
        return message(request, "Not saved", str(exc), area=AREA, status_code=400)
    return _after(request, review, index, show)


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
    record = review.reviewed.records[index]
    for name in ("expected_answer",):
        if edits.get(name) == "" and record.get(name) is None:
            edits[name] = None
    if edits.get("expected_source_ids") == [] and not record.get("expected_source_ids"):
        edits["expected_source_ids"] = record.get("expected_source_ids")
    reviewer = getattr(request.app.state, APP_KEY).reviewer
    try:
        review.reviewed.decide(index, Decision("approved", edits), reviewer=reviewer, time=now())
    except DatasetError as exc:
        return message(request, "Not saved", str(exc), area=AREA, status_code=400)
    return _after(request, review, index, show)


def dataset_area(review: DatasetReview) -> Area:
    """The dataset review area over ``review`` (kept as ``app.state.dataset_review``)."""
    routes = [
        Route("/dataset", list_page),
        Route("/dataset/{n:int}", case_page),
        Route("/dataset/{n:int}/decide", decide, methods=["POST"]),
        Route("/dataset/{n:int}/edit", edit, methods=["POST"]),
    ]
    first_pending = next(
        (i + 1 for i in range(len(review.reviewed)) if review.reviewed.status(i) == "pending"), 1
    )
    return Area(
        name=AREA,
        routes=routes,
        nav=[NavItem("Cases", "/dataset", AREA)],
        home=f"/dataset/{first_pending}",
        state={"dataset_review": review},
    )
