"""How people agree with each other on their labels of a judged metric.

Cohen's κ when exactly two reviewers gave 0/1 labels, otherwise Krippendorff's α
(nominal for 0/1 labels, interval for grades, with the ``krippendorff`` package), over
the items at least two people labelled. :func:`people_agreement` measures it from
labels alone (``ragproof labels merge``); :func:`pytest_ragproof.labels.agreement`
gives it per metric beside the judges' figures (:func:`people_of`). When it has no
value, :attr:`PeopleAgreement.undefined` says why (``PEOPLE_UNDEFINED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_ragproof.labels.model import LABELLED_METRICS, Label
from pytest_ragproof.labels.state import latest
from pytest_ragproof.numeric import is_binary

__all__ = [
    "PEOPLE_UNDEFINED",
    "LabelKind",
    "PeopleAgreement",
    "label_kind",
    "people_agreement",
    "people_of",
]

LabelKind = Literal["binary", "graded"]

#: Why agreement between people has no value.
PEOPLE_UNDEFINED = {
    "one_reviewer": "one reviewer only",
    "no_shared": "no item was labelled by two people",
    "single_value": "the reviewers used a single value on the shared items",
    "missing_extra": (
        "Krippendorff's α needs the 'krippendorff' package: pip install 'pytest-ragproof[review]'"
    ),
}


@dataclass(frozen=True)
class PeopleAgreement:
    """Agreement between the reviewers of one metric, over the items two or more labelled."""

    reviewers: tuple[str, ...]
    shared_items: int
    statistic: Literal["cohen_kappa", "krippendorff_alpha"] | None
    level: Literal["nominal", "interval"] | None
    value: float | None
    undefined: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reviewers": list(self.reviewers),
            "shared_items": self.shared_items,
            "statistic": self.statistic,
            "level": self.level,
            "value": self.value,
        }
        if self.undefined is not None:
            out["undefined"] = self.undefined
        return out


def _kappa(a: Sequence[float], b: Sequence[float]) -> float | None:
    from pytest_ragproof.judges.agreement import binary_figures

    return binary_figures(a, b)["kappa"]


def _alpha(rows: list[list[float | None]], level: Literal["nominal", "interval"]) -> float | None:
    import krippendorff

    data = [[float("nan") if v is None else v for v in row] for row in rows]
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    except ValueError:  # a single value in the domain
        return None


def people_of(units: Mapping[Any, Mapping[str, float]], kind: LabelKind) -> PeopleAgreement:
    """Agreement of reviewers over ``units`` (item -> reviewer -> verdict)."""
    reviewers = tuple(sorted({name for votes in units.values() for name in votes}))
    shared = [votes for votes in units.values() if len(votes) >= 2]
    level: Literal["nominal", "interval"] = "nominal" if kind == "binary" else "interval"
    if len(reviewers) < 2:
        return PeopleAgreement(reviewers, 0, None, None, None, PEOPLE_UNDEFINED["one_reviewer"])
    if len(reviewers) == 2 and kind == "binary":
        stat: Literal["cohen_kappa", "krippendorff_alpha"] = "cohen_kappa"
        first, second = reviewers
        value = _kappa([v[first] for v in shared], [v[second] for v in shared])
        level = "nominal"
    else:
        stat = "krippendorff_alpha"
        try:
            import krippendorff  # noqa: F401
        except ImportError:
            return PeopleAgreement(
                reviewers, len(shared), stat, level, None, PEOPLE_UNDEFINED["missing_extra"]
            )
        value = (
            _alpha([[votes.get(r) for votes in shared] for r in reviewers], level)
            if shared
            else None
        )
    if not shared:
        return PeopleAgreement(reviewers, 0, stat, level, None, PEOPLE_UNDEFINED["no_shared"])
    if value is None:
        return PeopleAgreement(
            reviewers, len(shared), stat, level, None, PEOPLE_UNDEFINED["single_value"]
        )
    return PeopleAgreement(reviewers, len(shared), stat, level, round(value, 6))


def label_kind(verdicts: Iterable[float]) -> LabelKind:
    return "binary" if is_binary(verdicts) else "graded"


def people_agreement(labels: Iterable[Label]) -> dict[str, PeopleAgreement]:
    """Agreement between people per metric, from labels alone (``ragproof labels merge``).

    The latest label of each key counts (withdrawn ones do not); two labels are of the
    same item when they share dataset, case, pipeline and digest, i.e. the people saw
    the same answer and contexts.
    """
    kept, _ = latest(labels)
    by_metric: dict[str, dict[tuple[Any, ...], dict[str, float]]] = {}
    for label in kept:
        assert label.verdict is not None
        unit = (label.dataset_sha256, label.pipeline, label.case_id, label.digest)
        by_metric.setdefault(label.metric, {}).setdefault(unit, {})[label.reviewer] = float(
            label.verdict
        )
    out: dict[str, PeopleAgreement] = {}
    for metric in LABELLED_METRICS:
        units = by_metric.get(metric)
        if units:
            kind = label_kind(v for votes in units.values() for v in votes.values())
            out[metric] = people_of(units, kind)
    return out
