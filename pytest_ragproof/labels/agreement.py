"""How the judges agree with people, and people with each other, on a results document.

:func:`agreement` is what ``ragproof judge-check --results --labels`` prints and
the review app's Agreement page shows. It reads the judge scores already in the
results (no LLM call) and the fresh labels (:func:`current_labels`; stale and
unmatched labels are counted, never used), and per judged metric gives:

- the judge against people, for all reviewers together (every fresh label is one
  item: a case two people labelled counts twice) and for each reviewer: accuracy,
  precision, recall, F1 and Cohen's κ when every label of the metric is 0 or 1 (a
  judge score of at least ``cut`` counts as a 1), Spearman's ρ and Kendall's τ-b
  when some label is a grade (and then, if others are 0 or 1, the 0/1 figures of
  those alone, ``binary_part``: what a κ floor is held to); each with the percentile
  bootstrap interval of
  :mod:`pytest_ragproof.judges.agreement`, as ``ragproof judge-check`` computes it
  when it judges labelled items itself;
- people against each other (:mod:`.people`): Cohen's κ when exactly two
  reviewers gave 0/1 labels, otherwise Krippendorff's α (nominal for 0/1 labels,
  interval for grades, with the ``krippendorff`` package), over the items at least
  two people labelled;
- the disagreements: labels on the other side of ``cut`` from the judge's score.

A label of a metric the judge did not score on that case is counted under the
reason the results give (``not_judged``), never compared with a made-up score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragproof.labels.cases import as_results, judged_claims
from pytest_ragproof.labels.model import LABELLED_METRICS, Label
from pytest_ragproof.labels.people import LabelKind, PeopleAgreement, label_kind, people_of
from pytest_ragproof.labels.state import case_index, current_labels
from pytest_ragproof.numeric import is_binary

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, Results

__all__ = [
    "AgreementReport",
    "ClaimFigures",
    "Disagreement",
    "JudgeFigures",
    "MetricAgreement",
    "agreement",
]


@dataclass(frozen=True)
class Disagreement:
    """A label on the other side of the cut from the judge's score."""

    case_id: str
    pipeline: str
    metric: str
    judge_score: float
    verdict: float
    reviewer: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "pipeline": self.pipeline,
            "metric": self.metric,
            "judge_score": self.judge_score,
            "verdict": self.verdict,
            "reviewer": self.reviewer,
        }


@dataclass(frozen=True)
class JudgeFigures:
    """The judge against one reviewer's labels (``reviewer``) or everyone's (None)."""

    reviewer: str | None
    labels: LabelKind
    labelled: int  # fresh labels of the metric
    measured: int  # of them, with a judge score
    not_judged: dict[str, int]  # no judge score on the case: reason -> labels
    cut: float | None
    confusion: dict[str, int] | None
    figures: dict[str, dict[str, Any]]  # name -> value, undefined, ci95, resamples

    def value(self, name: str) -> float | None:
        entry = self.figures.get(name)
        return None if entry is None else entry["value"]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "labels": self.labels,
            "labelled": self.labelled,
            "measured": self.measured,
            "not_judged": dict(self.not_judged),
        }
        if self.cut is not None:
            out["cut"] = self.cut
            out["confusion"] = self.confusion
        out["figures"] = self.figures
        return out


@dataclass(frozen=True)
class ClaimFigures:
    """Claim verdicts people gave (faithfulness) against the judge's verdict of that claim."""

    given: int
    agree: int
    overruled: int
    missing: int  # the index is past the judge's claim list

    def to_dict(self) -> dict[str, int]:
        return {
            "given": self.given,
            "agree": self.agree,
            "overruled": self.overruled,
            "missing": self.missing,
        }


@dataclass(frozen=True)
class MetricAgreement:
    metric: str
    judge: JudgeFigures  # all reviewers together
    by_reviewer: dict[str, JudgeFigures]
    people: PeopleAgreement
    claims: ClaimFigures | None = None
    #: Graded labels mixed with 0/1 ones: the judge against the 0/1 labels alone (all
    #: reviewers), what a κ floor is held to; None when the labels are all 0/1 or all grades.
    binary_part: JudgeFigures | None = None

    def kappa_basis(self) -> JudgeFigures | None:
        """The 0/1 figures a κ floor is held to; None when no label is 0 or 1."""
        return self.judge if self.judge.labels == "binary" else self.binary_part

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metric": self.metric,
            "all": self.judge.to_dict(),
            "by_reviewer": {name: f.to_dict() for name, f in self.by_reviewer.items()},
            "people": self.people.to_dict(),
        }
        if self.binary_part is not None:
            out["binary_part"] = self.binary_part.to_dict()
        if self.claims is not None:
            out["claims"] = self.claims.to_dict()
        return out


@dataclass(frozen=True)
class AgreementReport:
    """Judges against people, per metric and reviewer; see the module's text."""

    metrics: tuple[MetricAgreement, ...]
    disagreements: tuple[Disagreement, ...]
    reviewers: tuple[str, ...]
    fresh: int
    stale: dict[str, int]  # reason -> labels
    unmatched: int
    withdrawn: int
    cut: float
    resamples: int
    seed: int
    _by_name: dict[str, MetricAgreement] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for entry in self.metrics:
            self._by_name[entry.metric] = entry

    def metric(self, name: str) -> MetricAgreement | None:
        return self._by_name.get(name)

    @property
    def stale_total(self) -> int:
        return sum(self.stale.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": {
                "fresh": self.fresh,
                "stale": dict(self.stale),
                "unmatched": self.unmatched,
                "withdrawn": self.withdrawn,
                "reviewers": list(self.reviewers),
            },
            "cut": self.cut,
            "bootstrap": {
                "method": "percentile",
                "level": 0.95,
                "resamples": self.resamples,
                "seed": self.seed,
            },
            "metrics": {m.metric: m.to_dict() for m in self.metrics},
            "disagreements": [d.to_dict() for d in self.disagreements],
        }


@dataclass
class _Pair:
    label: Label
    score: float | None
    reason: str | None  # why the judge has no score


def _judge_figures(
    reviewer: str | None,
    pairs: Sequence[_Pair],
    kind: LabelKind,
    cut: float,
    resamples: int,
    seed: int,
) -> JudgeFigures:
    from pytest_ragproof.judges.agreement import measure

    scored = [p for p in pairs if p.score is not None]
    not_judged: dict[str, int] = {}
    for p in pairs:
        if p.score is None:
            reason = p.reason or "not_judged"
            not_judged[reason] = not_judged.get(reason, 0) + 1
    labels = [float(p.label.verdict) for p in scored if p.label.verdict is not None]
    scores = [p.score for p in scored if p.score is not None]
    found = measure(
        labels, scores, binary=kind == "binary", cut=cut, resamples=resamples, seed=seed
    )
    return JudgeFigures(
        reviewer=reviewer,
        labels=kind,
        labelled=len(pairs),
        measured=len(scored),
        not_judged=not_judged,
        cut=found.get("cut"),
        confusion=found.get("confusion"),
        figures=found["figures"],
    )


def _claim_figures(pairs: Sequence[_Pair], cases: Mapping[tuple[str, str], Case]) -> ClaimFigures:
    given = agree = overruled = missing = 0
    for p in pairs:
        if not p.label.claims:
            continue
        judged = judged_claims(cases[(p.label.pipeline, p.label.case_id)], p.label.metric)
        by_index = {c.index: c.verdict for c in judged}
        for claim in p.label.claims:
            given += 1
            theirs = by_index.get(claim.index)
            if theirs is None:
                missing += 1
            elif theirs == claim.verdict:
                agree += 1
            else:
                overruled += 1
    return ClaimFigures(given, agree, overruled, missing)


def _judge_failed(case: Case) -> bool:
    """Did a judge step fail on the case (a ``judge_error`` entry that is not empty)?"""
    error = case.judge_error
    return error is not None and bool(error.model_dump(exclude_unset=True))


def agreement(
    results_document: Results | Mapping[str, Any],
    labels: Iterable[Label],
    *,
    cut: float = 0.5,
    resamples: int = 1000,
    seed: int = 0,
) -> AgreementReport:
    """The judges of ``results_document`` against people's ``labels`` (see the module)."""
    results = as_results(results_document)
    state = current_labels(list(labels), results)
    cases = case_index(results)
    pairs_of: dict[str, list[_Pair]] = {}
    for label in state.fresh:
        case = cases[(label.pipeline, label.case_id)]
        score = case.metrics.get(label.metric)
        reason = None
        if score is None:
            reason = case.not_judged.get(label.metric) or (
                "judge_error" if _judge_failed(case) else "not_judged"
            )
        pairs_of.setdefault(label.metric, []).append(
            _Pair(label, None if score is None else float(score), reason)
        )
    metrics: list[MetricAgreement] = []
    disagreements: list[Disagreement] = []
    for metric in LABELLED_METRICS:
        pairs = pairs_of.get(metric)
        if not pairs:
            continue
        kind = label_kind(float(p.label.verdict) for p in pairs if p.label.verdict is not None)
        reviewers = sorted({p.label.reviewer for p in pairs})
        by_reviewer = {
            name: _judge_figures(
                name, [p for p in pairs if p.label.reviewer == name], kind, cut, resamples, seed
            )
            for name in reviewers
        }
        units: dict[tuple[str, str], dict[str, float]] = {}
        for p in pairs:
            assert p.label.verdict is not None
            units.setdefault((p.label.pipeline, p.label.case_id), {})[p.label.reviewer] = float(
                p.label.verdict
            )
        claims = _claim_figures(pairs, cases) if metric in ("faithfulness",) else None
        given = [(p, p.label.verdict) for p in pairs if p.label.verdict is not None]
        zero_one = [p for p, verdict in given if is_binary((verdict,))]
        binary_part = None
        if kind == "graded" and zero_one:
            # One reviewer's grade must not take the 0/1 labels of the others out of a gate.
            binary_part = _judge_figures(None, zero_one, "binary", cut, resamples, seed)
        metrics.append(
            MetricAgreement(
                metric=metric,
                judge=_judge_figures(None, pairs, kind, cut, resamples, seed),
                by_reviewer=by_reviewer,
                people=people_of(units, kind),
                claims=claims if claims is not None and claims.given else None,
                binary_part=binary_part,
            )
        )
        for p in pairs:
            verdict = p.label.verdict
            if p.score is not None and verdict is not None and (p.score >= cut) != (verdict >= cut):
                disagreements.append(
                    Disagreement(
                        p.label.case_id,
                        p.label.pipeline,
                        metric,
                        p.score,
                        verdict,
                        p.label.reviewer,
                    )
                )
    order = {name: i for i, name in enumerate(LABELLED_METRICS)}
    disagreements.sort(key=lambda d: (order[d.metric], d.pipeline, d.case_id, d.reviewer))
    return AgreementReport(
        metrics=tuple(metrics),
        disagreements=tuple(disagreements),
        reviewers=tuple(state.reviewers()),
        fresh=len(state.fresh),
        stale=state.stale_counts(),
        unmatched=len(state.unmatched),
        withdrawn=state.withdrawn,
        cut=cut,
        resamples=resamples,
        seed=seed,
    )
