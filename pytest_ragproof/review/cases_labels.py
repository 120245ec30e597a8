"""Labelling a case: the verdict form of each judged metric and the writes it posts to.

:func:`metric_row` draws one judged metric of a case with this reviewer's label, the
stale and other reviewers' labels, and the form (yes / no, a grade, claim verdicts, a
note); ``POST /case/{n}/label`` (:func:`label`) reads that form and appends the label,
``POST /case/{n}/undo`` (:func:`undo`) appends a withdrawal (``verdict: null``) of this
reviewer's latest label on the case. The form's field names are the contract between
the two, so they live together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pytest_ragproof.errors import RagproofError
from pytest_ragproof.labels import (
    CLAIM_METRICS,
    STALE_REASONS,
    VERDICT_MEANINGS,
    ClaimVerdict,
    Label,
    judged_claims,
    label_for,
)
from pytest_ragproof.review.cases_common import (
    AREA,
    case_href,
    filter_of,
    no_such_case,
    review_of,
    reviewer_of,
)
from pytest_ragproof.review.cases_parts import fmt, reasons_of, tone, verdict_text
from pytest_ragproof.review.html import Html, join, tag
from pytest_ragproof.review.layout import hidden_token, message
from pytest_ragproof.review.results import ResultsReview, Snapshot, disagrees
from pytest_ragproof.review.security import form_of

__all__ = ["label", "metric_row", "undo"]


def metric_row(
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
                f"you: {verdict_text(mine.verdict, kind)}",
                class_="badge fresh",
                data_verdict=fmt(mine.verdict),
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
                f"stale: {s.label.reviewer} said {verdict_text(s.label.verdict, kind)} "
                f"({STALE_REASONS.get(s.reason, s.reason)}); not counted",
                class_="badge stale",
                title=s.label.time,
            )
        )
    for label in others:
        status.append(
            tag("span", f"{label.reviewer}: {verdict_text(label.verdict, kind)}", class_="badge")
        )
    claims = judged_claims(case, metric) if metric in CLAIM_METRICS else []
    given = {c.index: c.verdict for c in (mine.claims or ())} if mine is not None else {}
    claim_rows = [
        tag(
            "li",
            tag("span", c.verdict, class_=tone(c.verdict)),
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
                    value=fmt(mine.verdict)
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
            tag("b", fmt(score), class_="score"),
            class_="head",
        ),
        _meaning(metric),
        tag("p", join(status, " "), class_="status"),
        form,
        (
            tag("details", tag("summary", "the judge's reasons"), reasons_of(judgement))
            if isinstance(judgement, Mapping)
            else ""
        ),
        class_="metric current" if current else "metric",
        data_metric=metric,
        tabindex=0,
    )


def _meaning(metric: str) -> Html:
    """What yes and no say on ``metric`` (:data:`pytest_ragproof.labels.VERDICT_MEANINGS`)."""
    yes, no = VERDICT_MEANINGS[metric]
    return tag(
        "p",
        tag("span", tag("b", "yes"), f" = {yes}", data_means="yes"),
        " · ",
        tag("span", tag("b", "no"), f" = {no}", data_means="no"),
        class_="meaning muted",
    )


def _writable(request: Request) -> tuple[ResultsReview, Snapshot, int, str] | Response:
    review = review_of(request)
    snapshot = review.snapshot(reviewer_of(request))
    n = int(request.path_params["n"])
    missing = no_such_case(request, snapshot, n)
    if missing is not None:
        return missing
    return review, snapshot, n, filter_of(form_of(request).get("filter"))


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
