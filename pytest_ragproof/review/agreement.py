"""The Agreement page: the judges against people, the figures ``judge-check`` prints.

It renders :func:`pytest_ragproof.labels.agreement` over the results and labels the
app shows, with the command's defaults (cut 0.5, 1000 bootstrap resamples, seed 0),
so ``ragproof judge-check --results R --labels L`` prints the same numbers. Each
disagreement links to its case page. The markup is the template ``review/agreement.html.j2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pytest_ragproof.reporting.templating import render
from pytest_ragproof.review.app import Area
from pytest_ragproof.review.layout import APP_KEY, NavItem, page
from pytest_ragproof.review.results import ResultsReview

if TYPE_CHECKING:
    from pytest_ragproof.labels import PeopleAgreement

__all__ = ["agreement_area", "cell"]

AREA = "agreement"
BINARY = (
    ("accuracy", "accuracy"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("kappa", "Cohen's κ"),
)
GRADED = (("spearman", "Spearman ρ"), ("kendall_tau_b", "Kendall τ-b"))
STATISTICS = {"cohen_kappa": "Cohen's κ", "krippendorff_alpha": "Krippendorff's α"}


def cell(figures: Mapping[str, Mapping[str, Any]], name: str) -> str:
    """A figure as judge-check prints it: value to 3 decimals and its 95% interval."""
    entry = figures.get(name)
    if entry is None:
        return "—"
    value = entry.get("value")
    if value is None:
        return "undefined"
    ci = entry.get("ci95")
    return f"{value:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def people_line(people: PeopleAgreement) -> str:
    """Agreement between people, worded as judge-check words it."""
    if people.statistic is None:
        return f"between people: {people.undefined}"
    stat = STATISTICS[people.statistic]
    if people.statistic == "krippendorff_alpha":
        stat += f" ({people.level})"
    value = (
        f"= {people.value:.3f}" if people.value is not None else f"undefined ({people.undefined})"
    )
    return (
        f"between people: {stat} {value} among {', '.join(people.reviewers)} on "
        f"{_count(people.shared_items, 'item')} labelled by two or more"
    )


async def agreement_page(request: Request) -> Response:
    review: ResultsReview = request.app.state.results_review
    reviewer = getattr(request.app.state, APP_KEY).reviewer
    snapshot = review.snapshot(reviewer)
    report = review.agreement()
    index = {(c.id, c.pipeline): n for n, c in enumerate(snapshot.cases, 1)}
    summary = [
        f"{report.fresh} label(s) counted",
        f"reviewers: {', '.join(report.reviewers) or 'none'}",
    ]
    if report.stale_total:
        summary.append(
            f"{report.stale_total} stale, not counted ("
            + ", ".join(f"{n} {reason}" for reason, n in sorted(report.stale.items()))
            + ")"
        )
    if report.unmatched:
        summary.append(f"{report.unmatched} of cases not in these results")
    metrics = []
    for m in report.metrics:
        columns = BINARY if m.judge.labels == "binary" else GRADED
        notes = [people_line(m.people)]
        if m.judge.not_judged:
            notes.append(
                "labels without a judge score: "
                + ", ".join(f"{n} {why}" for why, n in sorted(m.judge.not_judged.items()))
            )
        if m.claims is not None:
            c = m.claims
            notes.append(
                f"claims: {c.given} verdict(s) given: {c.agree} agree with the judge, "
                f"{c.overruled} overrule it, {c.missing} not in its list"
            )
        metrics.append(
            {
                "metric": m.metric,
                "kind": "0/1 labels" if m.judge.labels == "binary" else "graded labels",
                "columns": columns,
                "rows": [
                    {
                        "name": name,
                        "measured": str(fig.measured),
                        "cells": [(key, cell(fig.figures, key)) for key, _ in columns],
                    }
                    for name, fig in [("all reviewers", m.judge), *m.by_reviewer.items()]
                ],
                "notes": notes,
            }
        )
    disagreements = [
        {
            "case_id": d.case_id,
            "href": f"/case/{index[(d.case_id, d.pipeline)]}"
            if (d.case_id, d.pipeline) in index
            else None,
            "pipeline": d.pipeline,
            "metric": d.metric,
            "judge": f"{d.judge_score:.3f}",
            "person": f"{d.verdict:g}",
            "reviewer": d.reviewer,
        }
        for d in report.disagreements
    ]
    body = render(
        "review/agreement.html.j2",
        summary=" · ".join(summary),
        cut=f"{report.cut:g}",
        resamples=report.resamples,
        seed=report.seed,
        results_name=review.results_path.name,
        labels_name=review.labels_path.name,
        metrics=metrics,
        disagreements=disagreements,
    )
    return page(request, title="Agreement", area=AREA, body=body)


def agreement_area(review: ResultsReview) -> Area:
    return Area(
        name=AREA,
        routes=[Route("/agreement", agreement_page)],
        nav=[NavItem("Agreement", "/agreement", AREA)],
        state={"results_review": review},
    )
