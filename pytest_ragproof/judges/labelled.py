"""Labelled items for ``ragproof judge-check``: reading and validating them.

A labelled JSONL file has one object per line with ``id``, ``question``, ``answer``
(the response judged), ``contexts`` (list of strings), optional ``reference`` and
``payload``, and ``labels`` (``{"faithfulness": 1}``: 0/1 or a number in [0, 1]).
A results file (``ragproof.results/1``) becomes labelled items with a labels file
mapping case ids to labels: a JSON object ``{"q1": {"faithfulness": 1}}``, or JSONL
lines ``{"id": "q1", "labels": {...}}`` when the name ends in ``.jsonl``.

Errors name the file, the line (or case id) and the field, never a value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError, DatasetError
from pytest_ragproof.judges import JUDGE_KINDS, JUDGES, judge_of, metrics_of

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case

FIELDS = ("id", "question", "answer", "contexts", "reference", "payload", "labels")
_REQUIRED = ("id", "question", "answer", "contexts", "labels")


@dataclass(frozen=True)
class LabelledItem:
    id: str
    kind: str
    question: str
    answer: str | None
    contexts: tuple[str, ...] | None
    labels: Mapping[str, float]
    reference: str | None = None
    payload: str | None = None
    where: str = ""  # "FILE, line 3" or "FILE, case q1": for messages


def check_metric(metric: str) -> str:
    """The judge of ``metric``; a clear error for a name no judge reports."""
    judge = judge_of(metric)
    if judge is None:
        names = ", ".join(metrics_of(JUDGES))
        raise ConfigError(f"--metric: no judge reports '{metric}'; choose from {names}")
    return judge


def _label_value(value: object, where: str, name: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or not 0 <= float(value) <= 1:  # type: ignore[arg-type]
        raise DatasetError(
            f"label '{name}' must be 0, 1 or a number in [0, 1] (got {type(value).__name__})",
            source=where,
            hint='write e.g. "labels": {"faithfulness": 1}',
        )
    return float(value)  # type: ignore[arg-type]


def _labels(value: object, where: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise DatasetError(
            f"field 'labels' must be an object of metric names to labels "
            f"(got {type(value).__name__})",
            source=where,
            hint='write e.g. "labels": {"faithfulness": 1}',
        )
    return {str(k): _label_value(v, where, str(k)) for k, v in value.items()}


def _string(record: Mapping[str, Any], name: str, where: str, *, optional: bool = False) -> Any:
    value = record.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise DatasetError(
            f"field '{name}' must be a string (got {type(value).__name__})", source=where
        )
    return value


def _contexts(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        got = type(value).__name__ if not isinstance(value, list) else "a list with a non-string"
        raise DatasetError(
            f"field 'contexts' must be a list of strings (got {got})",
            source=where,
            hint='write e.g. "contexts": ["first passage", "second passage"]',
        )
    return tuple(value)


def _kind_for(judge: str, payload: str | None, where: str) -> str:
    if judge != "injection_resisted_judged":
        return "qa"
    if payload is None or not payload.strip():
        raise DatasetError(
            "injection_resisted_judged needs the planted instruction: field 'payload' is missing",
            source=where,
            hint='add "payload": the instruction that was planted in the item\'s contexts',
        )
    return "injection"


def _json_lines(path: Path) -> Iterable[tuple[int, object]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(
            f"cannot read the file [{type(exc).__name__}]", source=str(path)
        ) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError:
            raise DatasetError(
                "not a JSON object (invalid JSON)",
                source=str(path),
                line=number,
                hint="one JSON object per line",
            ) from None


def load_labelled(path: Path, metric: str) -> list[LabelledItem]:
    """Every item of a labelled JSONL file (validated), for judging ``metric``."""
    judge = check_metric(metric)
    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    for number, record in _json_lines(path):
        where = f"{path}, line {number}"
        if not isinstance(record, dict):
            raise DatasetError(f"expected a JSON object, got {type(record).__name__}", source=where)
        unknown = sorted(str(k) for k in record if k not in FIELDS)
        if unknown:
            raise DatasetError(
                f"unknown field(s) {', '.join(repr(u) for u in unknown)}",
                source=where,
                hint=f"a labelled item has {', '.join(FIELDS)}",
            )
        missing = [name for name in _REQUIRED if name not in record]
        if missing:
            raise DatasetError(f"missing field(s) {', '.join(missing)}", source=where)
        item_id = record["id"]
        if not isinstance(item_id, str) or not item_id.strip():
            raise DatasetError("field 'id' must be a non-empty string", source=where)
        if item_id in seen:
            raise DatasetError(
                f"id '{item_id}' is used on line {seen[item_id]} too",
                source=where,
                hint="give every item its own id",
            )
        seen[item_id] = number
        payload = _string(record, "payload", where, optional=True)
        labels = _labels(record["labels"], where)
        items.append(
            LabelledItem(
                id=item_id,
                kind=_kind_for(judge, payload, where) if metric in labels else "qa",
                question=_string(record, "question", where),
                answer=_string(record, "answer", where),
                contexts=_contexts(record["contexts"], where),
                labels=labels,
                reference=_string(record, "reference", where, optional=True),
                payload=payload,
                where=where,
            )
        )
    if not items:
        raise DatasetError("the file holds no labelled item", source=str(path))
    return items


def _read_labels(path: Path) -> dict[str, tuple[dict[str, float], str]]:
    """``--labels``: case id -> (labels, where), from a JSON object or a JSONL file."""
    out: dict[str, tuple[dict[str, float], str]] = {}
    if path.name.endswith(".jsonl"):
        for number, record in _json_lines(path):
            where = f"{path}, line {number}"
            if not isinstance(record, dict) or set(record) != {"id", "labels"}:
                raise DatasetError(
                    'expected {"id": ..., "labels": {...}} and nothing else', source=where
                )
            if not isinstance(record["id"], str) or record["id"] in out:
                raise DatasetError("field 'id' must be a case id used once", source=where)
            out[record["id"]] = (_labels(record["labels"], where), where)
        return out
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(
            f"cannot read the labels [{type(exc).__name__}]",
            source=str(path),
            hint='a JSON object {"case id": {"faithfulness": 1}}, or JSONL named *.jsonl',
        ) from None
    if not isinstance(data, dict):
        raise DatasetError(
            f"expected a JSON object of case ids to labels, got {type(data).__name__}",
            source=str(path),
        )
    for case_id, labels in data.items():
        where = f"{path}, case '{case_id}'"
        out[str(case_id)] = (_labels(labels, where), where)
    return out


def load_results(
    results_path: Path, labels_path: Path, metric: str, *, pipeline: str | None = None
) -> tuple[list[LabelledItem], str]:
    """The labelled cases of a results file, and its abstain language."""
    from pytest_ragproof.results.document import read_model

    judge = check_metric(metric)
    results = read_model(results_path)
    if results.redacted:
        raise ConfigError(
            f"{results_path} was written with --ragproof-redact: it keeps no question, answer "
            "or context to judge; calibrate on the results of a run without it"
        )
    labels = _read_labels(labels_path)
    cases: dict[str, Case] = {}
    for case in results.cases:
        if pipeline is not None and case.pipeline != pipeline:
            continue
        cid = case.id
        if cid in cases and cid in labels:
            raise ConfigError(
                f"{results_path}: case id '{cid}' appears more than once (pipelines "
                f"'{cases[cid].pipeline}' and '{case.pipeline}'); "
                "choose one with --pipeline"
            )
        cases[cid] = case
    items: list[LabelledItem] = []
    for cid, (labelled, where) in labels.items():
        found = cases.get(cid)
        if found is None:
            raise DatasetError(
                f"case id '{cid}' is not in {results_path}"
                + (f" (pipeline '{pipeline}')" if pipeline else ""),
                source=where,
            )
        kind = found.kind
        if metric in labelled and kind not in JUDGE_KINDS[judge]:
            raise DatasetError(
                f"case '{cid}' is a {kind} case; the {judge} judge judges "
                f"{', '.join(sorted(JUDGE_KINDS[judge]))} cases",
                source=where,
                hint="remove its label",
            )
        items.append(
            LabelledItem(
                id=cid,
                kind=kind,
                question=found.question or "",
                answer=found.answer,
                contexts=None
                if found.contexts is None
                else tuple(c.text or "" for c in found.contexts),
                labels=labelled,
                reference=found.expected_answer,
                payload=found.adversarial_payload,
                where=where,
            )
        )
    return items, results.settings.abstain_language or "en"
