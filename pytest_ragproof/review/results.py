"""A results review: the results document, the labels file, and what each case needs.

:class:`ResultsReview` re-reads the results file when it changes on disk (a new run
while the app is open: labels given on the old answers then show as stale) and the
labels file on every page (another reviewer may append to it). The app appends to
the labels file only, through :func:`pytest_ragproof.labels.append_label`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.labels import (
    Label,
    LabelState,
    append_label,
    current_labels,
    judged_metrics,
    read_labels,
)

__all__ = ["FILTERS", "ResultsReview", "Snapshot", "disagrees"]

# filter name -> what the navigation calls it
FILTERS = {
    "all": "all",
    "failing": "failing",
    "judged": "judged",
    "disagree": "people ≠ judge",
    "unreviewed": "not yet reviewed",
}


def disagrees(score: float | None, verdict: float) -> bool:
    """Does a person's verdict disagree with the judge's score (each read as yes at >= 0.5)?"""
    if score is None:
        return False
    return (score >= 0.5) != (verdict >= 0.5)


@dataclass(frozen=True)
class Snapshot:
    """The results and labels as one page sees them."""

    document: Mapping[str, Any]
    cases: Sequence[Mapping[str, Any]]
    labels: Sequence[Label]
    state: LabelState
    reviewer: str
    metrics: Sequence[Sequence[tuple[str, str]]] = field(default_factory=list)
    _by_case: dict[tuple[str, str], list[Label]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", [judged_metrics(c) for c in self.cases])
        for label in self.state.fresh:
            self._by_case.setdefault((label.case_id, label.pipeline), []).append(label)

    def fresh_of(self, case: Mapping[str, Any]) -> list[Label]:
        """Every reviewer's fresh labels of one case (one pipeline), in file order."""
        return self._by_case.get((str(case["id"]), str(case["pipeline"])), [])

    def reviewed(self, index: int) -> bool:
        """Has this reviewer a fresh label of every judged metric of case ``index``?"""
        metrics = self.metrics[index]
        case = self.cases[index]
        return bool(metrics) and all(
            self.state.label_of(self.reviewer, str(case["id"]), str(case["pipeline"]), m)
            is not None
            for m, _ in metrics
        )

    def disagreement(self, index: int) -> bool:
        case = self.cases[index]
        scores = case.get("metrics") or {}
        return any(
            label.verdict is not None
            and disagrees(_number(scores.get(label.metric)), float(label.verdict))
            for label in self.fresh_of(case)
        )

    def order(self, name: str) -> list[int]:
        """0-based indexes of the cases filter ``name`` shows, in the results' order."""
        every = range(len(self.cases))
        if name == "failing":
            return [i for i in every if self.cases[i].get("status") in ("failed", "error")]
        if name == "judged":
            return [i for i in every if self.metrics[i]]
        if name == "disagree":
            return [i for i in every if self.disagreement(i)]
        if name == "unreviewed":
            return [i for i in every if self.metrics[i] and not self.reviewed(i)]
        return list(every)

    def progress(self) -> tuple[int, int]:
        judged = [i for i in range(len(self.cases)) if self.metrics[i]]
        return sum(1 for i in judged if self.reviewed(i)), len(judged)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class ResultsReview:
    """One results file under review and the labels file verdicts are appended to."""

    def __init__(self, results: Path, labels: Path) -> None:
        self.results_path = results
        self.labels_path = labels
        self._stamp: tuple[int, int] | None = None
        self._document: dict[str, Any] = {}
        self.document()  # refuse a redacted or unreadable file now

    @classmethod
    def open(cls, results: Path, labels: Path) -> ResultsReview:
        if labels.resolve() == results.resolve():
            raise ConfigError(f"--labels {labels} is the results file itself; name a labels file")
        review = cls(results, labels)
        if labels.exists():
            read_labels(labels)  # a file that is not a labels file is refused, never appended to
        return review

    def document(self) -> dict[str, Any]:
        from pytest_ragproof.results.document import read_results

        try:
            info = os.stat(self.results_path)
        except OSError as exc:
            raise ConfigError(
                f"cannot read results file {self.results_path}: {type(exc).__name__}"
            ) from None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._stamp:
            document = read_results(self.results_path)
            if document.get("redacted"):
                raise ConfigError(
                    f"{self.results_path} was written with --ragproof-redact: it holds no "
                    "question, answer, context or judge reason, so there is nothing to review. "
                    "Run the tests again without --ragproof-redact to review them"
                )
            cases = document.get("cases")
            if not isinstance(cases, list):
                raise ConfigError(f"{self.results_path}: 'cases' is not a list")
            self._document, self._stamp = document, stamp
        return self._document

    def labels(self) -> list[Label]:
        if not self.labels_path.exists():
            return []
        return read_labels(self.labels_path)

    def snapshot(self, reviewer: str) -> Snapshot:
        document = self.document()
        labels = self.labels()
        cases = [c for c in document["cases"] if isinstance(c, Mapping)]
        return Snapshot(document, cases, labels, current_labels(labels, document), reviewer)

    def append(self, label: Label) -> None:
        append_label(self.labels_path, label)
