"""Record building: raw values -> canonical records -> validated cases -> a Dataset.

A :class:`Builder` normalizes each record (``normalize.py``), then validates them
all in one pydantic batch (``models.py``) and checks ids for duplicates. It stops at
the first problem, or, given an ``errors`` list, notes every bad record there and
goes on (what ``ragproof validate`` lists). Errors name source, record and line and
never hold a value.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_ragproof.dataset.canonical import canonical_json, dataset_hash
from pytest_ragproof.dataset.fieldmap import DatasetFieldMap
from pytest_ragproof.dataset.messages import SCHEMA_HINT, field_error, unknown_field
from pytest_ragproof.dataset.models import SCHEMA_VERSION, Case
from pytest_ragproof.dataset.normalize import (
    FIELDS,
    STRING_LIST_FIELDS,
    TOO_LONG_INTEGER,
    RecordError,
    UnknownFieldError,
    normalize_record,
)
from pytest_ragproof.dataset.readers import BAD, Pair
from pytest_ragproof.dataset.sharing import share_repeated_values
from pytest_ragproof.errors import DatasetError


@dataclass(frozen=True)
class Dataset:
    """Validated cases plus what identifies them.

    ``sha256`` is the dataset hash of the cases as loaded (for a current-version
    frozen file, the hash stored in it). ``frozen`` is true for verified frozen
    files; ``frozen_format`` is then the file's format (``ragproof.dataset/1`` or
    ``/2``). Rejected cases are left out (``n_rejected``).
    """

    cases: tuple[Case, ...]
    sha256: str
    frozen: bool
    source: str | None = None
    schema_version: int = SCHEMA_VERSION
    n_rejected: int = 0
    upgraded_from: int | None = None
    canonical_cases: tuple[str, ...] = field(default=(), repr=False, compare=False)
    frozen_format: str | None = None

    @property
    def n_pending(self) -> int:
        return sum(1 for case in self.cases if case.review_status == "pending")

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}

    def to_pandas(self) -> Any:
        """The cases as a pandas DataFrame, one row per case, one column per schema field.

        Needs pandas (``pip install pandas``); raises a ``MissingExtraError`` naming it.
        """
        from pytest_ragproof.dataset.frames import cases_frame

        return cases_frame(
            (case.model_dump(mode="json") for case in self.cases), list(Case.model_fields)
        )


@dataclass(slots=True)
class Where:
    """Position of a record: its 1-based number and, where known, its line."""

    record: int
    line: int | None


def fail(
    source: str, where: Where | None, reason: str, *, hint: str | None, exc_type: str | None
) -> DatasetError:
    return DatasetError(
        reason,
        source=source,
        record=None if where is None else where.record,
        line=None if where is None else where.line,
        exc_type=exc_type,
        hint=hint,
    )


_CASES = TypeAdapter(list[Case])


def _invalid(source: str, where: Where, error: Any, record: Any) -> DatasetError:
    """A record's first pydantic error (``ErrorDetails``, loc[0] its index), value-free."""
    inner = {"loc": error["loc"][1:], "type": error["type"], "msg": error["msg"]}
    reason, hint = field_error(inner, record, STRING_LIST_FIELDS)
    return fail(source, where, reason, hint=hint, exc_type=f"ValidationError:{error['type']}")


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


def canonical_record(
    source: str,
    record: int,
    line: int | None,
    value: Any,
    field_map: DatasetFieldMap | None,
    from_csv: bool,
    printable_ascii: bool = False,
) -> tuple[dict[str, Any], bool]:
    """A record's canonical dict and whether its id is implicit, or its DatasetError.

    ``printable_ascii``: every string in ``value`` is printable ASCII (``normalize_record``).
    """
    if type(value) is not dict and not isinstance(value, Mapping):
        raise fail(
            source,
            Where(record, line),
            f"is a JSON {type(value).__name__}, not an object",
            hint="each record must be a JSON object of case fields",
            exc_type="TypeError",
        )
    try:
        if field_map is not None:
            value = field_map.apply(value, from_csv=from_csv)
        return normalize_record(value, printable_ascii=printable_ascii), value.get("id") is None
    except RecordError as exc:
        reason, hint = exc.reason, exc.hint or SCHEMA_HINT
        if from_csv and isinstance(exc, UnknownFieldError):
            reason, hint = unknown_field(exc.field, FIELDS, csv=True)
        raise fail(source, Where(record, line), reason, hint=hint, exc_type=exc.exc_type) from None


class Builder:
    """Collects canonical records, then validates them in one batch.

    One pydantic call for the whole list is cheaper than one per record; errors
    are mapped back to their record, and the earliest problem (invalid record or
    duplicate id) is the one reported. Only the line of each record is kept
    beside its canonical dict (record numbers are positions), so the raw values
    are freed as soon as they are normalized.

    With ``errors``, every problem is appended there instead (records that fail
    are skipped, so their numbers are kept in ``numbers``); ``validate`` then
    builds no cases.
    """

    def __init__(
        self, source: str, errors: list[DatasetError] | None = None, *, share: bool = True
    ) -> None:
        self.source = source
        self.share = share  # share_repeated_values over the validated cases
        self.errors = errors
        self.lines: list[int | None] = []
        self.numbers: list[int] | None = None if errors is None else []
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

    def read(
        self,
        pairs: Iterable[Pair],
        field_map: DatasetFieldMap | None,
        *,
        from_csv: bool,
        printable_ascii: bool = False,
    ) -> None:
        """Normalize each (line, value) pair into a canonical record.

        ``printable_ascii``: every string of every value is printable ASCII
        (``readers.printable_ascii`` of the JSON text they were decoded from).
        """
        source = self.source
        errors = self.errors
        lines = self.lines
        if errors is None and field_map is None:
            self._read_plain(pairs, from_csv=from_csv, printable_ascii=printable_ascii)
            return
        for number, (line, value) in enumerate(pairs, start=1):
            if errors is not None:
                if value is BAD:  # the reader noted it already
                    continue
                try:
                    canon, implicit_id = canonical_record(
                        source, number, line, value, field_map, from_csv, printable_ascii
                    )
                except DatasetError as exc:
                    errors.append(exc)
                    continue
                assert self.numbers is not None
                self.numbers.append(number)
            else:
                canon, implicit_id = canonical_record(
                    source, len(lines) + 1, line, value, field_map, from_csv, printable_ascii
                )
            self.add(line, canon, implicit_id)

    def _read_plain(self, pairs: Iterable[Pair], *, from_csv: bool, printable_ascii: bool) -> None:
        """``read`` without a field map or errors list, the loop of every load: a record
        that is not a dict or fails goes through ``canonical_record`` (for its error)."""
        normalize, add_line, add_canon = normalize_record, self.lines.append, self.canons.append
        add_implicit = self.implicit.append
        for line, value in pairs:
            try:
                canon = (
                    normalize(value, printable_ascii=printable_ascii)
                    if type(value) is dict
                    else None
                )
            except RecordError:
                canon = None
            if canon is None:
                canon, _ = canonical_record(
                    self.source, len(self.lines) + 1, line, value, None, from_csv, printable_ascii
                )
            add_line(line)
            add_canon(canon)
            add_implicit(value.get("id") is None)

    def where(self, index: int) -> Where:
        """Position of the record at ``index`` (0-based), for error messages."""
        number = index + 1 if self.numbers is None else self.numbers[index]
        return Where(number, self.lines[index])

    def _first_duplicate(self) -> tuple[int, str, str] | None:
        ids = [canon.get("id") for canon in self.canons]
        with contextlib.suppress(TypeError):  # an unhashable id: look record by record
            if len(set(ids)) == len(ids):
                return None
        for i, first in _duplicates(ids):
            both = self.implicit[i] and self.implicit[first]
            return i, *_duplicate(self.where(first).record, both)
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
                raise fail(
                    self.source, self.where(i), reason, hint=hint, exc_type="ValueError"
                ) from None
        raise AssertionError("unreachable: a record failed to encode, then none did")

    def _note_all(self, errors: list[DatasetError]) -> None:
        """Collecting mode: every invalid record and every duplicate id, into ``errors``."""
        source = self.source
        try:
            _CASES.validate_python(self.canons)
        except ValidationError as exc:
            first_error: dict[int, Any] = {}
            for error in exc.errors(include_url=False, include_input=False, include_context=False):
                first_error.setdefault(int(error["loc"][0]), error)
            errors.extend(
                _invalid(source, self.where(i), error, self.canons[i])
                for i, error in first_error.items()
            )
        for i, first in _duplicates([canon.get("id") for canon in self.canons]):
            reason, hint = _duplicate(
                self.where(first).record, self.implicit[i] and self.implicit[first]
            )
            errors.append(fail(source, self.where(i), reason, hint=hint, exc_type="DuplicateId"))

    def validate(self) -> None:
        if self.validated:
            return
        self.validated = True
        if self.errors is not None:
            self._note_all(self.errors)
            return
        try:
            cases = _CASES.validate_python(self.canons)
        except ValidationError as exc:
            duplicate = self._first_duplicate()
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            index = min(int(e["loc"][0]) for e in errors)
            if duplicate is None or index < duplicate[0]:
                first = next(e for e in errors if e["loc"][0] == index)
                raise _invalid(self.source, self.where(index), first, self.canons[index]) from None
        else:
            duplicate = self._first_duplicate()
            if self.share:
                share_repeated_values(cases)
        if duplicate is not None:
            index, reason, hint = duplicate
            raise fail(self.source, self.where(index), reason, hint=hint, exc_type="DuplicateId")
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


def build(
    source: str,
    pairs: Iterable[Pair],
    field_map: DatasetFieldMap | None,
    *,
    from_csv: bool = False,
    printable_ascii: bool = False,
    share: bool = True,
) -> Dataset:
    """A Dataset of the records in ``pairs``; raises at the first problem."""
    builder = Builder(source, share=share)
    builder.read(pairs, field_map, from_csv=from_csv, printable_ascii=printable_ascii)
    return finish(source, builder, frozen=False)


def finish(
    source: str,
    builder: Builder,
    *,
    frozen: bool,
    sha256: str | None = None,
    upgraded_from: int | None = None,
    frozen_format: str | None = None,
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
        frozen_format=frozen_format,
    )
