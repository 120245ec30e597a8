"""A knowledge base given as rows (RAGET takes a DataFrame) instead of files.

Each row becomes one document: the values of ``columns`` (default: every column
but the id column, in the row's order), each stripped, joined with a blank line,
then normalized like any document (LF, NFC). ``id_column`` names the document id;
without it the id is the 1-based row number. Rows keep their input order. A row
whose selected columns hold no text is skipped with reason ``no_text``.

Sources: a ``.csv`` file (header row, UTF-8 with optional BOM), a ``.jsonl`` file
(one JSON object per line), an iterable of mappings, or anything with a pandas
style ``to_dict("records")`` (a DataFrame). pandas is never imported here.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_ragproof import defaults
from pytest_ragproof.corpus import Corpus, Document, SkippedFile
from pytest_ragproof.corpus.loader import stat_corpus_path
from pytest_ragproof.errors import ConfigError, IngestError
from pytest_ragproof.textnorm import normalize_body

ROW_FILE_SUFFIXES = (".csv", ".jsonl")


def is_rows_file(path: str | os.PathLike[str]) -> bool:
    """True for a ``.csv`` or ``.jsonl`` file path (read as rows, not as a corpus file)."""
    p = Path(path)
    return p.suffix.lower() in ROW_FILE_SUFFIXES and not p.is_dir()


def load_rows_file(
    path: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    max_file_bytes: int = defaults.MAX_FILE_BYTES,
) -> Corpus:
    """Read a CSV or JSONL knowledge base into a :class:`Corpus` of one document per row."""
    p = Path(path)
    size = stat_corpus_path(p).st_size
    if size > max_file_bytes:
        raise IngestError(
            f"{p.name} is {size} bytes, over the {max_file_bytes} byte cap (--max-file-bytes)"
        )
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise IngestError(f"cannot read {p} ({type(exc).__name__})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{p.name} is not UTF-8 (byte {exc.start})") from None
    rows = _csv_rows(text) if p.suffix.lower() == ".csv" else _jsonl_rows(p.name, text)
    return documents_from_rows(rows, columns=columns, id_column=id_column, root=p)


def documents_from_rows(
    rows: Iterable[Mapping[str, Any]] | Any,
    *,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    root: str | os.PathLike[str] = "<rows>",
) -> Corpus:
    """One document per row (module docstring); raises ConfigError for unusable input."""
    records = _records(rows)
    wanted = list(columns) if columns is not None else None
    if wanted is not None and not wanted:
        raise ConfigError("columns is empty; name at least one column holding text")
    documents: list[Document] = []
    skipped: list[SkippedFile] = []
    seen: set[str] = set()
    for number, row in enumerate(records, start=1):
        if not isinstance(row, Mapping):
            raise ConfigError(f"row {number} is a {type(row).__name__}, not a mapping")
        # csv.DictReader files surplus cells under the key None: not a column.
        keys = {str(k): k for k in row if k is not None}
        doc_id = _row_id(row, keys, id_column, number)
        if doc_id in seen:
            raise ConfigError(f"row {number}: document id {doc_id!r} is used by an earlier row")
        seen.add(doc_id)
        selected = wanted if wanted is not None else [k for k in keys if k != id_column]
        missing = [c for c in selected if c not in keys]
        if missing:
            raise ConfigError(
                f"row {number} has no column {missing[0]!r}; columns present: "
                + ", ".join(sorted(keys))
            )
        parts = [_cell_text(row[keys[c]]) for c in selected]
        body = normalize_body("\n\n".join(p for p in parts if p))
        if not body.strip():
            skipped.append(SkippedFile(doc_id, "no_text", f"row {number} has no text"))
            continue
        documents.append(Document(doc_id, body, "text", len(body.encode("utf-8"))))
    if not documents and not skipped:
        raise ConfigError("the knowledge base holds no rows")
    return Corpus(Path(root), tuple(documents), tuple(skipped))


def _records(rows: Any) -> Iterable[Any]:
    to_dict = getattr(rows, "to_dict", None)
    if callable(to_dict) and not isinstance(rows, Mapping):
        # A pandas DataFrame (duck-typed: pandas is an optional user dependency).
        records = to_dict("records")
        if not isinstance(records, list):
            raise ConfigError("to_dict('records') did not return a list of rows")
        return records
    if isinstance(rows, Mapping | str | bytes):
        raise ConfigError(
            f"expected rows (an iterable of mappings or a DataFrame), got a {type(rows).__name__}"
        )
    try:
        iterator: Iterator[Any] = iter(rows)
    except TypeError:
        raise ConfigError(
            f"expected rows (an iterable of mappings or a DataFrame), got a {type(rows).__name__}"
        ) from None
    return iterator


def _row_id(row: Mapping[Any, Any], keys: dict[str, Any], id_column: str | None, n: int) -> str:
    if id_column is None:
        return str(n)
    if id_column not in keys:
        raise ConfigError(f"row {n} has no id column {id_column!r}")
    value = _cell_text(row[keys[id_column]])
    if not value:
        raise ConfigError(f"row {n} has an empty id in column {id_column!r}")
    return unicodedata.normalize("NFC", value)


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    try:
        if value != value:
            return ""  # NaN: how pandas writes a missing number
    except (TypeError, ValueError):
        return ""  # pandas.NA refuses to be compared: a missing value too
    # Numbers, booleans and other scalars (numpy types included) as they print.
    return str(value).strip()


def _csv_rows(text: str) -> Iterator[dict[str, str]]:
    import csv
    import io

    yield from csv.DictReader(io.StringIO(text, newline=""))


def _jsonl_rows(name: str, text: str) -> Iterator[Any]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError as exc:
            raise IngestError(f"{name} line {line_no} is not JSON ({type(exc).__name__})") from None
