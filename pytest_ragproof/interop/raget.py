"""Giskard RAGET test sets: the JSONL ``QATestset.save()`` writes.

One object per line: ``id``, ``question``, ``reference_answer``,
``reference_context`` (the passages the question was written from, each
``Document <id>: <text>``, joined by blank lines), ``conversation_history``
(``[{"role", "content"}]``) and ``metadata`` with ``question_type``, ``topic`` and
``seed_document_id``. RAGET's question types are ours; ``out of scope`` questions
become ``unanswerable`` cases of question type ``out_of_scope``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_ragproof.interop.drafts import (
    Draft,
    apply_block,
    bad,
    objects,
    read_json_records,
    read_text,
    string_value,
)
from pytest_ragproof.interop.report import FieldReport

QUESTION_TYPES = {
    "simple": "simple",
    "complex": "complex",
    "distracting element": "distracting",
    "distracting": "distracting",
    "situational": "situational",
    "double": "double",
    "conversational": "conversational",
    "out of scope": "out_of_scope",
    "out_of_scope": "out_of_scope",
}

_DOCUMENT = re.compile(r"(?:^|\n\n)Document ([^\s:]+): ")

CONTEXT_IDS = "reference_context_ids"
"""Metadata key of the ``Document <id>`` of each passage (``ragproof export`` writes them back)."""

_AGENT_FIELDS = ("agent_answer", "correctness", "correctness_reason")
_KNOWN = {"id", "question", "reference_answer", "reference_context", "conversation_history"}


def split_context(text: str) -> list[tuple[str | None, str]]:
    """``Document 1: …\\n\\nDocument 2: …`` as (document id, passage) pairs."""
    marks = list(_DOCUMENT.finditer(text))
    if not marks or marks[0].start() != 0:
        return [(None, text)] if text.strip() else []
    out: list[tuple[str | None, str]] = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        passage = text[mark.end() : end]
        if passage.strip():
            out.append((mark.group(1), passage))
    return out


def _history(path: Path, line: int | None, value: Any) -> list[dict[str, str]]:
    if value in (None, []):
        return []
    if not isinstance(value, list) or not all(
        isinstance(m, dict) and isinstance(m.get("content"), str) for m in value
    ):
        raise bad(
            path,
            line,
            "conversation_history is not a list of {role, content} messages",
            'write it as [{"role": "user", "content": "…"}]',
        )
    return [{"role": str(m.get("role")), "content": m["content"]} for m in value]


def read(path: Path, report: FieldReport) -> list[Draft]:
    rows = read_json_records(path, read_text(path))
    drafts: list[Draft] = []
    for line, obj in objects(path, rows):
        report.n_read += 1
        question = string_value(path, line, "question", obj.get("question"))
        if question is None:
            report.drop_record("no question", line)
            continue
        draft = Draft(line=line, question=question)
        report.map("question", "question")
        meta = obj.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        block = meta.pop("ragproof", None)  # a ragproof export: its fields are the case's
        block = block if isinstance(block, dict) else None
        raw_type = meta.pop("question_type", None)
        qtype = QUESTION_TYPES.get(str(raw_type).strip().lower()) if raw_type else None
        if raw_type is not None and qtype is None:
            raise bad(
                path,
                line,
                "metadata.question_type is not one of RAGET's question types",
                "use one of: simple, complex, distracting element, situational, double, "
                "conversational, out of scope",
            )
        if qtype is not None:
            draft.question_type = qtype
            report.map("metadata.question_type", "question_type")
        if qtype == "out_of_scope":
            draft.kind = "unanswerable"
            report.map("metadata.question_type 'out of scope'", "kind unanswerable")
        case_id = string_value(path, line, "id", obj.get("id"), allow_number=True)
        if case_id is not None:
            draft.id = case_id
            report.map("id", "id")
        answer = string_value(path, line, "reference_answer", obj.get("reference_answer"))
        context = string_value(path, line, "reference_context", obj.get("reference_context"))
        context_ids: list[str] = []
        if draft.kind == "unanswerable" and block is None:
            if answer is not None:
                report.drop_field(
                    "reference_answer",
                    "an out-of-scope answer describes the refusal; unanswerable cases are "
                    "scored by abstained",
                )
            if context is not None:
                report.drop_field(
                    "reference_context",
                    "the passage an out-of-scope question was written beside does not answer it",
                )
        else:
            if answer is not None:
                draft.expected_answer = answer
                report.map("reference_answer", "expected_answer")
            if context is not None:
                pairs = split_context(context)
                draft.passages = [passage for _, passage in pairs]
                context_ids = [i for i, _ in pairs if i is not None]
                report.map("reference_context", "reference_contexts (split on 'Document <id>:')")
        draft.history = _history(path, line, obj.get("conversation_history"))
        if draft.history:
            report.map("conversation_history", "conversation_history")
        seed = meta.pop("seed_document_id", None)
        derived: set[str] = set()
        if block is not None:
            derived = apply_block(draft, block, "metadata.ragproof")
        elif seed is not None and draft.kind == "qa":
            draft.source_ids = [str(seed)]
            draft.source_ids_from = "metadata.seed_document_id"
        if seed is not None and "seed_document_id" not in derived:
            meta["seed_document_id"] = seed
        if context_ids and len(context_ids) == len(draft.passages) and CONTEXT_IDS not in derived:
            meta[CONTEXT_IDS] = context_ids  # so that an export writes the same ids back
            report.map("reference_context 'Document <id>:'", f"metadata.{CONTEXT_IDS}")
        for key in sorted(k for k in meta if k != CONTEXT_IDS):
            report.map(f"metadata.{key}", f"metadata.{key}")
        draft.metadata = meta
        for name in obj:
            if name in _AGENT_FIELDS:
                report.drop_field(
                    name, "an earlier run's answer or judgement; ragproof runs your pipeline"
                )
            elif name not in _KNOWN and name != "metadata":
                report.drop_field(name, "not a field of RAGET's test set")
        drafts.append(draft)
    report.origin_notes["metadata.seed_document_id"] = (
        "RAGET's seed_document_id is the id of the knowledge-base row the question was "
        "written from; it matches your retrieved ids only when your knowledge base used "
        "the same ids (else re-import with --corpus PATH)"
    )
    return drafts
