"""What every importer produces (:class:`Draft`) and the file readers they share.

A draft is one record of the other tool's file in our words, before source ids
are settled and the case is validated (``build.py``). Readers return rows with
their 1-based line so that every message and report can point at the record;
errors name the file and line, never a value.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.readers import decode
from pytest_ragproof.errors import DatasetError


@dataclass
class Draft:
    """One imported record: case fields, reference passages and ids the file gave."""

    line: int | None
    question: str
    kind: str = "qa"
    id: str | None = None
    question_type: str | None = None
    expected_answer: str | None = None
    passages: list[str] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    source_ids_from: str = ""  # which field of the file gave source_ids
    history: list[dict[str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # case fields a ragproof block restores


BLOCK_FIELDS = ("tags", "split", "synthetic", "provenance", "review_status")


def apply_block(draft: Draft, block: Mapping[str, Any], origin: str) -> set[str]:
    """Restore what a ``ragproof export`` block holds (``export.py``): id, kind, question
    type, source ids, the fields the tool has no place for and, where the tool could not
    hold them as they were, the passages. Returns the names the export derived (not
    the case's own data), which the importer leaves out of metadata."""
    ids = block.get("expected_source_ids")
    if isinstance(ids, list) and ids:
        draft.source_ids = [str(i) for i in ids]
        draft.source_ids_from = origin
    for name in ("id", "kind", "question_type"):
        if isinstance(block.get(name), str):
            setattr(draft, name, block[name])
    for name in BLOCK_FIELDS:
        if name in block:
            draft.extra[name] = block[name]
    passages = block.get("reference_contexts")
    if isinstance(passages, list):
        draft.passages = passages
    derived = block.get("derived")
    return {str(n) for n in derived} if isinstance(derived, list) else set()


@dataclass(frozen=True)
class Row:
    """A record of the input file: its line (None where unknown) and value."""

    line: int | None
    value: Any


def bad(path: Path | str, line: int | None, reason: str, hint: str) -> DatasetError:
    return DatasetError(reason, source=str(path), line=line, hint=hint)


_WS = " \t\n\r"


def _parse(
    path: Path, line: int, decode: Callable[[], Any], hint: str, *, first_line: int = 1
) -> Any:
    """``decode()`` of the value at ``line``; a JSON error (at ``first_line`` plus its own
    line number), a too long integer or too deep nesting as a DatasetError."""
    try:
        return decode()
    except json.JSONDecodeError as exc:
        at = first_line + exc.lineno - 1
        raise bad(path, at, f"invalid JSON: {exc.msg} (column {exc.colno})", hint) from None
    except RecursionError:
        raise bad(
            path, line, "holds values nested too deeply to parse", "flatten the nested values"
        ) from None
    except ValueError:  # NaN is read as Python does; only an over-long integer is left
        raise bad(
            path, line, "holds an integer too long to read (over 4300 digits)", "store it as text"
        ) from None


def _json_rows(path: Path, text: str, start: int = -1) -> list[Row]:
    """The elements of the JSON array at ``start`` (the first ``[``), each with its line."""
    decoder = json.JSONDecoder()
    if start < 0:
        start = text.find("[")
        if start < 0:
            raise bad(path, 1, "is not a JSON array", "give the tool's JSON export")
    rows: list[Row] = []
    pos, n = start + 1, len(text)
    while True:
        while pos < n and text[pos] in _WS:
            pos += 1
        if rows and pos < n and text[pos] == ",":
            pos += 1
            while pos < n and text[pos] in _WS:
                pos += 1
        if pos >= n or text[pos] == "]":
            return rows
        line = text.count("\n", 0, pos) + 1
        decode = partial(decoder.raw_decode, text, pos)
        value, pos = _parse(path, line, decode, "fix the JSON syntax there")
        rows.append(Row(line, value))


def _member_array(text: str, keys: tuple[str, ...]) -> int:
    """Where the array of the last member named one of ``keys`` starts in the JSON object
    ``text``, or -1. A value that does not parse ends the search (an array there is
    returned: reading it element by element tells which element is bad, and its line)."""
    decoder = json.JSONDecoder()
    pos, n, found = text.index("{") + 1, len(text), -1
    while pos < n:
        while pos < n and text[pos] in _WS + ",":
            pos += 1
        if pos >= n or text[pos] != '"':
            break
        start = -2
        try:
            key, pos = decoder.raw_decode(text, pos)
            while pos < n and text[pos] in _WS + ":":
                pos += 1
            if key in keys:  # json.loads keeps the last of repeated keys
                found = pos if text.startswith("[", pos) else -1
            start = pos
            _, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return found if found == start else -1
    return found


def _jsonl_rows(path: Path, text: str) -> list[Row]:
    rows: list[Row] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        value = _parse(
            path,
            lineno,
            partial(json.loads, line),
            "each line of a JSONL file must be one JSON object",
            first_line=lineno,
        )
        rows.append(Row(lineno, value))
    return rows


def csv_rows(path: Path, text: str) -> tuple[list[str], list[Row]]:
    """Header and rows (dicts of non-empty cells) of a CSV text, each with its first line."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[Row] = []
    start = 2
    try:
        for row in reader:
            cells = {k: v for k, v in row.items() if isinstance(k, str) and v not in (None, "")}
            rows.append(Row(start, cells))
            start = reader.line_num + 1
    except csv.Error:
        raise bad(path, reader.line_num, "malformed CSV", "check the quoting of that row") from None
    return list(reader.fieldnames or []), rows


def read_text(path: Path) -> str:
    text = decode(path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_json_records(path: Path, text: str, list_keys: tuple[str, ...] = ()) -> list[Row]:
    """A JSON array, a JSON object holding one under ``list_keys``, or JSONL."""
    head = text.lstrip()
    if head.startswith("["):
        return _json_rows(path, text)
    if head.startswith("{") and list_keys:
        try:
            whole: Any = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # JSONL, or an error the line-by-line read reports with its line
        except (ValueError, RecursionError):  # too deep or too long: where, if an array
            whole = {}
        if isinstance(whole, dict):
            start = _member_array(text, list_keys)
            if start >= 0:
                return _json_rows(path, text, start)
            if whole and not any(key in whole for key in list_keys):
                return [Row(1, whole)]  # a one-record JSONL file
    return _jsonl_rows(path, text)


def objects(path: Path, rows: list[Row]) -> Iterator[tuple[int | None, Mapping[str, Any]]]:
    for row in rows:
        if not isinstance(row.value, Mapping):
            raise bad(
                path,
                row.line,
                f"a record is a JSON {type(row.value).__name__}, not an object",
                "each record must be an object of the tool's fields",
            )
        yield row.line, row.value


def string_value(
    path: Path, line: int | None, name: str, value: Any, *, allow_number: bool = False
) -> str | None:
    """A text field: None when absent or blank; a clear error when it is not text."""
    if value is None:
        return None
    if allow_number and isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise bad(
            path,
            line,
            f"{name} is a {type(value).__name__}, not text",
            f"make {name} a string",
        )
    return value if value.strip() else None


def _text(path: Path, line: int | None, name: str, value: str) -> None:
    """Refuse a list entry no UTF-8 file can hold: a lone surrogate (a ``\\uD800`` escape of
    a JSON file, a Python list literal's). Contexts are hashed into ids before the case is
    validated (which names a lone surrogate in any other field)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad(
            path,
            line,
            f"{name} holds a lone surrogate escape (\\uD800-\\uDFFF: half of a UTF-16 pair, "
            "no character)",
            "remove that escape or write the character itself",
        ) from None


def string_list(
    path: Path, line: int | None, name: str, value: Any, *, split: str = ""
) -> list[str]:
    """A list of texts: a JSON list, or in a CSV cell a JSON array, a Python list literal
    (how pandas writes a list column) or, with ``split``, text joined by that delimiter."""
    if value is None:
        return []
    if isinstance(value, str):
        cell = value.strip()
        if cell.startswith("["):
            try:
                value = json.loads(cell)
            except json.JSONDecodeError:
                try:
                    value = ast.literal_eval(cell)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    raise bad(
                        path,
                        line,
                        f"{name} starts like a list but is neither a JSON array nor a Python list",
                        f'write {name} as a JSON array, e.g. ["first passage", "second"]',
                    ) from None
        elif split:
            value = [part for part in cell.split(split)]
        else:
            value = [cell]
    if not isinstance(value, list | tuple):
        raise bad(
            path,
            line,
            f"{name} is a {type(value).__name__}, not a list",
            f"make {name} a list of strings",
        )
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise bad(
                path,
                line,
                f"{name} holds a {type(item).__name__}, not text",
                f"make every entry of {name} a string",
            )
        _text(path, line, name, item)
        if item.strip():
            out.append(item)
    return out
