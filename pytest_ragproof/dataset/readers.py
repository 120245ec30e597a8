"""Readers: dataset files as (line, value) pairs, before any record is built.

Decoding (UTF-8, BOM), telling the kinds of file apart (``sniff``) and reading
JSONL, JSON arrays and CSV. Errors name the source, record and line, never a value.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.errors import DatasetError


def decode(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(
            f"cannot read the file ({exc.strerror or 'OS error'})",
            source=str(path),
            exc_type=type(exc).__name__,
            hint="check the path and its permissions",
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetError(
            f"is not UTF-8 text (byte {exc.start + 1})",
            source=str(path),
            line=line,
            exc_type="UnicodeDecodeError",
            hint="save the file as UTF-8",
        ) from None
    while text.startswith("\ufeff"):
        text = text[1:]
    return text


def _json_error(source: str, text: str, exc: json.JSONDecodeError, record: int | None) -> None:
    raise DatasetError(
        f"invalid JSON: {exc.msg} (column {exc.colno})",
        source=source,
        record=record,
        line=exc.lineno,
        exc_type="JSONDecodeError",
        hint="fix the JSON syntax at that position",
    ) from None


class _ConstantError(ValueError):
    """NaN, Infinity or -Infinity in JSON text."""


def _reject_constant(name: str) -> Any:
    raise _ConstantError(f"{name} is not valid JSON")


def bad_number(exc: ValueError) -> tuple[str, str]:
    """Reason and fix for the ValueErrors decoding raises besides JSONDecodeError."""
    if isinstance(exc, _ConstantError):
        return "holds NaN or Infinity, which JSON does not allow", "use a finite number or a string"
    # Python refuses to read integers of more than sys.get_int_max_str_digits() digits.
    return "holds an integer too long to read (over 4300 digits)", "store it as a string"


# One decoder for every line: json.loads with parse_constant builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
# Its scanner (set by JSONDecoder.__init__; typeshed does not declare it): one value
# at a position, without decode()'s Python wrapper, for lines that need nothing more.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def loads(text: str) -> Any:
    return _DECODER.decode(text)


def printable_ascii(text: str) -> bool:
    """Is every string a JSON ``text`` decodes to printable ASCII (keys included)?

    True for ASCII text without a backslash (so without escapes) and without DEL:
    the decoder refuses raw control characters inside strings, so each string is
    made of the characters 0x20-0x7E as written. Normalization then has only outer
    whitespace left to check. One scan of the text; False only costs the checks.
    """
    return text.isascii() and "\\" not in text and "\x7f" not in text


# Records travel as (line, value) pairs; their number is their position.
Pair = tuple[int | None, Any]


BAD = object()  # stands for a record that could not be read, when errors are collected


def _iter_jsonl(source: str, text: str, errors: list[DatasetError] | None = None) -> Iterator[Pair]:
    """(line, value) per non-blank line; with ``errors``, a bad line is noted and skipped."""
    record = 0
    decode = _DECODER.decode
    scan = _SCAN
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        record += 1
        try:
            try:
                value, end = scan(line, 0)
            except StopIteration:
                end = -1
            if end != len(line):
                value = decode(line)  # outer whitespace, extra data, or the error to report
        except json.JSONDecodeError as exc:
            error = DatasetError(
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                source=source,
                record=record,
                line=lineno,
                exc_type="JSONDecodeError",
                hint="each line of a JSONL file must be one JSON object",
            )
        except ValueError as exc:
            reason, hint = bad_number(exc)
            error = DatasetError(
                reason, source=source, record=record, line=lineno, exc_type="ValueError", hint=hint
            )
        except RecursionError:
            error = too_deep(source, record, lineno)
        else:
            yield lineno, value
            continue
        if errors is None:
            raise error
        errors.append(error)
        yield lineno, BAD


def too_deep(source: str, record: int | None = None, line: int | None = None) -> DatasetError:
    return DatasetError(
        "holds values nested too deeply to parse",
        source=source,
        record=record,
        line=line,
        exc_type="RecursionError",
        hint="flatten the nested arrays or objects",
    )


def _element_lines(text: str) -> list[int]:
    """Start line of each element of a top-level JSON array (only computed on error)."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\n\r,":
            pos += 1
        if pos >= n or text[pos] == "]":
            return lines
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)


def _iter_json_array(source: str, text: str, values: list[Any]) -> Iterator[Pair]:
    lines: list[int] = []
    for i, value in enumerate(values):
        if not isinstance(value, Mapping):
            lines = lines or _element_lines(text)  # only ever needed for a bad record
            yield lines[i], value
        else:
            yield None, value


def _iter_csv(
    source: str,
    text: str,
    field_map: DatasetFieldMap | None,
    errors: list[DatasetError] | None = None,
) -> Iterator[Pair]:
    if field_map is None:
        raise DatasetError(
            "a CSV dataset needs an explicit field map",
            source=source,
            hint="pass field_map=DatasetFieldMap({...}) or, on the command line, "
            "--map COLUMN=FIELD for each column (columns named like case fields map to "
            "themselves: --map question=question)",
        )
    reader = csv.DictReader(io.StringIO(text, newline=""))
    record = 0
    start_line = 2
    try:
        for row in reader:
            record += 1
            yield start_line, row
            start_line = reader.line_num + 1
    except csv.Error:
        error = DatasetError(
            "malformed CSV",
            source=source,
            record=record + 1,
            line=reader.line_num,
            exc_type="csv.Error",
            hint="check the quoting of that row",
        )
        if errors is None:
            raise error from None
        errors.append(error)  # the reader cannot go on past it


FROZEN_PREFIX = '{"format":"ragproof.dataset/'


def sniff(path: Path, text: str) -> tuple[str, Any]:
    """The kind of a dataset file, and the parsed document when sniffing parsed it."""
    if path.suffix.lower() == ".csv":
        return "csv", None
    head = text.lstrip()
    if head.startswith("["):
        return "array", None
    if head.startswith(FROZEN_PREFIX):
        return "frozen", None  # parsed once, by the frozen loader (which reports damage)
    if head.startswith("{"):
        try:
            value = loads(text)  # a JSONL file fails fast, after its first line
        except (ValueError, RecursionError):
            return "jsonl", None
        if isinstance(value, dict) and ("format" in value or "cases" in value):
            return "frozen", value
    return "jsonl", None


def read_records(
    source: str,
    text: str,
    kind: str,
    field_map: DatasetFieldMap | None,
    errors: list[DatasetError] | None = None,
) -> Iterator[Pair]:
    """The (line, value) pairs of a JSONL, JSON array or CSV text (see ``_iter_jsonl``)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if kind == "csv":
        return _iter_csv(source, text, field_map, errors)
    if kind == "jsonl":
        return _iter_jsonl(source, text, errors)
    try:
        values = loads(text)
    except json.JSONDecodeError as exc:
        _json_error(source, text, exc, None)
    except ValueError as exc:
        reason, hint = bad_number(exc)
        raise DatasetError(reason, source=source, exc_type="ValueError", hint=hint) from None
    except RecursionError:
        raise too_deep(source) from None
    return _iter_json_array(source, text, values)
