"""``ragproof export --to ragas|deepeval|raget``: a dataset as another tool's test set.

Each writer turns cases into the records that tool loads (Ragas
``Testset.from_list``/``EvaluationDataset.from_jsonl``, DeepEval
``add_goldens_from_json_file``, Giskard ``QATestset.load``) and notes in a
:class:`~pytest_ragproof.interop.report.FieldReport` what it could not carry.
Injection cases have no equivalent in any of them and are left out (counted).
DeepEval and RAGET records carry a ``ragproof`` block (id, kind, question type,
expected_source_ids) in their free metadata, so ``ragproof import`` restores them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.interop.report import FieldReport

RAGET_TYPES = {"distracting": "distracting element", "out_of_scope": "out of scope"}


def _block(case: Case, *, history_kept: bool = True) -> dict[str, Any]:
    # A conversational case without its history is no longer conversational.
    qtype = case.question_type
    if qtype == "conversational" and not history_kept:
        qtype = "simple"
    return {
        "id": case.id,
        "kind": case.kind,
        "question_type": qtype,
        "expected_source_ids": list(case.expected_source_ids),
    }


def _metadata(case: Case) -> dict[str, Any]:
    plain: dict[str, Any] = json.loads(json.dumps(case.metadata))  # FrozenDict -> plain JSON
    return plain


def _skip(case: Case, report: FieldReport, tool: str) -> bool:
    """Leave out what the tool cannot hold; note what a kept case loses."""
    if case.kind == "injection":
        report.drop_record(f"injection cases have no {tool} equivalent", None)
        return True
    if case.conversation_history and tool != "RAGET":
        report.drop_field(
            "conversation_history",
            f"{tool} single-turn samples have no history (question_type becomes simple)",
        )
    return False


def to_ragas(cases: Iterable[Case], report: FieldReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for case in cases:
        report.n_read += 1
        if _skip(case, report, "Ragas"):
            continue
        tag = next((t for t in case.tags if t.startswith("synthesizer:")), None)
        row: dict[str, Any] = {"user_input": case.question}
        report.map("question", "user_input")
        if case.reference_contexts:
            row["reference_contexts"] = list(case.reference_contexts)
            report.map("reference_contexts", "reference_contexts")
        if case.expected_answer is not None:
            row["reference"] = case.expected_answer
            report.map("expected_answer", "reference")
        row["synthesizer_name"] = tag.split(":", 1)[1] if tag else "ragproof"
        report.map("tags synthesizer:<name> (else 'ragproof')", "synthesizer_name")
        if case.expected_source_ids:
            report.drop_field(
                "expected_source_ids", "Ragas samples hold texts only (re-import with --corpus)"
            )
        if case.kind == "unanswerable":
            report.drop_field("kind unanswerable", "Ragas has no unanswerable marker")
        report.kinds[case.kind] += 1
        out.append(row)
    return out


def to_deepeval(cases: Iterable[Case], report: FieldReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for case in cases:
        report.n_read += 1
        if _skip(case, report, "DeepEval"):
            continue
        meta = {**_metadata(case), "ragproof": _block(case, history_kept=False)}
        report.map("question", "input")
        if case.expected_answer is not None:
            report.map("expected_answer", "expected_output")
        if case.reference_contexts:
            report.map("reference_contexts", "context")
        report.map("id, kind, question_type, expected_source_ids", "additional_metadata.ragproof")
        out.append(
            {
                "input": case.question,
                "actual_output": None,
                "expected_output": case.expected_answer,
                "retrieval_context": None,
                "context": list(case.reference_contexts) or None,
                "additional_metadata": meta,
            }
        )
        report.kinds[case.kind] += 1
    return out


def _context(case: Case) -> str:
    texts, ids = case.reference_contexts, case.expected_source_ids
    if len(texts) == len(ids):  # RAGET writes one "Document <id>: <text>" per passage
        return "\n\n".join(f"Document {i}: {t}" for i, t in zip(ids, texts, strict=True))
    return "\n\n".join(texts)


def to_raget(cases: Iterable[Case], report: FieldReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for case in cases:
        report.n_read += 1
        if _skip(case, report, "RAGET"):
            continue
        qtype = RAGET_TYPES.get(case.question_type, case.question_type)
        if case.kind == "unanswerable" and case.question_type != "out_of_scope":
            report.drop_field(
                f"question_type {case.question_type} of an unanswerable case",
                "RAGET's only unanswerable type is 'out of scope'",
            )
            qtype = "out of scope"
        meta: dict[str, Any] = {"question_type": qtype}
        report.map("question_type", "metadata.question_type")
        if case.expected_source_ids:
            meta["seed_document_id"] = case.expected_source_ids[0]
            report.map("expected_source_ids[0]", "metadata.seed_document_id")
        meta.update(_metadata(case))
        meta["ragproof"] = _block(case)
        report.map("id, kind, question_type, expected_source_ids", "metadata.ragproof")
        out.append(
            {
                "id": case.id,
                "question": case.question,
                "reference_answer": case.expected_answer or "",
                "reference_context": _context(case),
                "conversation_history": [m.model_dump() for m in case.conversation_history],
                "metadata": meta,
            }
        )
        report.kinds[case.kind] += 1
    return out


WRITERS = {"ragas": to_ragas, "deepeval": to_deepeval, "raget": to_raget}
# tool -> file suffixes it loads, the first the default
SUFFIXES = {"ragas": (".jsonl", ".json"), "deepeval": (".json",), "raget": (".jsonl",)}


def render(tool: str, rows: list[dict[str, Any]], path: Path) -> str:
    """The file text: JSONL, or a JSON array (indented as DeepEval's save_as writes it)."""
    if path.suffix.lower() == ".jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return json.dumps(rows, indent=4, ensure_ascii=False) + "\n"


def refusal(tool: str, path: Path, source: Path) -> str | None:
    """Why the export must not write ``path``, or None. Only new files are written, or a
    DeepEval/RAGET file an earlier export wrote (each record carries the ragproof block)."""
    suffixes = SUFFIXES[tool]
    if path.suffix.lower() not in suffixes:
        return f"-o {path}: {tool} test sets are {' or '.join(suffixes)} files; name the output so"
    if path.resolve() == source.resolve():
        return f"-o {path} is the input file; choose another output path"
    if not (path.exists() or path.is_symlink()):
        return None
    if tool != "ragas" and _exported(path):
        return None
    return (
        f"-o {path} exists and was not written by ragproof export --to {tool}; it will not be "
        "replaced; choose a new path or move that file away"
    )


def _exported(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    try:
        whole = json.loads(text)
        rows = whole if isinstance(whole, list) else None
    except ValueError:
        rows = None
    if rows is None:
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError:
            return False
    if not rows:
        return False
    for row in rows:
        if not isinstance(row, dict):
            return False
        meta = row.get("metadata", row.get("additional_metadata"))
        if not isinstance(meta, dict) or not isinstance(meta.get("ragproof"), dict):
            return False
    return True
