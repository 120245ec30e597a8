"""Labelling a case: the verdict form of each judged metric and the writes it posts to.

:func:`metric_row` draws one judged metric of a case with this reviewer's label, the
stale and other reviewers' labels, and the form (yes / no, a grade, claim verdicts, a
note); ``POST /case/{n}/label`` (:func:`label`) reads that form and appends the label,
``POST /case/{n}/undo`` (:func:`undo`) appends a withdrawal (``verdict: null``) of this
reviewer's latest label on the case. The form is the template ``review/metric.html.j2``;
its field names (``metric``, ``verdict``, ``grade``, ``note``, ``claim-N``, ``filter``)
are the contract with :func:`label`, which reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.cases_common import (
    AREA,
    case_href,
    filter_of,
    no_such_case,
    review_of,
    reviewer_of,
)
from pytest_ragproof.review.cases_parts import fmt, reasons_of, tone, verdict_text
from pytest_ragproof.review.html import Html
from pytest_ragproof.review.layout import hidden_token, message
from pytest_ragproof.review.results import ResultsReview, Snapshot, disagrees
from pytest_ragproof.review.security import form_of

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case

__all__ = ["label", "metric_row", "undo"]

# A claim's choices in the form: (value, text); "" keeps the judge's verdict.
CLAIM_CHOICES = (("", "as the judge"), ("supported", "supported"), ("unsupported", "unsupported"))


def metric_row(
    request: Request,
    snapshot: Snapshot,
    case: Case,
    n: int,
    show: str,
    metric: str,
    kind: str,
    current: bool,
) -> Html:
    case_id, pipeline = case.id, case.pipeline
    score = case.metrics.get(metric)
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
    status: list[dict[str, Any]] = []

    def badge(cls: str, text: str, verdict: str | None = None, title: str | None = None) -> None:
        status.append({"cls": cls, "text": text, "verdict": verdict, "title": title})

    if mine is None:
        badge("muted", "not labelled by you")
    else:
        badge("badge fresh", f"you: {verdict_text(mine.verdict, kind)}", fmt(mine.verdict))
        if mine.verdict is not None and disagrees(score, float(mine.verdict)):
            badge("badge stale", "disagrees with the judge")
    for s in stale:
        badge(
            "badge stale",
            f"stale: {s.label.reviewer} said {verdict_text(s.label.verdict, kind)} "
            f"({STALE_REASONS.get(s.reason, s.reason)}); not counted",
            title=s.label.time,
        )
    for label in others:
        badge("badge", f"{label.reviewer}: {verdict_text(label.verdict, kind)}")
    claims = judged_claims(case, metric) if metric in CLAIM_METRICS else []
    given = {c.index: c.verdict for c in (mine.claims or ())} if mine is not None else {}
    judgement = (case.judgements or {}).get(metric)
    yes, no = VERDICT_MEANINGS[metric]  # what yes and no say on the metric
    return render(
        "review/metric.html.j2",
        metric=metric,
        kind=kind,
        current=current,
        score=fmt(score),
        yes=yes,
        no=no,
        status=status,
        n=n,
        show=show,
        token_field=hidden_token(request),
        graded=kind == "graded",
        grade=fmt(mine.verdict) if mine is not None and mine.verdict is not None else "",
        note=mine.note if mine is not None and mine.note else "",
        claims=[
            {
                "index": c.index,
                "verdict": c.verdict,
                "tone": tone(c.verdict),
                "claim": c.claim,
                "cited": f" ← context {c.context}" if c.context else "",
                "given": given.get(c.index, ""),
            }
            for c in claims
        ],
        choices=CLAIM_CHOICES,
        reasons=reasons_of(judgement) if isinstance(judgement, Mapping) else None,
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
    record = snapshot.cases[n - 1]
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
            snapshot.results,
            record,
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
            review.append(label_for(snapshot.results, case, last.metric, None, snapshot.reviewer))
        except RagproofError as exc:
            return _bad(request, str(exc))
    return RedirectResponse(case_href(n, show), status_code=303)
