"""The public face of dataset loading: ``load_dataset``, ``find_problems``, ``write_jsonl``.

``load_dataset`` turns any supported source into a :class:`Dataset`. The work is
done by the rooms beside it: ``readers.py`` (decoding, telling file kinds apart,
JSONL, JSON arrays, CSV), ``records.py`` (normalizing, validating and collecting
records into a Dataset) and ``frozen.py`` (verifying frozen files).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.canonical import canonical_json
from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.dataset.frozen import load_frozen
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.dataset.normalize import normalize_record
from pytest_ragproof.dataset.readers import decode, printable_ascii, read_records, sniff
from pytest_ragproof.dataset.records import Builder, Dataset, build
from pytest_ragproof.errors import DatasetError
from pytest_ragproof.fileio import paused_gc, write_atomic

__all__ = [
    "Dataset",
    "DatasetFieldMap",
    "case_record",
    "find_problems",
    "load_dataset",
    "load_to_write",
    "paused_gc",
    "write_jsonl",
]


def load_dataset(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    field_map: DatasetFieldMap | None = None,
) -> Dataset:
    """Load, normalize and validate a dataset; verify it if it is a frozen file.

    ``source`` is a path (JSONL, JSON array, CSV with ``field_map``, frozen JSON)
    or an iterable of mappings. Raises :class:`~pytest_ragproof.errors.DatasetError`
    for any invalid input, naming source, record and line but no record values.
    """
    with paused_gc():
        return _load(source, field_map=field_map)


def load_to_write(
    source: str | os.PathLike[str], *, field_map: DatasetFieldMap | None = None
) -> Dataset:
    """``load_dataset`` for a caller that writes the cases out or compares them, then
    drops them (freezing, ``freeze --check``): the cases of a JSONL, JSON or CSV file do
    not share their repeated values (``sharing.py``), a memory saving for cases kept
    through a run that costs a pass over every case."""
    with paused_gc():
        return _load(source, field_map=field_map, share=False)


def _load(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    field_map: DatasetFieldMap | None = None,
    share: bool = True,
) -> Dataset:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        name = str(source)
        text = decode(path)
        kind, doc = sniff(path, text)
        if kind == "frozen":
            return load_frozen(name, text, doc)
        pairs = read_records(name, text, kind, field_map)
        # A field map may bring in strings of its own (metadata.<key> columns).
        clean = kind != "csv" and field_map is None and printable_ascii(text)
        return build(
            name, pairs, field_map, from_csv=kind == "csv", printable_ascii=clean, share=share
        )
    if isinstance(source, Mapping | bytes):
        raise DatasetError(
            f"expected a path or an iterable of mappings, got a {type(source).__name__}",
            source="<python>",
            hint="pass a list of dicts, e.g. load_dataset([{'kind': 'qa', ...}])",
        )
    try:
        iterator = iter(source)
    except TypeError:
        raise DatasetError(
            f"expected a path or an iterable of mappings, got a {type(source).__name__}",
            source="<python>",
            hint="pass a path or a list of dicts",
        ) from None
    return build("<python>", ((None, value) for value in iterator), field_map)


def find_problems(
    source: str | os.PathLike[str], *, field_map: DatasetFieldMap | None = None
) -> list[DatasetError]:
    """Every problem of a dataset file, in file order; empty when it loads.

    ``load_dataset`` stops at the first problem; this goes on past bad records
    (``ragproof validate`` lists them all). Problems with the file as a whole (it
    cannot be read, a frozen file was modified, a JSON array does not parse, a
    CSV has no field map) are the only one listed.
    """
    try:
        load_dataset(source, field_map=field_map)
    except DatasetError as exc:
        failure = exc
    else:
        return []
    path = Path(source)
    name = str(source)
    errors: list[DatasetError] = []
    try:
        with paused_gc():
            text = decode(path)
            kind, _ = sniff(path, text)
            if kind == "frozen":
                return [failure]
            builder = Builder(name, errors)
            builder.read(
                read_records(name, text, kind, field_map, errors), field_map, from_csv=kind == "csv"
            )
            builder.validate()
    except (DatasetError, ValueError, RecursionError):
        return [failure]
    errors.sort(key=lambda e: e.record or 0)
    return errors or [failure]


def case_record(case: Case) -> dict[str, Any]:
    """The case as its canonical record: fields at their default left out."""
    return normalize_record(case.model_dump(mode="json"))


def write_jsonl(cases: Iterable[Case], path: str | os.PathLike[str]) -> Path:
    """Write cases as a reviewable JSONL file (one compact record per line), atomically."""
    target = Path(path)
    lines = [canonical_json(case_record(case)) + "\n" for case in cases]
    write_atomic(target, "".join(lines))
    return target
