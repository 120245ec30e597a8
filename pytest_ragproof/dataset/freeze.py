"""Freezing: validate a dataset and write its canonical, hashed frozen file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytest_ragproof.dataset.canonical import frozen_parts
from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.dataset.models import SCHEMA_VERSION
from pytest_ragproof.errors import DatasetError
from pytest_ragproof.fileio import paused_gc, write_atomic

__all__ = [
    "FreezeResult",
    "default_output",
    "freeze",
    "freeze_dataset",
    "freeze_file",
    "write_atomic",
]


@dataclass(frozen=True)
class FreezeResult:
    """What a freeze wrote and left out."""

    path: Path
    dataset: Dataset
    n_cases: int
    n_pending: int
    n_rejected: int


def default_output(path: Path) -> Path:
    """``<stem>.frozen.json`` beside the input (``cases.jsonl`` -> ``cases.frozen.json``)."""
    stem = path.name
    for suffix in (".frozen.json", ".jsonl", ".json", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return path.with_name(f"{stem}.frozen.json")


def freeze_dataset(dataset: Dataset, out: Path, *, require_review: bool = False) -> FreezeResult:
    """Write ``dataset`` as a frozen file at ``out``."""
    if require_review and dataset.n_pending:
        raise DatasetError(
            f"{dataset.n_pending} case(s) are still pending review",
            source=dataset.source,
            hint="set review_status to approved or rejected for every case, "
            "or freeze without --require-review",
        )
    write_atomic(out, frozen_parts(dataset.canonical_cases, SCHEMA_VERSION, dataset.sha256))
    return FreezeResult(
        path=out,
        dataset=dataset,
        n_cases=len(dataset.cases),
        n_pending=dataset.n_pending,
        n_rejected=dataset.n_rejected,
    )


def freeze_file(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    require_review: bool = False,
    field_map: DatasetFieldMap | None = None,
) -> FreezeResult:
    """Load and validate ``path``, write its frozen file; what ``ragproof freeze`` runs."""
    src = Path(path)
    target = Path(out) if out is not None else default_output(src)
    if target.resolve() == src.resolve():
        raise DatasetError(
            "the output would overwrite the input",
            source=str(src),
            hint="choose another output path with -o",
        )
    with paused_gc():  # see paused_gc: loading and writing build no cycles
        dataset = load_dataset(src, field_map=field_map)
        return freeze_dataset(dataset, target, require_review=require_review)


def freeze(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    require_review: bool = False,
    field_map: DatasetFieldMap | None = None,
) -> Path:
    """Validate ``path`` and write ``<stem>.frozen.json`` beside it (or ``out``).

    Rejected cases are left out; pending ones are frozen (``require_review=True``
    refuses while any is pending). Returns the path written.
    """
    with paused_gc():
        result = freeze_file(path, out, require_review=require_review, field_map=field_map)
        written = result.path
        del result  # the cases are freed while paused: the collector has nothing to scan
    return written
