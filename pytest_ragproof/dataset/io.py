"""The only code that reads dataset files: JSONL, JSON arrays, CSV, frozen files.

``load_dataset`` turns any supported source into a :class:`Dataset`. Every record
is normalized (``normalize.py``), validated (``models.py``) and hashed in its
canonical form; frozen files are additionally verified (``canonical.py``).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_ragproof.dataset.canonical import (
    FORMAT,
    canonical_json,
    dataset_hash,
    frozen_text,
    values_may_be_non_canonical,
)
from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.dataset.messages import SCHEMA_HINT, field_error, unknown_field
from pytest_ragproof.dataset.models import SCHEMA_VERSION, Case
from pytest_ragproof.dataset.normalize import (
    DEFAULTS,
    DEFAULTS_V1,
    FIELDS,
    STRING_LIST_FIELDS,
    TOO_LONG_INTEGER,
    RecordError,
    UnknownFieldError,
    normalize_record,
)
from pytest_ragproof.errors import DatasetError, FrozenDatasetModifiedError
from pytest_ragproof.fileio import paused_gc, write_atomic

__all__ = ["Dataset", "DatasetFieldMap", "load_dataset", "paused_gc"]


@dataclass(frozen=True)
class Dataset:
    """Validated cases plus what identifies them.

    ``sha256`` is the dataset hash of the cases as loaded (for a current-version
    frozen file, the hash stored in it). ``frozen`` is true for verified frozen
    files. Rejected cases are left out (``n_rejected``).
    """

    cases: tuple[Case, ...]
    sha256: str
    frozen: bool
    source: str | None = None
    schema_version: int = SCHEMA_VERSION
    n_rejected: int = 0
    upgraded_from: int | None = None
    canonical_cases: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def n_pending(self) -> int:
        return sum(1 for case in self.cases if case.review_status == "pending")

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}


@dataclass(slots=True)
class _Raw:
    record: int
    line: int | None


def _fail(
    source: str, raw: _Raw | None, reason: str, *, hint: str | None, exc_type: str | None
) -> DatasetError:
    return DatasetError(
        reason,
        source=source,
        record=None if raw is None else raw.record,
        line=None if raw is None else raw.line,
        exc_type=exc_type,
        hint=hint,
    )


_CASES = TypeAdapter(list[Case])


def _invalid(source: str, raw: _Raw, error: Any, record: Any) -> DatasetError:
    """A record's first pydantic error (``ErrorDetails``, loc[0] its index), value-free."""
    inner = {"loc": error["loc"][1:], "type": error["type"], "msg": error["msg"]}
    reason, hint = field_error(inner, record, STRING_LIST_FIELDS)
    return _fail(source, raw, reason, hint=hint, exc_type=f"ValidationError:{error['type']}")


def _duplicates(ids: Sequence[Any]) -> Iterator[tuple[int, int]]:
    """(position, position of its first occurrence) for each repeated string id."""
    seen: dict[str, int] = {}
    for i, key in enumerate(ids):
        if isinstance(key, str):
            first = seen.setdefault(key, i)
            if first != i:
                yield i, first


def _duplicate(first_record: int, both_implicit: bool) -> tuple[str, str]:
    """Reason and fix for a record whose id an earlier record already has."""
    if both_implicit:
        return (
            f"has no id and the same content as record {first_record}",
            "remove the duplicate or give both records an explicit id",
        )
    return f"has the same id as record {first_record}", "ids must be unique; rename one of them"


class _Builder:
    """Collects canonical records, then validates them in one batch.

    One pydantic call for the whole list is cheaper than one per record; errors
    are mapped back to their record, and the earliest problem (invalid record or
    duplicate id) is the one reported. Only the line of each record is kept
    beside its canonical dict (record numbers are positions), so the raw values
    are freed as soon as they are normalized.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: list[int | None] = []
        self.canons: list[dict[str, Any]] = []
        self.implicit: list[bool] = []
        self.texts: list[str] | None = None  # canonical texts, when already known
        self.cases: list[Case] = []
        self.jsons: list[str] = []
        self.n_rejected = 0
        self.validated = False

    def add(self, line: int | None, canon: dict[str, Any], implicit_id: bool) -> None:
        self.lines.append(line)
        self.canons.append(canon)
        self.implicit.append(implicit_id)

    def raw(self, index: int) -> _Raw:
        """Position of the record at ``index`` (0-based), for error messages."""
        return _Raw(index + 1, self.lines[index])

    def _first_duplicate(self) -> tuple[int, str, str] | None:
        ids = [canon.get("id") for canon in self.canons]
        with contextlib.suppress(TypeError):  # an unhashable id: look record by record
            if len(set(ids)) == len(ids):
                return None
        for i, first in _duplicates(ids):
            return i, *_duplicate(first + 1, self.implicit[i] and self.implicit[first])
        return None

    def _encode(self) -> list[str]:
        encode = canonical_json
        try:
            return [encode(canon) for canon in self.canons]
        except ValueError:
            pass
        for i, canon in enumerate(self.canons):  # which record, for the message
            try:
                encode(canon)
            except ValueError:
                reason, hint = TOO_LONG_INTEGER
                raise _fail(
                    self.source, self.raw(i), reason, hint=hint, exc_type="ValueError"
                ) from None
        raise AssertionError("unreachable: a record failed to encode, then none did")

    def validate(self) -> None:
        if self.validated:
            return
        self.validated = True
        try:
            cases = _CASES.validate_python(self.canons)
        except ValidationError as exc:
            duplicate = self._first_duplicate()
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            index = min(int(e["loc"][0]) for e in errors)
            if duplicate is None or index < duplicate[0]:
                first = next(e for e in errors if e["loc"][0] == index)
                raise _invalid(self.source, self.raw(index), first, self.canons[index]) from None
        else:
            duplicate = self._first_duplicate()
        if duplicate is not None:
            index, reason, hint = duplicate
            raise _fail(self.source, self.raw(index), reason, hint=hint, exc_type="DuplicateId")
        texts = self.texts
        if texts is None:
            texts = self._encode()
        if any(case.review_status == "rejected" for case in cases):
            keep = [i for i, case in enumerate(cases) if case.review_status != "rejected"]
            self.n_rejected = len(cases) - len(keep)
            self.cases = [cases[i] for i in keep]
            self.jsons = [texts[i] for i in keep]
        else:
            self.cases = cases
            self.jsons = texts


def _decode(path: Path) -> str:
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


def _bad_number(exc: ValueError) -> tuple[str, str]:
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


def _loads(text: str) -> Any:
    return _DECODER.decode(text)


# Records travel as (line, value) pairs; their number is their position.
_Pair = tuple[int | None, Any]


_BAD = object()  # stands for a record that could not be read, when errors are collected


def _iter_jsonl(
    source: str, text: str, errors: list[DatasetError] | None = None
) -> Iterator[_Pair]:
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
            reason, hint = _bad_number(exc)
            error = DatasetError(
                reason, source=source, record=record, line=lineno, exc_type="ValueError", hint=hint
            )
        except RecursionError:
            error = _too_deep(source, record, lineno)
        else:
            yield lineno, value
            continue
        if errors is None:
            raise error
        errors.append(error)
        yield lineno, _BAD


def _too_deep(source: str, record: int | None = None, line: int | None = None) -> DatasetError:
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


def _iter_json_array(source: str, text: str, values: list[Any]) -> Iterator[_Pair]:
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
) -> Iterator[_Pair]:
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


_FROZEN_PREFIX = '{"format":"ragproof.dataset/'


def _sniff(path: Path, text: str) -> tuple[str, Any]:
    """The kind of a dataset file, and the parsed document when sniffing parsed it."""
    if path.suffix.lower() == ".csv":
        return "csv", None
    head = text.lstrip()
    if head.startswith("["):
        return "array", None
    if head.startswith(_FROZEN_PREFIX):
        return "frozen", None  # parsed once, by the frozen loader (which reports damage)
    if head.startswith("{"):
        try:
            value = _loads(text)  # a JSONL file fails fast, after its first line
        except (ValueError, RecursionError):
            return "jsonl", None
        if isinstance(value, dict) and ("format" in value or "cases" in value):
            return "frozen", value
    return "jsonl", None


def _records(
    source: str,
    text: str,
    kind: str,
    field_map: DatasetFieldMap | None,
    errors: list[DatasetError] | None = None,
) -> Iterator[_Pair]:
    """The (line, value) pairs of a JSONL, JSON array or CSV text (see ``_iter_jsonl``)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if kind == "csv":
        return _iter_csv(source, text, field_map, errors)
    if kind == "jsonl":
        return _iter_jsonl(source, text, errors)
    try:
        values = _loads(text)
    except json.JSONDecodeError as exc:
        _json_error(source, text, exc, None)
    except ValueError as exc:
        reason, hint = _bad_number(exc)
        raise DatasetError(reason, source=source, exc_type="ValueError", hint=hint) from None
    except RecursionError:
        raise _too_deep(source) from None
    return _iter_json_array(source, text, values)


def _build(
    source: str,
    pairs: Iterable[_Pair],
    field_map: DatasetFieldMap | None,
    *,
    from_csv: bool = False,
) -> Dataset:
    builder = _Builder(source)
    lines = builder.lines
    for line, value in pairs:
        canon, implicit_id = _canonical(source, len(lines) + 1, line, value, field_map, from_csv)
        builder.add(line, canon, implicit_id)
    return _finish(source, builder, frozen=False)


def _canonical(
    source: str,
    record: int,
    line: int | None,
    value: Any,
    field_map: DatasetFieldMap | None,
    from_csv: bool,
) -> tuple[dict[str, Any], bool]:
    """A record's canonical dict and whether its id is implicit, or its DatasetError."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise _fail(
            source,
            _Raw(record, line),
            f"is a JSON {type(value).__name__}, not an object",
            hint="each record must be a JSON object of case fields",
            exc_type="TypeError",
        )
    try:
        if field_map is not None:
            value = field_map.apply(value, from_csv=from_csv)
        return normalize_record(value), value.get("id") is None
    except RecordError as exc:
        reason, hint = exc.reason, exc.hint or SCHEMA_HINT
        if from_csv and isinstance(exc, UnknownFieldError):
            reason, hint = unknown_field(exc.field, FIELDS, csv=True)
        raise _fail(source, _Raw(record, line), reason, hint=hint, exc_type=exc.exc_type) from None


def _finish(
    source: str,
    builder: _Builder,
    *,
    frozen: bool,
    sha256: str | None = None,
    upgraded_from: int | None = None,
) -> Dataset:
    builder.validate()
    if not builder.cases:
        raise DatasetError(
            "holds no cases" + (" that are not rejected" if builder.n_rejected else ""),
            source=source,
            hint="add at least one case",
        )
    jsons = tuple(builder.jsons)
    return Dataset(
        cases=tuple(builder.cases),
        sha256=sha256 or dataset_hash(jsons),
        frozen=frozen,
        source=source,
        n_rejected=builder.n_rejected,
        upgraded_from=upgraded_from,
        canonical_cases=jsons,
    )


def _looks_compact(case: dict[str, Any], fields: frozenset[str]) -> bool:
    """No unknown key and no field written out at its default (C-level checks only)."""
    if not case.keys() <= fields:
        return False
    values = case.values()
    # Defaults are None, [], {}, "simple" and False; none may be written out.
    if None in values or [] in values or {} in values:
        return False
    if case.get("question_type") == "simple" or case.get("synthetic") is False:
        return False
    prov = case.get("provenance")
    return not (isinstance(prov, dict) and None in prov.values())


# How a field at its default would read in the canonical text (false alarms only cost time).
_DEFAULT_MARKS = ('":null', '":[]', '":{}', '"question_type":"simple"', '"synthetic":false')


def _modified(source: str, reason: str, line: int | None = None) -> FrozenDatasetModifiedError:
    return FrozenDatasetModifiedError(
        f"{reason}: the file was modified after freezing",
        source=source,
        line=line,
        hint="restore it from version control, or re-freeze the reviewed source "
        "with 'ragproof freeze'",
    )


def _load_frozen(source: str, text: str, doc: Any = None) -> Dataset:
    if doc is None:
        try:
            doc = _loads(text)
        except json.JSONDecodeError as exc:
            raise _modified(source, f"invalid JSON ({exc.msg})", exc.lineno) from None
        except ValueError as exc:
            raise _modified(source, _bad_number(exc)[0]) from None
        except RecursionError:
            raise _modified(source, "holds values nested too deeply to parse") from None
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt != FORMAT:
        if isinstance(fmt, str) and fmt.startswith("ragproof.dataset/"):
            raise DatasetError(
                f"uses the frozen format '{fmt[:40]}', newer than this pytest-ragproof reads "
                f"('{FORMAT}')",
                source=source,
                hint="upgrade: pip install -U pytest-ragproof",
            )
        raise _modified(source, "has no valid 'format' field")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _modified(source, "has no valid 'schema_version'")
    if version > SCHEMA_VERSION:
        raise DatasetError(
            f"has schema_version {version}; this pytest-ragproof reads versions up to "
            f"{SCHEMA_VERSION}",
            source=source,
            hint=f"install a pytest-ragproof release that supports schema_version {version}: "
            "pip install -U pytest-ragproof",
        )
    stored = doc.get("sha256")
    cases = doc.get("cases")
    if set(doc) != {"format", "schema_version", "sha256", "cases"}:
        raise _modified(source, "has fields other than format, schema_version, sha256, cases")
    if not isinstance(stored, str) or not isinstance(cases, list):
        raise _modified(source, "has no valid 'sha256' or 'cases'")
    fields = frozenset(DEFAULTS if version >= SCHEMA_VERSION else DEFAULTS_V1)
    jsons: list[str] = []
    for i, case in enumerate(cases, start=1):
        if not isinstance(case, dict):
            raise _modified(source, f"record {i} is not an object", i + 1)
        try:
            jsons.append(canonical_json(case))
        except ValueError:  # a number beyond float range, e.g. 1e999, parses as infinity
            raise _modified(source, f"record {i} holds a non-finite number", i + 1) from None
    expected = frozen_text(jsons, version, stored)
    normalized_text = text.replace("\r\n", "\n")  # tolerate git's line-ending conversion
    if expected != normalized_text:
        pos = next(
            (i for i, (a, b) in enumerate(zip(expected, normalized_text, strict=False)) if a != b),
            min(len(expected), len(normalized_text)),
        )
        line = normalized_text.count("\n", 0, pos) + 1
        raise _modified(source, "differs from the canonical frozen layout", line)
    if dataset_hash(jsons) != stored:
        raise _modified(source, "its cases do not match the stored sha256")
    # Values must already be normalized and compact. A whole-text screen and a key
    # screen clear the common case cheaply; anything suspect is checked record by
    # record, exactly.
    if any(mark in normalized_text for mark in _DEFAULT_MARKS):
        compact = all(_looks_compact(case, fields) for case in cases)
    else:  # no value anywhere is null, [], {}, "simple" or false: keys are all to check
        compact = all(case.keys() <= fields for case in cases)
    exact = not compact or values_may_be_non_canonical(normalized_text)
    canons: list[dict[str, Any]] = cases
    if exact:
        canons = []
        for i, case in enumerate(cases, start=1):
            try:
                canon = normalize_record(case, schema_version=version)
            except RecordError as exc:
                raise _fail(
                    source, _Raw(i, i + 1), exc.reason, hint=exc.hint, exc_type=exc.exc_type
                ) from None
            if canon != case:
                raise _modified(source, f"record {i} is not in canonical form", i + 1)
            canons.append(canon)
    builder = _Builder(source)
    upgraded = version < SCHEMA_VERSION
    if upgraded:
        for i, canon in enumerate(canons, start=1):
            try:
                canon = normalize_record(canon)
            except RecordError as exc:
                raw = _Raw(i, i + 1)
                raise _fail(source, raw, exc.reason, hint=exc.hint, exc_type=exc.exc_type) from None
            builder.add(i + 1, canon, implicit_id=False)
    else:
        builder.lines = list(range(2, len(canons) + 2))
        builder.canons = canons
        builder.implicit = [False] * len(canons)
        builder.texts = jsons
    builder.validate()
    if builder.n_rejected:
        raise _modified(source, "holds rejected cases, which freezing leaves out")
    return _finish(
        source,
        builder,
        frozen=True,
        sha256=None if upgraded else stored,
        upgraded_from=version if upgraded else None,
    )


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


def _load(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    field_map: DatasetFieldMap | None = None,
) -> Dataset:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        name = str(source)
        text = _decode(path)
        kind, doc = _sniff(path, text)
        if kind == "frozen":
            return _load_frozen(name, text, doc)
        pairs = _records(name, text, kind, field_map)
        return _build(name, pairs, field_map, from_csv=kind == "csv")
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
    return _build("<python>", ((None, value) for value in iterator), field_map)


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
            text = _decode(path)
            kind, _ = _sniff(path, text)
            if kind == "frozen":
                return [failure]
            pairs = _records(name, text, kind, field_map, errors)
            _collect(name, pairs, field_map, from_csv=kind == "csv", errors=errors)
    except (DatasetError, ValueError, RecursionError):
        return [failure]
    errors.sort(key=lambda e: e.record or 0)
    return errors or [failure]


def _collect(
    source: str,
    pairs: Iterable[_Pair],
    field_map: DatasetFieldMap | None,
    *,
    from_csv: bool,
    errors: list[DatasetError],
) -> None:
    """Like ``_build``, but notes each bad record in ``errors`` and goes on."""
    canons: list[dict[str, Any]] = []
    where: list[_Raw] = []
    implicit: list[bool] = []
    for index, (line, value) in enumerate(pairs):
        if value is _BAD:
            continue
        try:
            canon, implicit_id = _canonical(source, index + 1, line, value, field_map, from_csv)
        except DatasetError as exc:
            errors.append(exc)
            continue
        canons.append(canon)
        where.append(_Raw(index + 1, line))
        implicit.append(implicit_id)
    try:
        _CASES.validate_python(canons)
    except ValidationError as exc:
        first_error: dict[int, Any] = {}
        for error in exc.errors(include_url=False, include_input=False, include_context=False):
            first_error.setdefault(int(error["loc"][0]), error)
        errors.extend(
            _invalid(source, where[i], error, canons[i]) for i, error in first_error.items()
        )
    for i, first in _duplicates([canon.get("id") for canon in canons]):
        reason, hint = _duplicate(where[first].record, implicit[i] and implicit[first])
        errors.append(_fail(source, where[i], reason, hint=hint, exc_type="DuplicateId"))


def case_record(case: Case) -> dict[str, Any]:
    """The case as its canonical record: fields at their default left out."""
    return normalize_record(case.model_dump(mode="json"))


def write_jsonl(cases: Iterable[Case], path: str | os.PathLike[str]) -> Path:
    """Write cases as a reviewable JSONL file (one compact record per line), atomically."""
    target = Path(path)
    lines = [canonical_json(case_record(case)) + "\n" for case in cases]
    write_atomic(target, "".join(lines))
    return target
