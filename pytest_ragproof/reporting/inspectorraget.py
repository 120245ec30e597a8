"""Export a results document (``ragproof.results/1``) as an InspectorRAGet experiment file.

Mapping:

- ``models`` are the pipelines; ``tasks`` are the cases (``task_type: "rag"``,
  ``category`` = kind, plus ``question_type``, ``tags`` and ``dataset`` for the
  ``filters``); ``input`` is the conversation history, if any, then the question;
  ``targets`` is the expected answer (empty when the case has none).
- ``documents`` are the expected and retrieved sources whose text is known: the
  text a pipeline returned for that context id, else the case's reference
  contexts (paired with the expected ids by position when the counts match, or
  all of them for a single expected id). Sources without any known text are
  left out of ``documents`` and of every ``contexts`` list, and the export's
  ``description`` says how many. A task's ``contexts`` are its expected sources;
  each evaluation's ``contexts`` are what that pipeline retrieved, in rank order.
- Injection tasks: the user utterance is what the pipeline received (with
  delivery ``append``, the question then the payload), and the task carries
  ``adversarial_payload`` and ``canary`` (not when redacted).
- ``evaluations``: one per pipeline and case, ``model_response`` = the answer,
  ``annotations`` by metric then worker ``"system"``. 0/1 verdicts (``hit@k``,
  ``exact_match``, ``abstained``, ``injection_resisted``) and the case
  ``status`` are categorical; the other scores numerical; the failed thresholds
  and the retrieved ids are text. A metric that some scored case lacks (answer
  metrics without an expected answer, retrieval metrics without expected
  sources) is exported as text, because InspectorRAGet drops a task when a
  result lacks a plottable metric; nothing is turned into 0. Hence
  :func:`export_files`: a run of several kinds is one file per kind, where
  every metric of that kind is plottable.
- LLM judges: judged metrics are metrics like the others (so one a judge left
  out on some scored case, e.g. ``not_judged: abstained``, is text too); each
  judge's reasons are the text metric ``<judge>_reasons`` of the evaluations it
  judged or skipped (:func:`.judge_reasons.reason_text`), and a judge error is
  spelled out in ``failed_thresholds`` (step, error type, HTTP status).
- People (``labels``, a labels file of ``ragproof review``): each labelled judged
  metric gets a human metric ``<metric>_human`` with the judge as worker
  ``system`` and each reviewer as worker ``human:<reviewer>``
  (:mod:`.inspectorraget_people`); stale labels are left out.
- With ``redacted`` results, every text InspectorRAGet requires (question,
  answer, document text) is the placeholder ``[redacted]``, and no judge
  reasons are exported (claims are the answer's text).

The document is validated against :mod:`.inspectorraget_format` before it is
returned; a violation raises :class:`InspectorRagetFormatError`.

This module is the export's entry point (the document as a dict or JSON text, and
the files of an export, one per kind); the mapping above is built in
:mod:`.inspectorraget_build`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.reporting.inspectorraget_build import REDACTED, Builder
from pytest_ragproof.reporting.inspectorraget_format import (
    InspectorRagetFormatError,
    validate_export,
)

if TYPE_CHECKING:
    from pytest_ragproof.labels import Label

__all__ = [
    "REDACTED",
    "InspectorRagetFormatError",
    "build_inspectorraget",
    "export_files",
    "kind_path",
    "render_inspectorraget",
    "split_by_kind",
]


def render_inspectorraget(
    results: Mapping[str, Any],
    *,
    timestamp: datetime | str | None = None,
    labels: Sequence[Label] | None = None,
) -> str:
    """The export as JSON text (validated). ``timestamp`` fixes the export time (tests);
    ``labels``: people's labels, exported as annotators."""
    export = build_inspectorraget(results, timestamp=timestamp, labels=labels)
    return json.dumps(export, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def build_inspectorraget(
    results: Mapping[str, Any],
    *,
    timestamp: datetime | str | None = None,
    labels: Sequence[Label] | None = None,
) -> dict[str, Any]:
    """The export as a dict, validated against the format (raises on any violation)."""
    from pytest_ragproof.results.schema import as_model

    people = None
    if labels is not None:
        from pytest_ragproof.reporting.inspectorraget_people import People

        people = People.of(results, labels)
    export = Builder(as_model(results), people).build(timestamp)
    validate_export(export)
    return export


def split_by_kind(results: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The results restricted to each case kind present (qa, unanswerable, injection)."""
    cases = list(results.get("cases") or [])
    return [
        (kind, {**results, "cases": [c for c in cases if c.get("kind") == kind]})
        for kind in _kinds(cases)
    ]


def _kinds(cases: list[Any]) -> list[str]:
    """The case kinds present, in the order of :data:`~pytest_ragproof.vocabulary.KINDS`."""
    from pytest_ragproof.vocabulary import KINDS

    present = {str(c.get("kind", "")) for c in cases}
    return [k for k in KINDS if k in present] + sorted(present - set(KINDS))


def kind_path(path: Path, kind: str) -> Path:
    """``run.json`` -> ``run.qa.json`` (any other name gets ``.qa.json`` appended)."""
    if path.suffix == ".json":
        return path.with_name(f"{path.stem}.{kind}.json")
    return path.with_name(f"{path.name}.{kind}.json")


def export_files(
    results: Mapping[str, Any],
    path: Path,
    *,
    timestamp: datetime | str | None = None,
    labels: Sequence[Label] | None = None,
) -> list[tuple[Path, str]]:
    """The files an export to ``path`` consists of, as (path, text).

    One kind of case (or none): ``path`` itself. Several kinds: one file per kind,
    ``<path stem>.<kind>.json``, because a metric missing on the cases of another kind
    would otherwise be exported as text, which InspectorRAGet does not plot.
    """
    parts = split_by_kind(results)
    if len(parts) <= 1:
        return [(path, render_inspectorraget(results, timestamp=timestamp, labels=labels))]
    return [
        (kind_path(path, kind), render_inspectorraget(part, timestamp=timestamp, labels=labels))
        for kind, part in parts
    ]
