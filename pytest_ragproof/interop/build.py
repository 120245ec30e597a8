"""From drafts to a validated dataset: source ids, case records, validation, writing.

Source ids of a qa case, in this order:

1. with ``--corpus``, the ids of the corpus documents that contain its reference
   passages (exact text first, then with runs of whitespace collapsed); passages
   found nowhere are counted by line;
2. ids the file itself gave (RAGET's ``seed_document_id``, a ``ragproof`` block an
   export wrote, promptfoo's mapped var);
3. else the content ids of the passages (first 16 hex digits of sha256 of the
   NFC text: the id ragproof gives a context returned as a plain string), and the
   report says retrieval metrics need document ids.

An import writes only a new file or one an earlier import wrote (every record
carries ``metadata.imported_from``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.dataset.records import Builder
from pytest_ragproof.errors import DatasetError
from pytest_ragproof.interop import TOOLS
from pytest_ragproof.interop.drafts import Draft
from pytest_ragproof.interop.report import FieldReport
from pytest_ragproof.textnorm import normalize_text

CORPUS = "the corpus (document ids)"
CONTENT = "the reference texts (content ids)"
CONTENT_NOTE = (
    "{n} qa case(s) have reference texts but no document ids: their expected_source_ids "
    "are the texts' content ids (first 16 hex digits of sha256), which only a pipeline "
    "returning those exact texts as plain-string contexts matches; retrieval metrics need "
    "document ids: re-import with --corpus PATH"
)
CONTENT_NOTE_CORPUS = (
    "{n} qa case(s) have no reference text found in the corpus: their expected_source_ids "
    "are the texts' content ids (first 16 hex digits of sha256), which only a pipeline "
    "returning those exact texts as plain-string contexts matches; retrieval metrics need "
    "document ids: correct the texts or the corpus, or add expected_source_ids by hand"
)
CORPUS_NOTE = (
    "expected_source_ids resolved from the corpus are document ids: run pytest with "
    "--ragproof-source-match=document unless your contexts' ids are document ids"
)


class ImportProblems(DatasetError):
    """Records that cannot become cases; ``problems`` lists each (value-free)."""

    def __init__(self, source: str, problems: list[DatasetError]) -> None:
        self.problems = problems
        super().__init__(
            f"{len(problems)} record(s) cannot be imported",
            source=source,
            hint="fix those records in the file, or remove them",
        )


def _squash(text: str) -> str:
    return " ".join(text.split())


class CorpusIndex:
    """Finds which corpus documents contain a passage."""

    def __init__(self, path: str) -> None:
        from pytest_ragproof.corpus import load_corpus

        corpus = load_corpus(path)
        self.n_documents = len(corpus.documents)
        self.skipped = corpus.skip_counts()
        self._docs = [(doc.id, doc.text, _squash(doc.text)) for doc in corpus.documents]

    def find(self, passage: str) -> list[str]:
        text = normalize_text(passage)
        exact = [doc_id for doc_id, body, _ in self._docs if text in body]
        if exact:
            return exact
        squashed = _squash(text)
        return [doc_id for doc_id, _, body in self._docs if squashed in body]


def _source_ids(
    draft: Draft, corpus: CorpusIndex | None, report: FieldReport
) -> tuple[list[str], str]:
    if corpus is not None and draft.passages:
        found: list[str] = []
        for passage in draft.passages:
            ids = corpus.find(passage)
            if not ids:
                report.unresolved.append(draft.line)
            elif len(ids) > 1:
                report.ambiguous.append(draft.line)
            found += [i for i in ids if i not in found]
        if found:
            return found, CORPUS
    if draft.source_ids:
        report.map(draft.source_ids_from, "expected_source_ids")
        return draft.source_ids, draft.source_ids_from
    if draft.passages:
        from pytest_ragproof.metrics.outputs import content_id

        content: list[str] = []
        for passage in draft.passages:
            cid = content_id(normalize_text(passage))
            if cid not in content:
                content.append(cid)
        return content, CONTENT
    return [], ""


def record_of(
    draft: Draft, tool: str, corpus: CorpusIndex | None, report: FieldReport
) -> dict[str, Any] | None:
    """The case record of ``draft``, or None (noted in the report) when it has no sources."""
    rec: dict[str, Any] = {"kind": draft.kind, "question": draft.question}
    if draft.id is not None:
        rec["id"] = draft.id
    if draft.question_type is not None:
        rec["question_type"] = draft.question_type
    if draft.expected_answer is not None:
        rec["expected_answer"] = draft.expected_answer
    if draft.kind == "qa":
        ids, origin = _source_ids(draft, corpus, report)
        # A pending draft (an imported trace) may lack them: its reviewer gives them.
        if not ids and draft.extra.get("review_status") != "pending":
            report.drop_record(
                "no reference context and no source id (a qa case needs expected_source_ids)",
                draft.line,
            )
            return None
        if ids:
            rec["expected_source_ids"] = ids
            rec[_ORIGIN] = origin
    if draft.passages:
        rec["reference_contexts"] = draft.passages
    if draft.history:
        rec["conversation_history"] = draft.history
    if draft.tags:
        rec["tags"] = draft.tags
    rec["metadata"] = {**draft.metadata, "imported_from": tool}
    rec.update(draft.extra)
    return rec


_ORIGIN = "\0origin"  # where a record's source ids came from; removed before validation
_RECORD_REF = re.compile(r"record (\d+)")


def build_dataset(
    drafts: list[Draft], tool: str, source: str, corpus: CorpusIndex | None, report: FieldReport
) -> Dataset:
    """Validate the drafts as cases; later records with the same content as an earlier
    one are dropped (reported); any other invalid record raises :class:`ImportProblems`."""
    records: list[dict[str, Any]] = []
    lines: list[int | None] = []
    for draft in drafts:
        rec = record_of(draft, tool, corpus, report)
        if rec is not None:
            records.append(rec)
            lines.append(draft.line)
    if not records:
        raise DatasetError(
            "no record could be imported (see the dropped records above)",
            source=source,
            hint="check --from names the tool that wrote the file",
        )
    origins = [rec.pop(_ORIGIN, None) for rec in records]
    errors: list[DatasetError] = []
    builder = Builder(source, errors)
    builder.read(list(zip(lines, records, strict=True)), None, from_csv=False)
    builder.validate()
    problems: list[DatasetError] = []
    duplicate: set[int] = set()
    for error in errors:
        index = (error.record or 1) - 1
        reason = _RECORD_REF.sub(
            lambda m: f"the record at line {lines[int(m.group(1)) - 1]}", error.reason
        )
        if error.exc_type == "DuplicateId" and "same content" in error.reason:
            duplicate.add(index)
            report.drop_record("the same content as an earlier record", lines[index])
            continue
        problems.append(
            DatasetError(
                f"the imported case is invalid: {reason}",
                source=source,
                line=lines[index],
                exc_type=error.exc_type,
                hint=error.hint,
            )
        )
    if problems:
        raise ImportProblems(source, problems)
    kept = [rec for i, rec in enumerate(records) if i not in duplicate]
    report.source_ids.update(o for i, o in enumerate(origins) if o and i not in duplicate)
    dataset = load_dataset(kept)
    report.kinds.update(case.kind for case in dataset.cases)
    if report.source_ids[CONTENT]:
        note = CONTENT_NOTE if corpus is None else CONTENT_NOTE_CORPUS
        report.note(note.format(n=report.source_ids[CONTENT]))
    if report.source_ids[CORPUS]:
        report.note(CORPUS_NOTE)
    return dataset


def check_output(out: Path, inputs: list[Path]) -> str | None:
    """Why ``out`` must not be written, or None: only new files or earlier imports."""
    if any(out.resolve() == p.resolve() for p in inputs):
        return f"-o {out} is the input file; choose another output path"
    if not (out.exists() or out.is_symlink()):
        return None
    if out.is_file() and _imported(out):
        return None
    return (
        f"-o {out} exists and was not written by ragproof import; it will not be replaced; "
        "choose a new path or move that file away"
    )


def _imported(path: Path) -> bool:
    """Is every record of ``path`` one ``ragproof import`` wrote?"""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    seen = False
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            return False
        meta = value.get("metadata") if isinstance(value, dict) else None
        if not isinstance(meta, dict) or meta.get("imported_from") not in TOOLS:
            return False
        seen = True
    return seen
