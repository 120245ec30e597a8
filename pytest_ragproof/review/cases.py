"""The case pages of a results review: one per case and pipeline, human verdicts as labels.

Routes: ``/cases`` (the list, with the filters), ``/case/{n}`` (case ``n``, 1-based in
the results' order), ``POST /case/{n}/label`` (one verdict on one judged metric,
appended to the labels file) and ``POST /case/{n}/undo`` (appends a withdrawal,
``verdict: null``, of this reviewer's latest label on the case).

Keys: ``y``/``n`` answer the current metric (the first not yet labelled; ↑/↓ move),
``j``/``k`` (or →/←) next/previous case, ``s`` the next case not yet reviewed,
``u`` undo.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.labels import (
    CLAIM_METRICS,
    STALE_REASONS,
    ClaimVerdict,
    Label,
    judged_claims,
    label_for,
)
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
from pytest_ragproof.review.results import FILTERS, ResultsReview, Snapshot, disagrees
from pytest_ragproof.review.security import form_of

__all__ = ["case_href", "cases_area"]

AREA = "cases"

GOOD = frozenset({"supported", "relevant", "in reference", "in answer", "attributed", "ignored it"})
NEUTRAL = frozenset({"declined", "answered"})


def case_href(n: int, show: str = "all") -> str:
    return f"/case/{n}" + (f"?{urlencode({'filter': show})}" if show != "all" else "")


def _review(request: Request) -> ResultsReview:
    review: ResultsReview = request.app.state.results_review
    return review


def _reviewer(request: Request) -> str:
    return str(getattr(request.app.state, APP_KEY).reviewer)


def _filter(value: str | None) -> str:
    return value if value in FILTERS else "all"


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _verdict_text(verdict: float | None, kind: str) -> str:
    if verdict is None:
        return "withdrawn"
    if kind == "binary" or verdict in (0, 1):
        return "yes" if verdict >= 0.5 else "no"
    return f"{verdict:g}"


def _tone(verdict: str) -> str:
    if verdict in GOOD:
        return "verdict good"
    if verdict in NEUTRAL:
        return "verdict"
    return "verdict bad"


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
    review = _review(request)
    snapshot = review.snapshot(_reviewer(request))
    show = _filter(request.query_params.get("filter"))
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


def _conversation(case: Mapping[str, Any]) -> Html:
    turns = [t for t in case.get("conversation_history") or [] if isinstance(t, Mapping)]
    if not turns:
        return Html("")
    return tag(
        "ol",
        [
            tag("li", tag("b", f"{t.get('role')}: "), tag("span", t.get("content"), class_="text"))
            for t in turns
        ],
        class_="conversation",
    )


def _contexts(case: Mapping[str, Any]) -> Html:
    contexts = [c for c in case.get("contexts") or [] if isinstance(c, Mapping)]
    if not contexts:
        return tag("p", "no context was retrieved", class_="muted")
    judgements = case.get("judgements") or {}
    relevance = {
        e.get("context"): e.get("verdict")
        for e in (judgements.get("context_relevance") or {}).get("contexts") or []
        if isinstance(e, Mapping)
    }
    claims = judged_claims(case, "faithfulness")
    recall = [
        e
        for e in (judgements.get("context_recall") or {}).get("reference_claims") or []
        if isinstance(e, Mapping)
    ]
    out = []
    for rank, context in enumerate(contexts, 1):
        marks = [
            tag(
                "li",
                tag("span", c.verdict, class_=_tone(c.verdict)),
                f" faithfulness claim {c.index}: ",
                tag("span", c.claim, class_="text"),
                class_="claim",
            )
            for c in claims
            if c.context == rank
        ] + [
            tag(
                "li",
                tag("span", str(e.get("verdict")), class_=_tone(str(e.get("verdict")))),
                " reference claim: ",
                tag("span", e.get("claim"), class_="text"),
                class_="claim",
            )
            for e in recall
            if e.get("context") == rank
        ]
        verdict = relevance.get(rank)
        out.append(
            tag(
                "div",
                tag(
                    "p",
                    tag("b", f"context {rank}"),
                    " ",
                    tag("code", context.get("id")),
                    (
                        join([" · document ", tag("code", context.get("document_id"))])
                        if context.get("document_id") not in (None, context.get("id"))
                        else ""
                    ),
                    tag("span", verdict, class_=f"badge {_tone(str(verdict))}") if verdict else "",
                ),
                tag("p", context.get("text"), class_="text"),
                tag("ul", marks) if marks else "",
                class_="context",
                data_rank=rank,
            )
        )
    return join(out)


def _scores(case: Mapping[str, Any], judged: set[str]) -> Html:
    metrics = case.get("metrics") or {}
    rows = [
        tag(
            "tr",
            tag("th", name),
            tag("td", _fmt(value), class_="num"),
            tag("td", "judged" if name in judged else "", class_="muted"),
        )
        for name, value in sorted(metrics.items(), key=lambda kv: (kv[0] not in judged, kv[0]))
        if name != "latency_s"
    ]
    not_judged = case.get("not_judged") or {}
    extra = [
        tag(
            "tr",
            tag("th", name),
            tag("td", "not judged", class_="num"),
            tag("td", reason, class_="muted"),
        )
        for name, reason in sorted(not_judged.items())
    ]
    failures = case.get("failures") or []
    return join(
        [
            tag("table", rows, extra, class_="scores"),
            (
                join(
                    [
                        tag("h3", "Failures"),
                        tag("ul", [tag("li", f, class_="text") for f in failures]),
                    ]
                )
                if failures
                else ""
            ),
            (
                tag("p", f"judge error: {case.get('judge_error')}", class_="note")
                if case.get("judge_error")
                else ""
            ),
            (
                tag("p", f"error: {case.get('error_type')}", class_="note")
                if case.get("error_type")
                else ""
            ),
        ]
    )


def _reasons(judgement: Mapping[str, Any]) -> Html:
    """The judge's reasons: every list of claims, statements or contexts with verdicts."""
    parts: list[Html] = []
    if isinstance(judgement.get("verdict"), str):
        parts.append(
            tag(
                "p",
                "judge: ",
                tag("span", judgement["verdict"], class_=_tone(judgement["verdict"])),
            )
        )
    for key in ("precision", "recall"):
        if isinstance(judgement.get(key), int | float):
            parts.append(tag("span", f"{key} {_fmt(judgement[key])} ", class_="muted"))
    for key, title in (
        ("claims", "claims of the answer"),
        ("statements", "statements of the answer"),
        ("answer_claims", "claims of the answer"),
        ("reference_claims", "claims of the reference"),
        ("contexts", "contexts"),
    ):
        entries = [e for e in judgement.get(key) or [] if isinstance(e, Mapping)]
        if not entries:
            continue
        items = []
        for number, e in enumerate(entries, 1):
            text = (
                e.get("claim")
                or e.get("statement")
                or (f"context {e.get('context')}" if key == "contexts" else "")
            )
            cited = (
                f" ← context {e['context']}"
                if key != "contexts" and isinstance(e.get("context"), int)
                else ""
            )
            items.append(
                tag(
                    "li",
                    tag("span", str(e.get("verdict")), class_=_tone(str(e.get("verdict")))),
                    " ",
                    tag("span", text, class_="text"),
                    cited,
                    value=number,
                )
            )
        parts.append(join([tag("p", title, class_="muted"), tag("ol", items)]))
    return join(parts)


def _metric_row(
    request: Request,
    snapshot: Snapshot,
    case: Mapping[str, Any],
    n: int,
    show: str,
    metric: str,
    kind: str,
    current: bool,
) -> Html:
    case_id, pipeline = str(case["id"]), str(case["pipeline"])
    score = (case.get("metrics") or {}).get(metric)
    mine = snapshot.state.label_of(snapshot.reviewer, case_id, pipeline, metric)
    stale = [
        s
        for s in snapshot.state.stale
        if s.label.case_id == case_id and s.label.pipeline == pipeline and s.label.metric == metric
    ]
    others = [
        label
        for label in snapshot.fresh_of(case)
        if label.metric == metric and label.reviewer != snapshot.reviewer
    ]
    status: list[Html] = []
    if mine is None:
        status.append(tag("span", "not labelled by you", class_="muted"))
    else:
        status.append(
            tag(
                "span",
                f"you: {_verdict_text(mine.verdict, kind)}",
                class_="badge fresh",
                data_verdict=_fmt(mine.verdict),
            )
        )
        if mine.verdict is not None and disagrees(
            float(score) if isinstance(score, int | float) else None, float(mine.verdict)
        ):
            status.append(tag("span", "disagrees with the judge", class_="badge stale"))
    for s in stale:
        status.append(
            tag(
                "span",
                f"stale: {s.label.reviewer} said {_verdict_text(s.label.verdict, kind)} "
                f"({STALE_REASONS.get(s.reason, s.reason)}); not counted",
                class_="badge stale",
                title=s.label.time,
            )
        )
    for label in others:
        status.append(
            tag("span", f"{label.reviewer}: {_verdict_text(label.verdict, kind)}", class_="badge")
        )
    claims = judged_claims(case, metric) if metric in CLAIM_METRICS else []
    given = {c.index: c.verdict for c in (mine.claims or ())} if mine is not None else {}
    claim_rows = [
        tag(
            "li",
            tag("span", c.verdict, class_=_tone(c.verdict)),
            " ",
            tag("span", c.claim, class_="text"),
            f" ← context {c.context}" if c.context else "",
            " · you: ",
            tag(
                "select",
                [
                    tag("option", text, value=value, selected=given.get(c.index, "") == value)
                    for value, text in (
                        ("", "as the judge"),
                        ("supported", "supported"),
                        ("unsupported", "unsupported"),
                    )
                ],
                name=f"claim-{c.index}",
                aria_label=f"claim {c.index}",
            ),
        )
        for c in claims
    ]
    grade = (
        join(
            [
                tag(
                    "input",
                    type="number",
                    name="grade",
                    min="0",
                    max="1",
                    step="0.05",
                    value=_fmt(mine.verdict)
                    if mine is not None and mine.verdict is not None
                    else "",
                    aria_label=f"{metric} grade",
                ),
                tag("button", "grade", type="submit", name="verdict", value="grade"),
            ]
        )
        if kind == "graded"
        else ""
    )
    form = tag(
        "form",
        hidden_token(request),
        tag("input", type="hidden", name="metric", value=metric),
        tag("input", type="hidden", name="filter", value=show),
        tag(
            "div",
            tag(
                "button",
                "yes ",
                tag("kbd", "y"),
                type="submit",
                name="verdict",
                value="1",
                data_key="yes",
            ),
            tag(
                "button",
                "no ",
                tag("kbd", "n"),
                type="submit",
                name="verdict",
                value="0",
                data_key="no",
            ),
            grade,
            tag(
                "input",
                type="text",
                name="note",
                placeholder="note (optional)",
                value=mine.note if mine is not None and mine.note else "",
                aria_label=f"{metric} note",
            ),
            class_="controls",
        ),
        tag("ol", claim_rows, class_="claims") if claim_rows else "",
        method="post",
        action=f"/case/{n}/label",
        class_="label",
    )
    judgement = (case.get("judgements") or {}).get(metric)
    return tag(
        "div",
        tag(
            "p",
            tag("b", metric),
            " ",
            tag("span", kind, class_="muted"),
            " · judge ",
            tag("b", _fmt(score), class_="score"),
            class_="head",
        ),
        tag("p", join(status, " "), class_="status"),
        form,
        (
            tag("details", tag("summary", "the judge's reasons"), _reasons(judgement))
            if isinstance(judgement, Mapping)
            else ""
        ),
        class_="metric current" if current else "metric",
        data_metric=metric,
        tabindex=0,
    )


async def case_page(request: Request) -> Response:
    review = _review(request)
    snapshot = review.snapshot(_reviewer(request))
    show = _filter(request.query_params.get("filter"))
    n = int(request.path_params["n"])
    if not 1 <= n <= len(snapshot.cases):
        return message(
            request,
            "No such case",
            f"there are {len(snapshot.cases)} case(s)",
            area=AREA,
            status_code=404,
        )
    index = n - 1
    case = snapshot.cases[index]
    order = snapshot.order(show)
    if index in order:
        at = order.index(index)
        prev_n = order[at - 1] + 1 if at > 0 else None
        next_n = order[at + 1] + 1 if at + 1 < len(order) else None
    else:
        prev_n = next((i + 1 for i in reversed(order) if i < index), None)
        next_n = next((i + 1 for i in order if i > index), None)
    unreviewed = snapshot.order("unreviewed")
    skip_n = next((i + 1 for i in unreviewed if i > index), None) or next(
        (i + 1 for i in unreviewed if i != index), None
    )
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
        _metric_row(request, snapshot, case, n, show, m, kind, m == first_open)
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
                        _conversation(case),
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
                        _contexts(case),
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
                    tag("section", tag("h2", "Scores"), _scores(case, {m for m, _ in metrics})),
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


def _writable(request: Request) -> tuple[ResultsReview, Snapshot, int, str] | Response:
    review = _review(request)
    snapshot = review.snapshot(_reviewer(request))
    n = int(request.path_params["n"])
    if not 1 <= n <= len(snapshot.cases):
        return message(
            request,
            "No such case",
            f"there are {len(snapshot.cases)} case(s)",
            area=AREA,
            status_code=404,
        )
    return review, snapshot, n, _filter(form_of(request).get("filter"))


def _bad(request: Request, text: str) -> Response:
    return message(request, "Not saved", text, area=AREA, status_code=400)


async def label(request: Request) -> Response:
    found = _writable(request)
    if isinstance(found, Response):
        return found
    review, snapshot, n, show = found
    form = form_of(request)
    case = snapshot.cases[n - 1]
    kinds = dict(snapshot.metrics[n - 1])
    metric = form.get("metric", "")
    if metric not in kinds:
        return _bad(request, f"'{metric[:40]}' is not a judged metric of this case")
    choice = form.get("verdict", "")
    verdict: float
    if choice in ("0", "1"):
        verdict = int(choice)
    elif choice == "grade" and kinds[metric] == "graded":
        try:
            verdict = float(form.get("grade", ""))
        except ValueError:
            return _bad(request, "the grade must be a number from 0 to 1")
    else:
        return _bad(request, "the verdict must be yes (1), no (0) or a grade")
    claims: list[ClaimVerdict] = []
    for key, value in sorted(form.items()):
        if key.startswith("claim-") and value:
            try:
                claims.append(ClaimVerdict(int(key[len("claim-") :]), value))  # type: ignore[arg-type]
            except (ValueError, RagproofError):
                return _bad(request, "a claim verdict is supported or unsupported")
    note = form.get("note", "").strip() or None
    try:
        new = label_for(
            snapshot.document,
            case,
            metric,
            verdict,
            snapshot.reviewer,
            claims=(claims or None) if metric in CLAIM_METRICS else None,
            note=note,
        )
        review.append(new)
    except RagproofError as exc:
        return _bad(request, str(exc))
    return RedirectResponse(case_href(n, show), status_code=303)


async def undo(request: Request) -> Response:
    found = _writable(request)
    if isinstance(found, Response):
        return found
    review, snapshot, n, show = found
    case = snapshot.cases[n - 1]
    mine: Sequence[Label] = [
        label for label in snapshot.fresh_of(case) if label.reviewer == snapshot.reviewer
    ]
    if mine:
        last = max(enumerate(mine), key=lambda pair: (pair[1].time, pair[0]))[1]
        try:
            review.append(label_for(snapshot.document, case, last.metric, None, snapshot.reviewer))
        except RagproofError as exc:
            return _bad(request, str(exc))
    return RedirectResponse(case_href(n, show), status_code=303)


def cases_area(review: ResultsReview) -> Area:
    snapshot = review.snapshot("")
    first = next(iter(snapshot.order("judged")), 0) + 1 if snapshot.cases else None
    return Area(
        name=AREA,
        routes=[
            Route("/cases", list_page),
            Route("/case/{n:int}", case_page),
            Route("/case/{n:int}/label", label, methods=["POST"]),
            Route("/case/{n:int}/undo", undo, methods=["POST"]),
        ],
        nav=[NavItem("Cases", "/cases", AREA)],
        home=case_href(first) if first else "/cases",
        state={"results_review": review},
    )
