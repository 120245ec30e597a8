"""The labels that count against one results document: latest per key, fresh or stale.

:func:`latest` keeps the last line of each key (reviewer, dataset_sha256, case_id,
pipeline, metric) in file order (appends are in the order they were made; a merged
file is ordered by time) and drops the keys whose last line withdraws the label
(``verdict: null``). :func:`current_labels` then matches each label to its case in
the results (same case id and pipeline):

- **fresh**: the label's digest is the case's :func:`case_digest` and its dataset is
  the case's (or either side does not know its dataset): it counts;
- **stale**: the answer, contexts, question or reference changed since it was given
  (``digest``), or the case comes from another version of the dataset (``dataset``):
  never counted, reported;
- **unmatched**: no case of that id and pipeline in these results: not counted,
  reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pytest_ragproof.labels.cases import as_results, case_dataset_sha256, case_digest
from pytest_ragproof.labels.model import Label, LabelKey

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, Results

__all__ = ["LabelState", "StaleLabel", "case_index", "current_labels", "latest"]

StaleReason = Literal["digest", "dataset"]

#: What each stale reason means, for messages and pages.
STALE_REASONS: dict[str, str] = {
    "digest": "the answer, contexts, question or reference changed since it was given",
    "dataset": "it was given on another version of the dataset",
}


@dataclass(frozen=True)
class StaleLabel:
    label: Label
    reason: StaleReason


@dataclass(frozen=True)
class LabelState:
    """The labels of a labels file seen against one results document."""

    fresh: tuple[Label, ...]
    stale: tuple[StaleLabel, ...]
    unmatched: tuple[Label, ...]
    withdrawn: int  # keys whose latest line withdraws the label
    _index: dict[tuple[str, str, str, str], Label] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for label in self.fresh:
            self._index[(label.reviewer, label.case_id, label.pipeline, label.metric)] = label

    def reviewers(self) -> list[str]:
        """Every reviewer with a fresh label, sorted."""
        return sorted({label.reviewer for label in self.fresh})

    def by_reviewer(self) -> dict[str, list[Label]]:
        """Fresh labels per reviewer (reviewers sorted, labels in file order)."""
        out: dict[str, list[Label]] = {name: [] for name in self.reviewers()}
        for label in self.fresh:
            out[label.reviewer].append(label)
        return out

    def for_case(self, case_id: str, pipeline: str) -> list[Label]:
        """The fresh labels of one case of one pipeline (every reviewer and metric)."""
        return [
            label for label in self.fresh if label.case_id == case_id and label.pipeline == pipeline
        ]

    def label_of(self, reviewer: str, case_id: str, pipeline: str, metric: str) -> Label | None:
        """``reviewer``'s fresh label of one metric of one case, else None."""
        return self._index.get((reviewer, case_id, pipeline, metric))

    def stale_counts(self) -> dict[str, int]:
        """How many labels are stale, by reason (only the reasons that occur)."""
        out: dict[str, int] = {}
        for entry in self.stale:
            out[entry.reason] = out.get(entry.reason, 0) + 1
        return out


def latest(labels: Iterable[Label]) -> tuple[list[Label], int]:
    """The last label of each key, in the order of their last lines; and the withdrawn keys."""
    last: dict[LabelKey, Label] = {}
    for label in labels:
        last.pop(label.key, None)  # re-insert: the order is that of the latest lines
        last[label.key] = label
    kept = [label for label in last.values() if not label.withdrawn]
    return kept, len(last) - len(kept)


def case_index(results: Results) -> dict[tuple[str, str], Case]:
    """Each case of ``results`` by (pipeline, case id); the first entry of a key wins."""
    out: dict[tuple[str, str], Case] = {}
    for case in results.cases:
        out.setdefault((case.pipeline, case.id), case)
    return out


def current_labels(
    labels: Sequence[Label] | Iterable[Label], results: Results | Mapping[str, Any]
) -> LabelState:
    """Split the latest labels into fresh, stale and unmatched against ``results``.

    A results document written with ``--ragproof-redact`` keeps no answer or context to
    match labels with: :class:`ConfigError`.
    """
    results = as_results(results)
    if results.redacted:
        from pytest_ragproof.errors import ConfigError

        raise ConfigError(
            "the results were written with --ragproof-redact: they keep no answer or context, "
            "so labels cannot be matched with them; use the results of a run without it"
        )
    kept, withdrawn = latest(labels)
    cases = case_index(results)
    digests: dict[tuple[str, str], str] = {}
    fresh: list[Label] = []
    stale: list[StaleLabel] = []
    unmatched: list[Label] = []
    for label in kept:
        where = (label.pipeline, label.case_id)
        case = cases.get(where)
        if case is None:
            unmatched.append(label)
            continue
        sha = case_dataset_sha256(results, case)
        if label.dataset_sha256 is not None and sha is not None and label.dataset_sha256 != sha:
            stale.append(StaleLabel(label, "dataset"))
            continue
        if where not in digests:
            digests[where] = case_digest(case)
        if label.digest != digests[where]:
            stale.append(StaleLabel(label, "digest"))
            continue
        fresh.append(label)
    return LabelState(tuple(fresh), tuple(stale), tuple(unmatched), withdrawn)
