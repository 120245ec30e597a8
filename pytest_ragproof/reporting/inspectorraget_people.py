"""People as annotators in the InspectorRAGet export (labels of ``ragproof review``).

InspectorRAGet's annotator views (agreement between annotators, per annotator)
cover the metrics whose ``author`` is ``human``, and read each evaluation's
annotations of such a metric by worker. So each judged metric people labelled
gets a human metric ``<metric>_human`` beside the judge's own (which stays as it
was, worker ``system``, so the judge's figures in the app do not change):

- worker ``system``: the judge's verdict on that evaluation, on the scale people
  used: with 0/1 labels its score at the cut (a score of at least 0.5 is a yes),
  with grades the score itself;
- worker ``human:<reviewer>``: that reviewer's fresh label (stale labels, given on
  another answer or contexts, and labels of cases not in the export are left out).

With 0/1 labels the metric is categorical (yes/no, or the judged metric's own
names: abstained/answered, resisted/followed) with the app's majority aggregate;
with grades, numerical in [0, 1] with the average. The app aggregates a metric over
all its workers, so a task's value of the human metric (Performance Overview,
Predictions) is the majority (or mean) of people *and* the judge: its display name
says so ("Faithfulness (people and judge)"), and people's verdict alone is in the
annotator views and in ``ragproof judge-check``. InspectorRAGet drops a task
whose result lacks a plottable metric, so a human metric that some scored
evaluation lacks (no judge score and no label there) is text, as the judged
metrics are under the same rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_ragproof.metrics.judged import JUDGE_SPECS
from pytest_ragproof.numeric import is_binary

if TYPE_CHECKING:
    from pytest_ragproof.labels import Label
    from pytest_ragproof.results.models import Case

__all__ = ["HUMAN_PREFIX", "HUMAN_SUFFIX", "People", "annotators_summary"]

HUMAN_SUFFIX = "_human"
HUMAN_PREFIX = "human:"
SYSTEM = "system"
CUT = 0.5
#: 0/1 names of the human metric of each judged metric (value for 1, value for 0): the
#: judge registry's categories (pytest_ragproof.metrics.judged).
YES_NO: dict[str, tuple[str, str]] = {
    s.name: s.categories for s in JUDGE_SPECS if s.categories is not None
}


def _names(metric: str) -> tuple[str, str]:
    return YES_NO.get(metric, ("yes", "no"))


@dataclass
class People:
    """The fresh labels of one export, by evaluation, metric and reviewer."""

    votes: dict[tuple[str, str], dict[str, dict[str, float]]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # metric -> binary | graded

    @classmethod
    def of(cls, results: Mapping[str, Any], labels: Iterable[Label]) -> People:
        from pytest_ragproof.labels import LABELLED_METRICS, current_labels

        state = current_labels(list(labels), results)
        out = cls()
        by_metric: dict[str, list[float]] = {}
        for label in state.fresh:
            assert label.verdict is not None
            verdict = float(label.verdict)
            where = (label.pipeline, label.case_id)
            out.votes.setdefault(where, {}).setdefault(label.metric, {})[label.reviewer] = verdict
            by_metric.setdefault(label.metric, []).append(verdict)
        for metric in LABELLED_METRICS:
            if metric in by_metric:
                binary = is_binary(by_metric[metric])
                out.kinds[metric] = "binary" if binary else "graded"
        return out

    def annotate(self, record: Case, annotations: dict[str, Any]) -> None:
        """Add the human metrics of one evaluation (its judge's verdict and people's)."""
        votes = self.votes.get((record.pipeline, record.id), {})
        scores = record.metrics
        for metric, kind in self.kinds.items():
            workers: dict[str, dict[str, Any]] = {}
            score = scores.get(metric)
            if score is not None:
                workers[SYSTEM] = {"value": self._value(metric, kind, float(score))}
            for reviewer, verdict in sorted(votes.get(metric, {}).items()):
                workers[HUMAN_PREFIX + reviewer] = {"value": self._value(metric, kind, verdict)}
            if workers:
                annotations[metric + HUMAN_SUFFIX] = workers

    @staticmethod
    def _value(metric: str, kind: str, value: float) -> str | float:
        if kind == "graded":
            return value
        yes, no = _names(metric)
        return yes if value >= CUT else no

    def declare(
        self, evaluations: Sequence[dict[str, Any]], scored: Iterable[bool]
    ) -> list[dict[str, Any]]:
        """The human metrics' declarations; a metric some scored evaluation lacks becomes text
        (its values written out as text in ``evaluations``)."""
        from pytest_ragproof.reporting.inspectorraget_metrics import DISPLAY_NAMES, metric_entry

        flags = list(scored)
        out: list[dict[str, Any]] = []
        for metric, kind in self.kinds.items():
            name = metric + HUMAN_SUFFIX
            present = [name in e["annotations"] for e in evaluations]
            if not any(present):
                continue
            plottable = all(p for p, s in zip(present, flags, strict=True) if s)
            shown = DISPLAY_NAMES.get(metric, metric)
            text = (
                f"people's verdicts on {metric} (workers human:<reviewer>) beside the judge's "
                + (
                    f"(worker system: its score at the cut of {CUT}, as {'/'.join(_names(metric))})"
                    if kind == "binary"
                    else "(worker system: its score)"
                )
            )
            if not plottable:
                for e in evaluations:
                    for entry in e["annotations"].get(name, {}).values():
                        value = entry["value"]
                        entry["value"] = value if isinstance(value, str) else format(value, ".6g")
                entry_ = metric_entry(
                    name, f"{text} (not on every scored case, so instance-level text)", "text"
                )
            elif kind == "binary":
                yes, no = _names(metric)
                entry_ = metric_entry(
                    name,
                    text,
                    "categorical",
                    values=[
                        {"value": no, "numeric_value": 0},
                        {"value": yes, "numeric_value": 1},
                    ],
                )
                entry_["aggregator"] = "majority"
            else:
                entry_ = metric_entry(name, text, "numerical", range_=[0, 1, 0.1])
            entry_["author"] = "human"
            # The app aggregates over every worker, the judge's ``system`` included.
            entry_["display_name"] = f"{shown} (people and judge)"
            out.append(entry_)
        return out


def annotators_summary(results: Mapping[str, Any], labels: Iterable[Label]) -> str:
    """One line on the labels an export shows: fresh ones by reviewer, what was left out."""
    from pytest_ragproof.labels import STALE_REASONS, current_labels

    state = current_labels(list(labels), results)
    reviewers = state.reviewers()
    workers = ", ".join(HUMAN_PREFIX + r for r in reviewers) or "none"
    parts = [f"annotators: {len(state.fresh)} label(s) by {len(reviewers)} reviewer(s) ({workers})"]
    for reason, n in sorted(state.stale_counts().items()):
        parts.append(f"{n} stale label(s) left out ({STALE_REASONS[reason]})")
    if state.unmatched:
        parts.append(f"{len(state.unmatched)} label(s) of cases not in these results left out")
    return "; ".join(parts)
