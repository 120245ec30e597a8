"""Frozen-file verification: a frozen file loads only exactly as it was frozen.

Format 2 files are checked against their per-case digests first, so a modified
file is refused with the ids of the cases that changed, were added, removed or
moved; then, in both formats, against the dataset hash, the byte-exact canonical
layout and the canonical form of every value (``canonical.py`` has the layout).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_ragproof.dataset.canonical import (
    FORMAT,
    FORMAT_V1,
    FORMATS,
    canonical_json,
    case_digests,
    dataset_hash,
    frozen_text,
    values_may_be_non_canonical,
)
from pytest_ragproof.dataset.changes import case_changes
from pytest_ragproof.dataset.models import SCHEMA_VERSION
from pytest_ragproof.dataset.normalize import DEFAULTS, DEFAULTS_V1, RecordError, normalize_record
from pytest_ragproof.dataset.readers import bad_number, loads
from pytest_ragproof.dataset.records import Builder, Dataset, Where, fail, finish
from pytest_ragproof.errors import DatasetError, FrozenDatasetModifiedError

_KEYS = {
    FORMAT_V1: frozenset({"format", "schema_version", "sha256", "cases"}),
    FORMAT: frozenset({"format", "schema_version", "sha256", "cases", "digests"}),
}


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


def modified(source: str, reason: str, line: int | None = None) -> FrozenDatasetModifiedError:
    return FrozenDatasetModifiedError(
        f"{reason}: the file was modified after freezing",
        source=source,
        line=line,
        hint="restore it from version control, or re-freeze the reviewed source "
        "with 'ragproof freeze'",
    )


def _case_name(case: Any) -> str:
    """`` (case '<id>')`` for messages, or empty when the record has no string id."""
    case_id = case.get("id") if isinstance(case, dict) else None
    if not isinstance(case_id, str):
        return ""
    shown = case_id[:60]
    if not shown.isprintable():
        shown = shown.encode("unicode_escape").decode("ascii")
    return f" (case '{shown}')"


def _header(source: str, doc: Any) -> tuple[str, int, str, list[Any]]:
    """Format, schema version, stored hash and cases of a parsed frozen file."""
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt not in FORMATS:
        if isinstance(fmt, str) and fmt.startswith("ragproof.dataset/"):
            raise DatasetError(
                f"uses the frozen format '{fmt[:40]}', newer than this pytest-ragproof reads "
                f"('{FORMAT}')",
                source=source,
                hint="upgrade: pip install -U pytest-ragproof",
            )
        raise modified(source, "has no valid 'format' field")
    assert isinstance(doc, dict) and isinstance(fmt, str)
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise modified(source, "has no valid 'schema_version'")
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
    if set(doc) != _KEYS[fmt]:
        raise modified(source, f"has fields other than {', '.join(sorted(_KEYS[fmt]))}")
    if not isinstance(stored, str) or not isinstance(cases, list):
        raise modified(source, "has no valid 'sha256' or 'cases'")
    return fmt, version, stored, cases


def _check_digests(
    source: str, doc: dict[str, Any], cases: list[Any], jsons: list[str], stored: str
) -> tuple[list[Any], list[str]]:
    """The cases' ids and digests, when they match the stored ones; else which cases changed."""
    entries = doc["digests"]
    if not isinstance(entries, list) or not all(
        type(e) is list and len(e) == 2 and type(e[1]) is str for e in entries
    ):
        raise modified(source, "has no valid 'digests'")
    digests = case_digests(jsons)
    ids = [case.get("id") for case in cases]
    # Two C-level list comparisons in the common case; the position only on a mismatch.
    if [e[1] for e in entries] == digests and [e[0] for e in entries] == ids:
        return ids, digests
    first_bad = next(
        (
            i
            for i, (entry, case_id, digest) in enumerate(zip(entries, ids, digests, strict=False))
            if entry[1] != digest or entry[0] != case_id
        ),
        min(len(entries), len(cases)),
    )
    if dataset_hash(jsons) == stored:  # the cases are as frozen: the digests were edited
        line = len(cases) + 3 + first_bad
        raise modified(source, "its 'digests' do not match its cases", line)
    changes = case_changes([(e[0], e[1]) for e in entries], list(zip(ids, digests, strict=True)))
    index = changes.first_index
    at = None if index is None or index >= len(cases) else index + 2
    raise modified(source, f"its cases differ from their digests ({changes.describe()})", at)


def load_frozen(source: str, text: str, doc: Any = None) -> Dataset:
    """Verify and load a frozen file's text (``doc``: its parsed JSON, if already parsed)."""
    if doc is None:
        try:
            doc = loads(text)
        except json.JSONDecodeError as exc:
            raise modified(source, f"invalid JSON ({exc.msg})", exc.lineno) from None
        except ValueError as exc:
            raise modified(source, bad_number(exc)[0]) from None
        except RecursionError:
            raise modified(source, "holds values nested too deeply to parse") from None
    fmt, version, stored, cases = _header(source, doc)
    fields = frozenset(DEFAULTS if version >= SCHEMA_VERSION else DEFAULTS_V1)
    jsons: list[str] = []
    for i, case in enumerate(cases, start=1):
        if not isinstance(case, dict):
            raise modified(source, f"record {i} is not an object", i + 1)
        try:
            jsons.append(canonical_json(case))
        except ValueError:  # a number beyond float range, e.g. 1e999, parses as infinity
            raise modified(
                source, f"record {i} holds a non-finite number{_case_name(case)}", i + 1
            ) from None
    if fmt == FORMAT:
        ids, digests = _check_digests(source, doc, cases, jsons, stored)
        expected = frozen_text(jsons, version, stored, ids, fmt=fmt, digests=digests)
    else:
        expected = frozen_text(jsons, version, stored, fmt=fmt)
    normalized_text = text.replace("\r\n", "\n")  # tolerate git's line-ending conversion
    if expected != normalized_text:
        pos = next(
            (i for i, (a, b) in enumerate(zip(expected, normalized_text, strict=False)) if a != b),
            min(len(expected), len(normalized_text)),
        )
        line = normalized_text.count("\n", 0, pos) + 1
        where = _case_name(cases[line - 2]) if 2 <= line <= len(cases) + 1 else ""
        raise modified(source, f"differs from the canonical frozen layout{where}", line)
    if dataset_hash(jsons) != stored:
        raise modified(source, "its cases do not match the stored sha256")
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
                raise fail(
                    source, Where(i, i + 1), exc.reason, hint=exc.hint, exc_type=exc.exc_type
                ) from None
            if canon != case:
                raise modified(
                    source, f"record {i} is not in canonical form{_case_name(case)}", i + 1
                )
            canons.append(canon)
    builder = Builder(source)
    upgraded = version < SCHEMA_VERSION
    if upgraded:
        for i, canon in enumerate(canons, start=1):
            try:
                canon = normalize_record(canon)
            except RecordError as exc:
                raise fail(
                    source, Where(i, i + 1), exc.reason, hint=exc.hint, exc_type=exc.exc_type
                ) from None
            builder.add(i + 1, canon, implicit_id=False)
    else:
        builder.lines = list(range(2, len(canons) + 2))
        builder.canons = canons
        builder.implicit = [False] * len(canons)
        builder.texts = jsons
    builder.validate()
    if builder.n_rejected:
        raise modified(source, "holds rejected cases, which freezing leaves out")
    return finish(
        source,
        builder,
        frozen=True,
        sha256=None if upgraded else stored,
        upgraded_from=version if upgraded else None,
        frozen_format=fmt,
    )
