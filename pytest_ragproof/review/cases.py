"""The case pages of a results review: one per case and pipeline, human verdicts as labels.

Routes: ``/cases`` (the list, with the filters), ``/case/{n}`` (case ``n``, 1-based in
the results' order), ``POST /case/{n}/label`` (one verdict on one judged metric,
appended to the labels file) and ``POST /case/{n}/undo`` (appends a withdrawal,
``verdict: null``, of this reviewer's latest label on the case).

Keys: ``y``/``n`` answer the current metric (the first not yet labelled; ↑/↓ move),
``j``/``k`` (or →/←) next/previous case, ``s`` the next case not yet reviewed,
``u`` undo.

This module builds the list and the case page and lists the routes; the parts of a
case come from :mod:`.cases_parts`, the verdict forms and their writes from
:mod:`.cases_labels`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

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
from pytest_ragproof.review.html import Html, join, table, tag
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

__all__ = ["case_href", "cases_area"]


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
            tag(
                "a",
                f"{label} ({len(order)})",
                href=href,
                class_="active" if name == show else None,
                data_filter=name,
            )
        )
    return tag("p", "show: ", links, class_="filters")


async def list_page(request: Request) -> Response:
    review = review_of(request)
    snapshot = review.snapshot(reviewer_of(request))
    show = filter_of(request.query_params.get("filter"))
    rows = []
    for i in snapshot.order(show):
        case = snapshot.cases[i]
        mine = [
            snapshot.state.label_of(snapshot.reviewer, str(case["id"]), str(case["pipeline"]), m)
            for m, _ in snapshot.metrics[i]
        ]
        rows.append(
            tag(
                "tr",
                tag("td", tag("a", case["id"], href=case_href(i + 1, show))),
                tag("td", case.get("pipeline")),
                tag("td", case.get("kind")),
                tag(
                    "td",
                    tag("span", case.get("status"), class_=f"badge status-{case.get('status')}"),
                ),
                tag("td", len(snapshot.metrics[i]), class_="num"),
                tag("td", sum(1 for m in mine if m is not None), class_="num"),
                tag("td", "yes" if snapshot.disagreement(i) else ""),
                data_case=str(case["id"]),
            )
        )
    done, total = snapshot.progress()
    body = join(
        [
            tag("h1", f"Cases of {review.results_path.name}"),
            progress(done, total, "judged case(s) reviewed"),
            _all_reviewed(review, snapshot),
            _label_summary(review, snapshot),
            _filters(snapshot, show, None),
            table(
                (
                    "case",
                    "pipeline",
                    "kind",
                    "status",
                    "judged",
                    "your labels",
                    "people ≠ judge",
                ),
                rows,
                class_="list",
                id="cases",
            ),
        ]
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


def _label_summary(review: ResultsReview, snapshot: Snapshot) -> Html:
    state = snapshot.state
    parts = [f"labels: {review.labels_path.name}", f"{len(state.fresh)} counted"]
    if state.stale:
        parts.append(f"{len(state.stale)} stale (not counted)")
    if state.unmatched:
        parts.append(f"{len(state.unmatched)} of cases not in these results")
    return tag(
        "p", " · ".join(parts), class_="muted", id="label-summary", title=str(review.labels_path)
    )


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
    before, after = neighbours(snapshot.sequence, snapshot.order(show), index)
    prev_n = None if before is None else before + 1
    next_n = None if after is None else after + 1
    skip = following(snapshot.sequence, snapshot.order("unreviewed"), index)
    skip_n = None if skip is None else skip + 1
    metrics = snapshot.metrics[index]
    first_open = next(
        (
            m
            for m, _ in metrics
            if snapshot.state.label_of(snapshot.reviewer, str(case["id"]), str(case["pipeline"]), m)
            is None
        ),
        metrics[0][0] if metrics else None,
    )
    rows = [
        metric_row(request, snapshot, case, n, show, m, kind, m == first_open)
        for m, kind in metrics
    ]
    done, total = snapshot.progress()
    reference = join(
        [
            tag(
                "p",
                case.get("expected_answer") or "(no expected answer)",
                class_="text",
                id="reference",
            ),
            (
                tag(
                    "p",
                    "expected sources: ",
                    ", ".join(str(s) for s in case.get("expected_source_ids") or []),
                )
                if case.get("expected_source_ids")
                else ""
            ),
            join(
                tag("blockquote", c, class_="text")
                for c in case.get("reference_contexts") or []
                if isinstance(c, str)
            ),
        ]
    )
    injection = (
        join(
            [
                tag("h2", "Planted payload"),
                tag("p", case.get("adversarial_payload"), class_="text"),
                tag("p", "canary: ", tag("code", case.get("canary"))) if case.get("canary") else "",
            ]
        )
        if case.get("adversarial_payload")
        else ""
    )
    pager = tag(
        "p",
        steps(
            n,
            len(snapshot.cases),
            case_href(prev_n, show) if prev_n else None,
            case_href(next_n, show) if next_n else None,
        ),
        " · ",
        tag("a", "list", href="/cases" + (f"?filter={show}" if show != "all" else "")),
        class_="pager",
    )
    undo = tag(
        "form",
        hidden_token(request),
        tag("input", type="hidden", name="filter", value=show),
        tag("button", "undo my last label here ", tag("kbd", "u"), type="submit"),
        method="post",
        action=f"/case/{n}/undo",
        id="undo",
    )
    body = join(
        [
            tag(
                "header",
                tag("h1", case["id"]),
                tag("span", case.get("pipeline"), class_="badge"),
                tag("span", case.get("kind"), class_="badge"),
                tag("span", case.get("question_type"), class_="badge")
                if case.get("question_type")
                else "",
                tag("span", case.get("status"), class_=f"badge status-{case.get('status')}"),
                class_="case-head",
            ),
            progress(done, total, "judged case(s) reviewed"),
            _all_reviewed(review, snapshot),
            _filters(snapshot, show, n),
            pager,
            keys(
                ("y / n", "yes / no on the current metric"),
                ("↑ / ↓", "another metric"),
                ("j / →", "next case"),
                ("k / ←", "previous case"),
                ("s", "next not yet reviewed"),
                ("u", "undo"),
            ),
            tag(
                "div",
                tag(
                    "div",
                    tag(
                        "section",
                        tag("h2", "Question"),
                        conversation_of(case),
                        tag("p", case.get("question"), class_="text", id="question"),
                        tag("h2", "Answer"),
                        tag(
                            "p",
                            case.get("answer") if case.get("answer") is not None else "(no answer)",
                            class_="text",
                            id="answer",
                        ),
                        tag("h2", "Reference"),
                        reference,
                        injection,
                    ),
                    tag(
                        "section",
                        tag("h2", "Retrieved contexts (rank order)"),
                        contexts_of(case),
                        id="contexts",
                    ),
                ),
                tag(
                    "div",
                    tag(
                        "section",
                        tag("h2", "Your verdicts"),
                        join(rows)
                        if rows
                        else tag(
                            "p", "no judged metric on this case: nothing to label", class_="muted"
                        ),
                        undo if rows else "",
                        class_="verdicts",
                        id="verdicts",
                    ),
                    tag("section", tag("h2", "Scores"), scores_of(case, {m for m, _ in metrics})),
                    class_="side",
                ),
                class_="grid",
            ),
        ]
    )
    wrapper = tag(
        "div",
        body,
        class_="review results",
        data_prev=case_href(prev_n, show) if prev_n else None,
        data_next=case_href(next_n, show) if next_n else None,
        data_skip=case_href(skip_n, show) if skip_n else None,
    )
    return page(request, title=f"{case['id']} · {case.get('pipeline')}", area=AREA, body=wrapper)


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
