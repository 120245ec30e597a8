"""Ragas test sets: CSV (``testset.to_pandas().to_csv()``), JSONL (``to_jsonl``), JSON.

Current Ragas (0.2 and later) samples: ``user_input``, ``reference``,
``reference_contexts``, ``synthesizer_name`` (flat, or nested under
``eval_sample`` as ``Testset`` holds them); a multi-turn ``user_input`` is a list
of ``{"type": "human"|"ai", "content"}`` messages. Older Ragas (0.1):
``question``, ``ground_truth``, ``contexts``, ``evolution_type``, ``metadata``.
In CSV, list columns are JSON arrays or the Python list literals pandas writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ragproof.interop.drafts import (
    Draft,
    bad,
    csv_rows,
    objects,
    read_json_records,
    read_text,
    string_list,
    string_value,
)
from pytest_ragproof.interop.report import FieldReport

_EARLIER_RUN = "an earlier run's output; ragproof runs your pipeline"
DROPPED = {
    "retrieved_contexts": _EARLIER_RUN,
    "response": _EARLIER_RUN,
    "multi_responses": _EARLIER_RUN,
    "answer": _EARLIER_RUN,
    "rubrics": "rubrics are for LLM-graded metrics ragproof does not run",
    "episode_done": "a Ragas generation detail",
    "reference_tool_calls": "tool calls are not part of a ragproof case",
}
# Field sets of the two generations of Ragas: (question, answer, contexts).
NEW = ("user_input", "reference", "reference_contexts")
OLD = ("question", "ground_truth", "contexts")
META = ("persona_name", "query_style", "query_length")
# ``ragproof export --to ragas`` writes this synthesizer_name for a case without a
# ``synthesizer:`` tag (Ragas requires one): it comes back as no tag.
EXPORTED = ("synthesizer", "ragproof")


def _rows(path: Path) -> list[tuple[int | None, Mapping[str, Any]]]:
    text = read_text(path)
    if path.suffix.lower() == ".csv":
        _, rows = csv_rows(path, text)
        return [(row.line, row.value) for row in rows]
    return list(objects(path, read_json_records(path, text, ("samples",))))


def _flatten(obj: Mapping[str, Any]) -> dict[str, Any]:
    sample = obj.get("eval_sample")
    if isinstance(sample, Mapping):
        return {**sample, **{k: v for k, v in obj.items() if k != "eval_sample"}}
    return dict(obj)


def _conversation(path: Path, line: int | None, messages: Any) -> tuple[str, list[dict[str, str]]]:
    """A multi-turn ``user_input``: the last human message and the turns before it."""
    roles = {"human": "user", "ai": "assistant"}
    turns: list[dict[str, str]] = []
    for m in messages if isinstance(messages, list) else ():
        role = roles.get(str(m.get("type"))) if isinstance(m, Mapping) else None
        content = m.get("content") if isinstance(m, Mapping) else None
        if role is None or not isinstance(content, str):
            raise bad(
                path,
                line,
                "user_input is a list but not of human/ai messages with content",
                'write a multi-turn user_input as [{"type": "human", "content": "…"}, …]',
            )
        turns.append({"role": role, "content": content})
    if not turns or turns[-1]["role"] != "user":
        raise bad(
            path,
            line,
            "a multi-turn user_input must end with a human message (the question)",
            "end the conversation with the question to ask",
        )
    return turns[-1]["content"], turns[:-1]


def read(path: Path, report: FieldReport) -> list[Draft]:
    drafts: list[Draft] = []
    for line, raw in _rows(path):
        report.n_read += 1
        obj = _flatten(raw)
        names = NEW if "user_input" in obj or "reference_contexts" in obj else OLD
        q_name, a_name, c_name = names
        value = obj.get(q_name)
        history: list[dict[str, str]] = []
        if (
            isinstance(value, str)
            and value.lstrip().startswith("[")
            and path.suffix.lower() == ".csv"
        ):
            value = string_list_raw(value)
        if isinstance(value, list):
            question, history = _conversation(path, line, value)
        else:
            question = string_value(path, line, q_name, value) or ""
        if not question.strip():
            report.drop_record(f"no question ({q_name} is empty)", line)
            continue
        draft = Draft(line=line, question=question, history=history)
        report.map(q_name, "question")
        if history:
            draft.question_type = "conversational"
            report.map(f"{q_name} (multi-turn)", "conversation_history, question_type")
        answer = string_value(path, line, a_name, obj.get(a_name))
        if answer is None and names is OLD and obj.get("ground_truths") is not None:
            truths = string_list(path, line, "ground_truths", obj.get("ground_truths"))
            a_name, answer = "ground_truths", truths[0] if truths else None
            if len(truths) > 1:
                report.drop_field("ground_truths[1:]", "a case has one reference answer")
        if answer is not None:
            draft.expected_answer = answer
            report.map(a_name, "expected_answer")
        draft.passages = string_list(path, line, c_name, obj.get(c_name))
        if draft.passages:
            report.map(c_name, "reference_contexts")
        for name, prefix in (("synthesizer_name", "synthesizer"), ("evolution_type", "evolution")):
            label = string_value(path, line, name, obj.get(name))
            if label is not None and (prefix, label.strip()) == EXPORTED:
                report.map(f"{name} '{EXPORTED[1]}'", "no tag (a case ragproof export wrote)")
            elif label is not None:
                draft.tags.append(f"{prefix}:{label.strip()}")
                report.map(name, f"tags ({prefix}:<name>)")
        for name in META:
            if obj.get(name) is not None:
                draft.metadata[name] = obj[name]
                report.map(name, f"metadata.{name}")
        if obj.get("metadata") not in (None, "", [], {}):
            draft.metadata["ragas_metadata"] = obj["metadata"]
            report.map("metadata", "metadata.ragas_metadata")
        known = {*names, "ground_truths", "synthesizer_name", "evolution_type", "metadata", *META}
        for name, item in obj.items():
            if item in (None, "", [], {}) or name in known:
                continue
            report.drop_field(name, DROPPED.get(name, "not a field of a Ragas test set"))
        drafts.append(draft)
    if any(d.tags for d in drafts):
        report.note(
            "Ragas synthesizers have no ragproof question type: question_type stays simple "
            "(conversational for multi-turn samples); select them with --ragproof-tag"
        )
    return drafts


def string_list_raw(cell: str) -> Any:
    """A CSV cell holding a list (a multi-turn user_input), parsed, or the text itself."""
    import ast
    import json

    try:
        return json.loads(cell)
    except ValueError:
        try:
            return ast.literal_eval(cell.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return cell
