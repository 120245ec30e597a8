"""``ragproof export --to ragas|deepeval|raget``: a dataset as another tool's test set.

Each writer turns cases into the records that tool loads (Ragas
``Testset.from_list``/``EvaluationDataset.from_jsonl``, DeepEval
``add_goldens_from_json_file``, Giskard ``QATestset.load``) and notes in a
:class:`~pytest_ragproof.interop.report.FieldReport` what it could not carry.
Injection cases have no equivalent in any of them and are left out (counted).
DeepEval and RAGET records carry a ``ragproof`` block (id, kind, question type,
expected_source_ids and the other fields the tool has no place for) in their free
metadata, so ``ragproof import`` restores them exactly; what an import of the tool's
own file kept (DeepEval's name and comments, RAGET's document ids, Ragas's labels) goes
back where it came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.interop.ragas import META as RAGAS_METADATA  # kept in metadata on import
from pytest_ragproof.interop.raget import CONTEXT_IDS, split_context
from pytest_ragproof.interop.report import FieldReport

RAGET_TYPES = {"distracting": "distracting element", "out_of_scope": "out of scope"}
IMPORTED_FROM = "imported_from"  # ragproof's own bookkeeping, not written into another tool's file
RAGAS_ROLES = {"user": "human", "assistant": "ai"}


def _block(case: Case, *, history_kept: bool = True) -> dict[str, Any]:
    """What the tool has no place for: id, kind, question type, source ids and, when set,
    tags, split, synthetic, provenance and review status."""
    # A conversational case without its history is no longer conversational.
    qtype = case.question_type
    if qtype == "conversational" and not history_kept:
        qtype = "simple"
    block: dict[str, Any] = {
        "id": case.id,
        "kind": case.kind,
        "question_type": qtype,
        "expected_source_ids": list(case.expected_source_ids),
    }
    if case.tags:
        block["tags"] = list(case.tags)
    for name in ("split", "review_status"):
        if getattr(case, name) is not None:
            block[name] = getattr(case, name)
    if case.synthetic:
        block["synthetic"] = True
    if case.provenance is not None:
        block["provenance"] = case.provenance.model_dump(mode="json", exclude_none=True)
    return block


def _metadata(case: Case) -> dict[str, Any]:
    """The case's metadata as plain JSON, without ragproof's ``imported_from``."""
    plain: dict[str, Any] = json.loads(json.dumps(case.metadata))  # FrozenDict -> plain JSON
    plain.pop(IMPORTED_FROM, None)
    return plain


def _skip(case: Case, report: FieldReport, tool: str) -> bool:
    """Leave out what the tool cannot hold; note what a kept case loses."""
    if case.kind == "injection":
        report.drop_record(f"injection cases have no {tool} equivalent", None)
        return True
    if case.conversation_history and tool == "DeepEval":
        report.drop_field(
            "conversation_history",
            f"{tool} single-turn samples have no history (question_type becomes simple)",
        )
    return False


def _ragas_input(case: Case) -> str | list[dict[str, str]]:
    """A single-turn question, or the multi-turn messages ending with it."""
    if not case.conversation_history:
        return case.question
    turns = [{"type": RAGAS_ROLES[m.role], "content": m.content} for m in case.conversation_history]
    return [*turns, {"type": "human", "content": case.question}]


def to_ragas(cases: Iterable[Case], report: FieldReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for case in cases:
        report.n_read += 1
        if _skip(case, report, "Ragas"):
            continue
        row: dict[str, Any] = {"user_input": _ragas_input(case)}
        report.map("question", "user_input")
        if case.conversation_history:
            report.map("conversation_history", "user_input (multi-turn messages)")
        if case.reference_contexts:
            row["reference_contexts"] = list(case.reference_contexts)
            report.map("reference_contexts", "reference_contexts")
        if case.expected_answer is not None:
            row["reference"] = case.expected_answer
            report.map("expected_answer", "reference")
        row.update(_ragas_labels(case, report))
        if case.expected_source_ids:
            report.drop_field(
                "expected_source_ids", "Ragas samples hold texts only (re-import with --corpus)"
            )
        if case.kind == "unanswerable":
            report.drop_field("kind unanswerable", "Ragas has no unanswerable marker")
        report.kinds[case.kind] += 1
        out.append(row)
    return out


RAGAS_TAGS = {"synthesizer": "synthesizer_name", "evolution": "evolution_type"}


def _ragas_labels(case: Case, report: FieldReport) -> dict[str, Any]:
    """synthesizer_name (from a ``synthesizer:`` tag, else ``ragproof``), and the Ragas
    fields an import kept as tags and metadata; other tags and metadata are reported."""
    labels: dict[str, Any] = {}
    for tag in case.tags:
        prefix, _, name = tag.partition(":")
        field = RAGAS_TAGS.get(prefix)
        if field is not None and name and field not in labels:
            labels[field] = name
        else:
            report.drop_field(
                "tags", "Ragas samples have no tags (a synthesizer: and an evolution: tag go)"
            )
    labels.setdefault("synthesizer_name", "ragproof")
    report.map("tags synthesizer:<name> (else 'ragproof')", "synthesizer_name")
    if "evolution_type" in labels:
        report.map("tags evolution:<type>", "evolution_type")
    meta = _metadata(case)
    for name in RAGAS_METADATA:
        if name in meta:
            labels[name] = meta.pop(name)
            report.map(f"metadata.{name}", name)
    if "ragas_metadata" in meta:
        labels["metadata"] = meta.pop("ragas_metadata")
        report.map("metadata.ragas_metadata", "metadata")
    for name in meta:
        report.drop_field(f"metadata.{name}", "Ragas samples have no free metadata")
    return labels


def _deepeval_text(meta: dict[str, Any], name: str, report: FieldReport) -> str | None:
    """``metadata.name`` / ``metadata.comments`` as the golden's own field (text only)."""
    value = meta.get(name)
    if not isinstance(value, str):
        return None
    report.map(f"metadata.{name}", name)
    return str(meta.pop(name))


def to_deepeval(cases: Iterable[Case], report: FieldReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for case in cases:
        report.n_read += 1
        if _skip(case, report, "DeepEval"):
            continue
        meta = _metadata(case)
        name = _deepeval_text(meta, "name", report)
        comments = _deepeval_text(meta, "comments", report)
        meta["ragproof"] = _block(case, history_kept=False)
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
                "name": name,
                "comments": comments,
                "additional_metadata": meta,
            }
        )
        report.kinds[case.kind] += 1
    return out


def _is_document_id(value: Any) -> bool:
    """Can ``value`` follow ``Document `` in a reference_context (no space, no colon)?"""
    return (
        isinstance(value, str) and bool(value) and not any(c.isspace() or c == ":" for c in value)
    )


def _document_ids(case: Case, meta: dict[str, Any]) -> tuple[list[str] | None, bool]:
    """The ``Document <id>`` of each passage, and whether they were derived (not the case's).

    The ids a RAGET import kept (``metadata.reference_context_ids``) first, then one
    expected source id per passage, or the only one for every passage; else none."""
    texts, ids = case.reference_contexts, list(case.expected_source_ids)
    kept = meta.get(CONTEXT_IDS)
    if isinstance(kept, list) and len(kept) == len(texts) and all(map(_is_document_id, kept)):
        del meta[CONTEXT_IDS]
        return kept, False
    if len(ids) == 1:
        ids = ids * len(texts)
    if len(ids) == len(texts) and all(map(_is_document_id, ids)):
        return ids, True
    return None, True


def _raget_context(case: Case, meta: dict[str, Any], block: dict[str, Any]) -> str:
    """RAGET's ``reference_context``: ``Document <id>: <text>`` per passage, joined by blank
    lines. Passages it cannot give back as they are (no ids, or a text holding such a
    line) also go in the block."""
    texts = list(case.reference_contexts)
    if not texts:
        return ""
    ids, derived = _document_ids(case, meta)
    if derived:
        block["derived"] = [CONTEXT_IDS]
    if ids is None:
        context = "\n\n".join(texts)
    else:
        context = "\n\n".join(f"Document {i}: {t}" for i, t in zip(ids, texts, strict=True))
    if [passage.strip() for _, passage in split_context(context)] != texts:
        block["reference_contexts"] = texts
    return context


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
        report.map("question_type", "metadata.question_type")
        case_meta = _metadata(case)
        block = _block(case)
        context = _raget_context(case, case_meta, block)
        meta: dict[str, Any] = {"question_type": qtype}
        if "seed_document_id" not in case_meta and case.expected_source_ids:
            meta["seed_document_id"] = case.expected_source_ids[0]
            block["derived"] = [*block.get("derived", []), "seed_document_id"]
            report.map("expected_source_ids[0]", "metadata.seed_document_id")
        meta.update(case_meta)
        meta["ragproof"] = block
        report.map("id, kind, question_type, expected_source_ids", "metadata.ragproof")
        out.append(
            {
                "id": case.id,
                "question": case.question,
                "reference_answer": case.expected_answer or "",
                "reference_context": context,
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
