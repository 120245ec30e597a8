"""The reviewed file of a dataset review: decisions on generated cases, written atomically.

``ragproof review cases.jsonl -o reviewed.jsonl`` reads a review file (JSONL, as
``ragproof generate`` writes it) and writes ``reviewed.jsonl``: every case of the
input in its order, each with its ``review_status`` (``pending`` until decided,
``approved``, ``rejected`` or ``edited``) and, for an edit, what it was before in
``provenance.edits`` (a generated case) or ``metadata.review_edits`` (an imported
case, which has no generation provenance: ``metadata.imported_from``). The whole file
is rewritten atomically after each decision; the input is never written. An existing
output is taken up again (the review resumes) only when it holds exactly the input's
case ids in the input's order, which is what this module writes; any other file is
refused, never overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ragproof.errors import DatasetError

__all__ = ["EDITABLE", "Decision", "ReviewedFile", "imported", "now"]

EDITABLE = ("question", "expected_answer", "expected_source_ids", "kind")
REVIEW_EDITS = "review_edits"  # the metadata key of an imported case's edits
DECIDED = ("approved", "rejected", "edited")


def now() -> str:
    """The current UTC time to the second (``2026-12-02T10:00:00Z``), as labels write it."""
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Decision:
    status: str  # approved | rejected | edited | pending
    edits: Mapping[str, Any] | None = None


def _read_jsonl(path: Path, *, what: str) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {what} ({type(exc).__name__})", source=str(path)) from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise DatasetError(
                "not a JSON object",
                source=str(path),
                line=number,
                hint=f"{what} must be JSONL, one case object a line",
            ) from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise DatasetError(
                "not a case object with an 'id'",
                source=str(path),
                line=number,
                hint="review a generated review file (ragproof generate writes one)",
            )
        records.append(record)
    return records


def _check_record(record: Mapping[str, Any], source: str, number: int) -> None:
    """The record as a case would validate (edits must keep the case valid)."""
    from pytest_ragproof.dataset.io import load_dataset

    probe = dict(record)
    if probe.get("review_status") == "rejected":
        probe["review_status"] = "pending"  # a dataset of rejected cases only holds none
    try:
        load_dataset([probe])
    except DatasetError as exc:
        raise DatasetError(
            f"the edit would make case {number} invalid: {exc.reason}",
            source=source,
            hint=exc.hint or "correct the edited field",
        ) from None


def imported(record: Mapping[str, Any]) -> bool:
    """A case ``ragproof import`` wrote (``metadata.imported_from``) and no generator."""
    metadata = record.get("metadata")
    return (
        isinstance(metadata, Mapping)
        and isinstance(metadata.get("imported_from"), str)
        and not isinstance(record.get("provenance"), Mapping)
    )


def _has_edits(record: Mapping[str, Any]) -> bool:
    provenance = record.get("provenance")
    if isinstance(provenance, Mapping) and provenance.get("edits"):
        return True
    metadata = record.get("metadata")
    return imported(record) and isinstance(metadata, Mapping) and bool(metadata.get(REVIEW_EDITS))


class ReviewedFile:
    """The cases under review and the output file their decisions go to."""

    def __init__(self, source: Path, output: Path) -> None:
        self.source = source
        self.output = output
        if output.resolve() == source.resolve():
            raise DatasetError(
                "the reviewed output would overwrite the input",
                source=str(source),
                hint="give another path with -o (the input is never written)",
            )
        from pytest_ragproof.dataset.io import load_dataset

        load_dataset(source)  # every case valid, or a DatasetError naming the record
        self.input = _read_jsonl(source, what="the review file")
        ids = [r["id"] for r in self.input]
        self.resumed = False
        if output.exists() or output.is_symlink():
            previous = _read_jsonl(output, what="the reviewed file") if output.is_file() else []
            if [r["id"] for r in previous] != ids:
                raise DatasetError(
                    "exists and is not a reviewed file of this input (other case ids); "
                    "ragproof review never overwrites other files",
                    source=str(output),
                    hint="choose another path with -o, or move that file away",
                )
            self.records = previous
            self.resumed = True
        else:
            self.records = [dict(r) for r in self.input]

    def __len__(self) -> int:
        return len(self.records)

    def status(self, index: int) -> str:
        return str(self.records[index].get("review_status") or "pending")

    def counts(self) -> dict[str, int]:
        out = {"pending": 0, "approved": 0, "rejected": 0, "edited": 0}
        for i in range(len(self.records)):
            out[self.status(i)] = out.get(self.status(i), 0) + 1
        return out

    def decided(self) -> int:
        return sum(1 for i in range(len(self.records)) if self.status(i) in DECIDED)

    def decide(self, index: int, decision: Decision, *, reviewer: str, time: str) -> None:
        """Apply one decision to case ``index`` and rewrite the output atomically."""
        record = dict(self.records[index])
        status = decision.status
        if status not in (*DECIDED, "pending"):
            raise ValueError(f"unknown review status {status!r}")
        changes = {
            name: value
            for name, value in (decision.edits or {}).items()
            if name in EDITABLE and value != record.get(name)
        }
        if changes:
            provenance = record.get("provenance")
            if isinstance(provenance, dict) and "kind" not in changes:
                owner, key = provenance, "edits"
            elif imported(record):
                owner, key = dict(record["metadata"]), REVIEW_EDITS
            elif "kind" in changes:
                raise DatasetError(
                    "only an imported case's kind is changed here",
                    source=str(self.source),
                    record=index + 1,
                    hint="mark imported cases (ragproof import) unanswerable here",
                )
            else:
                raise DatasetError(
                    "this case has no provenance to record an edit in",
                    source=str(self.source),
                    record=index + 1,
                    hint="edit hand-written cases in the file itself; approve or reject here",
                )
            edits = list(owner.get(key) or [])
            for name, value in changes.items():
                edits.append(
                    {"field": name, "before": record.get(name), "reviewer": reviewer, "time": time}
                )
                if value in (None, "", []):
                    record.pop(name, None)
                else:
                    record[name] = value
            if key == "edits":
                record["provenance"] = {**owner, "edits": edits}
            else:
                record["metadata"] = {**owner, REVIEW_EDITS: edits}
            status = "edited"
        elif status == "approved" and _has_edits(record):
            status = "edited"  # approving an edited case keeps it marked as edited
        record["review_status"] = status
        _check_record(record, str(self.source), index + 1)
        self.records[index] = record
        self._write()

    def _write(self) -> None:
        from pytest_ragproof.fileio import write_atomic

        write_atomic(
            self.output,
            [json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in self.records],
        )
