"""The InspectorRAGet experiment file, as a pydantic model, and its validation.

Every rule InspectorRAGet's documentation states is checked here:

- models: unique ``model_id`` and unique ``name``;
- metrics: unique ``name``; ``numerical`` needs ``range`` ``[start, end, bin_size]``;
  ``categorical`` needs ``values``, each with ``value`` and ``numeric_value``;
  ``text`` metrics are instance-level only;
- documents: unique ``document_id``, each with a (non-empty) ``text``;
- filters: fields that every task defines;
- tasks: unique ``task_id``; ``task_type`` one of ``question_answering``,
  ``conversation``, ``rag``; ``input`` utterances with ``speaker`` ``user`` or
  ``agent`` and a ``text``; ``contexts`` reference existing documents;
  ``targets`` carry a ``text``;
- evaluations: exactly one per model and task (M × T), each with a
  ``model_response``; ``annotations`` keyed by a declared metric, then by worker
  id, each worker entry a dictionary with at least ``value``; the optional
  per-result ``contexts`` (what that model retrieved) reference existing documents.

The app also reads a metric's optional ``order`` (``ascending``, its default, or
``descending`` for a metric where lower values are better) for its rankings.

Beyond the documentation, and because InspectorRAGet drops a task when any of
its results lacks a numerical or categorical metric, every evaluation must
annotate every such metric, with one ragproof convention: an evaluation whose
``status`` annotation is ``error`` or ``not_run`` has no scores (nothing is
invented), so it may lack them; InspectorRAGet then lists that task as
disqualified, which is how a crash shows there. Annotation values are checked
against the metric's type (a declared category, a finite number, a string).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragproof.errors import RagproofError

__all__ = [
    "UNSCORED_STATUSES",
    "InspectorRagetExport",
    "InspectorRagetFormatError",
    "validate_export",
]

STATUS_METRIC = "status"
UNSCORED_STATUSES: frozenset[str] = frozenset({"error", "not_run"})

NonEmpty = Annotated[str, Field(min_length=1)]


class InspectorRagetFormatError(RagproofError):
    """An InspectorRAGet export breaks a rule of the format (the message lists which)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Model(_Strict):
    model_id: NonEmpty
    name: NonEmpty
    owner: str


class _Metric(_Strict):
    name: NonEmpty
    display_name: str | None = None
    description: str | None = None
    author: Literal["algorithm", "human"] | None = None


class NumericalMetric(_Metric):
    type: Literal["numerical"]
    aggregator: str | None = None
    order: Literal["ascending", "descending"] | None = None
    range: tuple[float, float, float]

    @model_validator(mode="after")
    def _check_range(self) -> NumericalMetric:
        start, end, bin_size = self.range
        if not all(math.isfinite(x) for x in self.range):
            raise ValueError("range values must be finite numbers")
        if not start < end or not bin_size > 0:
            raise ValueError("range must be [start, end, bin_size] with start < end, bin_size > 0")
        return self


class CategoricalValue(_Strict):
    value: str
    display_value: str | None = None
    numeric_value: float


class CategoricalMetric(_Metric):
    type: Literal["categorical"]
    aggregator: str | None = None
    order: Literal["ascending", "descending"] | None = None
    values: list[CategoricalValue] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_values(self) -> CategoricalMetric:
        _unique((v.value for v in self.values), f"value of categorical metric {self.name!r}")
        return self


class TextMetric(_Metric):
    type: Literal["text"]


Metric = Annotated[NumericalMetric | CategoricalMetric | TextMetric, Field(discriminator="type")]


class Document(_Strict):
    document_id: NonEmpty
    text: Annotated[str, Field(min_length=1, pattern=r"\S")]
    title: str | None = None


class Utterance(_Strict):
    speaker: Literal["user", "agent"]
    text: str


class ContextRef(_Strict):
    document_id: NonEmpty


class Target(_Strict):
    text: str


class Task(BaseModel):
    # Tasks may carry further fields (question_type, tags, ...) used by ``filters``.
    model_config = ConfigDict(extra="allow", frozen=True)

    task_id: NonEmpty
    task_type: Literal["question_answering", "conversation", "rag"]
    input: list[Utterance] = Field(min_length=1)
    contexts: list[ContextRef] = Field(default_factory=list)
    targets: list[Target] = Field(default_factory=list)
    category: str | None = None


class WorkerAnnotation(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    value: Any


class Evaluation(_Strict):
    task_id: NonEmpty
    model_id: NonEmpty
    model_response: str
    contexts: list[ContextRef] | None = None
    annotations: dict[str, dict[NonEmpty, WorkerAnnotation]]


class InspectorRagetExport(_Strict):
    """A whole experiment file; the validators enforce the cross-section rules."""

    name: NonEmpty
    description: str
    timestamp: NonEmpty
    models: list[Model]
    metrics: list[Metric]
    documents: list[Document]
    filters: list[NonEmpty] = Field(default_factory=list)
    tasks: list[Task]
    evaluations: list[Evaluation]

    @model_validator(mode="after")
    def _cross_checks(self) -> InspectorRagetExport:
        _unique((m.model_id for m in self.models), "model_id")
        _unique((m.name for m in self.models), "model name")
        _unique((m.name for m in self.metrics), "metric name")
        _unique((d.document_id for d in self.documents), "document_id")
        _unique((t.task_id for t in self.tasks), "task_id")
        documents = {d.document_id for d in self.documents}
        for task in self.tasks:
            for ctx in task.contexts:
                if ctx.document_id not in documents:
                    raise ValueError(
                        f"task {task.task_id!r}: context {ctx.document_id!r} is not in documents"
                    )
            present = set(type(task).model_fields) | set(task.model_extra or {})
            missing = [f for f in self.filters if f not in present or getattr(task, f) is None]
            if missing:
                raise ValueError(f"task {task.task_id!r} lacks filter field(s) {missing}")
        for ev in self.evaluations:
            for ctx in ev.contexts or []:
                if ctx.document_id not in documents:
                    raise ValueError(
                        f"evaluation (task {ev.task_id!r}, model {ev.model_id!r}): context "
                        f"{ctx.document_id!r} is not in documents"
                    )
        self._check_evaluations()
        return self

    def _check_evaluations(self) -> None:
        models = {m.model_id for m in self.models}
        tasks = {t.task_id for t in self.tasks}
        metrics = {m.name: m for m in self.metrics}
        plottable = [m.name for m in self.metrics if not isinstance(m, TextMetric)]
        seen: set[tuple[str, str]] = set()
        for ev in self.evaluations:
            where = f"evaluation (task {ev.task_id!r}, model {ev.model_id!r})"
            if ev.task_id not in tasks:
                raise ValueError(f"{where}: unknown task_id")
            if ev.model_id not in models:
                raise ValueError(f"{where}: unknown model_id")
            if (ev.task_id, ev.model_id) in seen:
                raise ValueError(f"{where}: more than one evaluation for this task and model")
            seen.add((ev.task_id, ev.model_id))
            for name, workers in ev.annotations.items():
                metric = metrics.get(name)
                if metric is None:
                    raise ValueError(f"{where}: annotation for undeclared metric {name!r}")
                if not workers:
                    raise ValueError(f"{where}: annotation {name!r} has no worker entry")
                for worker, entry in workers.items():
                    _check_value(metric, entry.value, f"{where}, {name!r} by {worker!r}")
            if not _unscored(ev):
                absent = [m for m in plottable if m not in ev.annotations]
                if absent:
                    raise ValueError(f"{where}: no annotation for metric(s) {absent}")
        expected = len(models) * len(tasks)
        if len(self.evaluations) != expected:
            raise ValueError(
                f"evaluations must cover every model and task: {len(self.evaluations)} "
                f"given, {len(models)} model(s) x {len(tasks)} task(s) = {expected} expected"
            )


def _unscored(ev: Evaluation) -> bool:
    workers = ev.annotations.get(STATUS_METRIC, {})
    return any(entry.value in UNSCORED_STATUSES for entry in workers.values())


def _check_value(
    metric: NumericalMetric | CategoricalMetric | TextMetric, value: Any, where: str
) -> None:
    if isinstance(metric, CategoricalMetric):
        if not isinstance(value, str) or value not in {v.value for v in metric.values}:
            raise ValueError(f"{where}: value is not one of the metric's declared values")
    elif isinstance(metric, NumericalMetric):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok:
            raise ValueError(f"{where}: a numerical metric needs a finite number")
    elif not isinstance(value, str):
        raise ValueError(f"{where}: a text metric needs a string")


def _unique(values: Iterable[str], what: str) -> None:
    dupes = sorted(v for v, n in Counter(values).items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate {what}: {dupes[:5]}")


def validate_export(data: dict[str, Any]) -> InspectorRagetExport:
    """Validate an export; raise :class:`InspectorRagetFormatError` listing every violation."""
    try:
        return InspectorRagetExport.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_input=False, include_url=False):
            loc = ".".join(str(part) for part in err["loc"]) or "(export)"
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"{loc}: {msg}")
        raise InspectorRagetFormatError(
            "the InspectorRAGet export breaks the format: " + "; ".join(problems)
        ) from None
