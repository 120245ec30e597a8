"""A results review: the results document, the labels file, and what each case needs.

:class:`ResultsReview` re-reads the results file when it changes on disk (a new run
while the app is open: labels given on the old answers then show as stale) and the
labels file on every page (another reviewer may append to it). The app appends to
the labels file only, through :func:`pytest_ragproof.labels.append_label`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError, LabelError
from pytest_ragproof.labels import (
    Label,
    LabelState,
    append_label,
    current_labels,
    judged_metrics,
    parse_labels,
    read_labels,
)
from pytest_ragproof.review.order import natural_order

if TYPE_CHECKING:
    from pytest_ragproof.labels import AgreementReport
    from pytest_ragproof.results.models import Case, Results

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
    """The results and labels as one page sees them.

    ``results`` is the document's typed model, which the pages and
    :mod:`pytest_ragproof.labels` (labels, digests, agreement) read.
    """

    results: Results
    labels: Sequence[Label]
    state: LabelState
    reviewer: str
    metrics: Sequence[Sequence[tuple[str, str]]] = field(default_factory=list)
    _by_case: dict[tuple[str, str], list[Label]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", [judged_metrics(c) for c in self.results.cases])
        for label in self.state.fresh:
            self._by_case.setdefault((label.case_id, label.pipeline), []).append(label)

    @property
    def cases(self) -> list[Case]:
        """The case entries (typed), in the results' order."""
        return self.results.cases

    def fresh_of(self, case: Case) -> list[Label]:
        """Every reviewer's fresh labels of one case (one pipeline), in file order."""
        return self._by_case.get((case.id, case.pipeline), [])

    @cached_property
    def _reviewed(self) -> list[bool]:
        out = []
        for case, metrics in zip(self.cases, self.metrics, strict=True):
            case_id, pipeline = case.id, case.pipeline
            label_of = self.state.label_of
            out.append(
                bool(metrics)
                and all(
                    label_of(self.reviewer, case_id, pipeline, m) is not None for m, _ in metrics
                )
            )
        return out

    @cached_property
    def _disagree(self) -> list[bool]:
        out = []
        for case in self.cases:
            out.append(
                any(
                    label.verdict is not None
                    and disagrees(case.metrics.get(label.metric), float(label.verdict))
                    for label in self.fresh_of(case)
                )
            )
        return out

    def reviewed(self, index: int) -> bool:
        """Has this reviewer a fresh label of every judged metric of case ``index``?"""
        return self._reviewed[index]

    def disagreement(self, index: int) -> bool:
        """Does a fresh label of case ``index`` disagree with the judge's score?"""
        return self._disagree[index]

    @cached_property
    def sequence(self) -> list[int]:
        """0-based indexes of every case in the order the app lists them: by pipeline (in
        the results' order), then by case id in natural order (``qa-1, qa-3, qa-11``)."""
        ids = [c.id for c in self.cases]
        return natural_order(ids, [c.pipeline for c in self.cases])

    def order(self, name: str) -> list[int]:
        """0-based indexes of the cases filter ``name`` shows, in :attr:`sequence`."""
        every = self.sequence
        if name == "failing":
            return [i for i in every if self.cases[i].status in ("failed", "error")]
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


@dataclass(frozen=True)
class _LabelsRead:
    file: tuple[int, int]  # st_dev, st_ino
    size: int  # bytes parsed
    labels: list[Label]


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LabelError(
            "the file is not UTF-8 text", source=str(path), hint="a labels file is UTF-8 JSONL"
        ) from None


class ResultsReview:
    """One results file under review and the labels file verdicts are appended to."""

    def __init__(self, results: Path, labels: Path) -> None:
        self.results_path = results
        self.labels_path = labels
        self._stamp: tuple[int, int] | None = None
        self._results: Results | None = None
        self._labels: _LabelsRead | None = None
        self._state: tuple[Any, LabelState] | None = None
        self._snapshot: tuple[Any, Snapshot] | None = None
        self._agreement: tuple[Any, AgreementReport] | None = None
        self.results()  # refuse a redacted or unreadable file now

    @classmethod
    def open(cls, results: Path, labels: Path) -> ResultsReview:
        if labels.resolve() == results.resolve():
            raise ConfigError(f"--labels {labels} is the results file itself; name a labels file")
        review = cls(results, labels)
        if labels.exists():
            read_labels(labels)  # a file that is not a labels file is refused, never appended to
        return review

    def results(self) -> Results:
        """The results file's typed model (re-read when it changed on disk); ConfigError
        for a redacted file or a part of the wrong type (named)."""
        from pytest_ragproof.results.document import read_results
        from pytest_ragproof.results.schema import results_model

        try:
            info = os.stat(self.results_path)
        except OSError as exc:
            raise ConfigError(
                f"cannot read results file {self.results_path}: {type(exc).__name__}"
            ) from None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._stamp or self._results is None:
            document = read_results(self.results_path)
            results = results_model(document, str(self.results_path))
            if results.redacted:
                raise ConfigError(
                    f"{self.results_path} was written with --ragproof-redact: it holds no "
                    "question, answer, context or judge reason, so there is nothing to review. "
                    "Run the tests again without --ragproof-redact to review them"
                )
            self._results, self._stamp = results, stamp
        return self._results

    def labels(self) -> list[Label]:
        """Every line of the labels file, parsed; only lines appended since are parsed anew.

        The file is append-only while the app runs; a file replaced or shortened (a
        ``ragproof labels merge`` over it) is read again whole.
        """
        try:
            info = os.stat(self.labels_path)
        except FileNotFoundError:
            self._labels = None
            return []
        except OSError as exc:
            raise ConfigError(
                f"cannot read labels file {self.labels_path}: {type(exc).__name__}"
            ) from None
        cached = self._labels
        same_file = cached is not None and cached.file == (info.st_dev, info.st_ino)
        if cached is not None and same_file and info.st_size == cached.size:
            return cached.labels
        if cached is not None and same_file and info.st_size > cached.size:
            with self.labels_path.open("rb") as fh:
                fh.seek(cached.size)
                tail = fh.read()
            try:
                added = parse_labels(tail.decode("utf-8"), str(self.labels_path))
            except (UnicodeDecodeError, LabelError):
                added = None  # read whole: the error then names the file's own line
            if added is not None and tail.endswith(b"\n"):
                labels = [*cached.labels, *added]
                self._labels = _LabelsRead(
                    (info.st_dev, info.st_ino), cached.size + len(tail), labels
                )
                return labels
        with self.labels_path.open("rb") as fh:
            data = fh.read()
        labels = parse_labels(_decode(data, self.labels_path), str(self.labels_path))
        self._labels = _LabelsRead((info.st_dev, info.st_ino), len(data), labels)
        return labels

    def snapshot(self, reviewer: str) -> Snapshot:
        """The results and labels now; kept while neither file changes."""
        results = self.results()
        labels = self.labels()
        key = (self._stamp, len(labels), id(self._labels), reviewer)
        if self._snapshot is not None and self._snapshot[0] == key:
            return self._snapshot[1]
        state = self._state
        if state is None or state[0] != key[:3]:
            state = (key[:3], current_labels(labels, results))
            self._state = state
        snapshot = Snapshot(results, labels, state[1], reviewer)
        self._snapshot = (key, snapshot)
        return snapshot

    def agreement(self) -> AgreementReport:
        """:func:`pytest_ragproof.labels.agreement` now; kept while neither file changes."""
        from pytest_ragproof.labels import agreement

        snapshot = self.snapshot("")
        key = self._snapshot[0][:3] if self._snapshot is not None else None
        if self._agreement is None or self._agreement[0] != key:
            self._agreement = (key, agreement(snapshot.results, snapshot.labels))
        return self._agreement[1]

    def append(self, label: Label) -> None:
        append_label(self.labels_path, label)
