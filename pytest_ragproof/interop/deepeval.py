"""DeepEval goldens: the files ``EvaluationDataset.save_as("json"|"jsonl"|"csv")`` writes.

A golden: ``input``, ``expected_output``, ``context`` (the ground-truth passages),
``retrieval_context``, ``actual_output``, ``additional_metadata``, ``name``,
``comments`` and tool and token fields. JSON holds ``context`` as a list; JSONL
and CSV cells join it with ``|`` (DeepEval's delimiter, ``--context-delimiter``
to change), and CSV holds ``additional_metadata`` as JSON text. Multi-turn
goldens (``scenario``, ``turns``) are conversations without one question and are
left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ragproof.interop.drafts import (
    Draft,
    apply_block,
    bad,
    csv_rows,
    objects,
    read_json_records,
    read_text,
    string_list,
    string_value,
)
from pytest_ragproof.interop.report import FieldReport

DELIMITER = "|"
_EARLIER_RUN = "an earlier run's output; ragproof runs your pipeline"
DROPPED = {
    "actual_output": _EARLIER_RUN,
    "retrieval_context": "what a pipeline retrieved in an earlier run, not a reference",
    "tools_called": _EARLIER_RUN,
    "expected_tools": "tool calls are not part of a ragproof case",
    "token_cost": _EARLIER_RUN,
    "input_token_count": _EARLIER_RUN,
    "output_token_count": _EARLIER_RUN,
    "source_file": "DeepEval's generation detail (ragproof ids come from --corpus)",
    "expectations": "not a field ragproof scores",
    "custom_column_key_values": "custom columns: add them as metadata by hand",
}
KNOWN = {"input", "expected_output", "context", "additional_metadata", "name", "comments"}


def _rows(path: Path) -> list[tuple[int | None, Mapping[str, Any]]]:
    text = read_text(path)
    if path.suffix.lower() == ".csv":
        _, rows = csv_rows(path, text)
        return [(row.line, row.value) for row in rows]
    return list(objects(path, read_json_records(path, text, ("goldens", "test_cases"))))


def _metadata(path: Path, line: int | None, value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # CSV: a JSON object in the cell
        try:
            value = json.loads(value)
        except ValueError:
            raise bad(
                path,
                line,
                "additional_metadata is not JSON",
                'write it as a JSON object, e.g. {"topic": "billing"}',
            ) from None
    if not isinstance(value, Mapping):
        raise bad(
            path,
            line,
            f"additional_metadata is a {type(value).__name__}, not an object",
            "make additional_metadata a JSON object",
        )
    return dict(value)


def read(path: Path, report: FieldReport, *, delimiter: str = DELIMITER) -> list[Draft]:
    drafts: list[Draft] = []
    for line, obj in _rows(path):
        report.n_read += 1
        if obj.get("turns") is not None or obj.get("scenario") is not None:
            report.drop_record("a multi-turn golden (scenario, turns) has no single question", line)
            continue
        question = string_value(path, line, "input", obj.get("input"))
        if question is None:
            report.drop_record("no question (input is empty)", line)
            continue
        draft = Draft(line=line, question=question)
        report.map("input", "question")
        answer = string_value(path, line, "expected_output", obj.get("expected_output"))
        if answer is not None:
            draft.expected_answer = answer
            report.map("expected_output", "expected_answer")
        draft.passages = string_list(path, line, "context", obj.get("context"), split=delimiter)
        if draft.passages:
            report.map("context", "reference_contexts")
        meta: dict[str, Any] = {}
        if obj.get("additional_metadata") is not None:
            meta = _metadata(path, line, obj["additional_metadata"])
            report.map("additional_metadata", "metadata")
        block = meta.pop("ragproof", None)
        if isinstance(block, Mapping):
            apply_block(draft, block, "additional_metadata.ragproof")
            report.map("additional_metadata.ragproof", "id, kind, question_type")
        for name in ("name", "comments"):
            text = string_value(path, line, name, obj.get(name))
            if text is not None:
                meta[name] = text
                report.map(name, f"metadata.{name}")
        draft.metadata = meta
        if draft.kind == "unanswerable" and not isinstance(block, Mapping):
            draft.passages = []  # (an export's unanswerable case keeps what it had)
        for name, item in obj.items():
            if item in (None, "", [], {}) or name in KNOWN:
                continue
            report.drop_field(name, DROPPED.get(name, "not a field of a DeepEval golden"))
        drafts.append(draft)
    return drafts
