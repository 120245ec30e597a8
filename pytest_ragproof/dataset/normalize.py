"""Record normalization: raw mapping -> canonical case dict.

The canonical dict of a case holds every schema field that is not at its default
value (derived ids and canaries written out), all strings normalized (LF, NFC,
outer whitespace stripped) and JSON containers as plain lists and dicts. It is
what gets hashed and written into frozen files, and a frozen file is accepted
only if re-normalizing its cases changes nothing.

Errors raised here are :class:`RecordError` with value-free reasons; the loader
adds source, record and line. Strings and JSON values are checked in ``values.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from pytest_ragproof.dataset.messages import json_type, list_expected, unknown_field
from pytest_ragproof.dataset.values import MAX_DEPTH as MAX_DEPTH
from pytest_ragproof.dataset.values import SURROGATE_HINT, printable_name
from pytest_ragproof.dataset.values import TOO_LONG_INTEGER as TOO_LONG_INTEGER
from pytest_ragproof.dataset.values import RecordError as RecordError
from pytest_ragproof.dataset.values import flat_object as _flat_object
from pytest_ragproof.dataset.values import is_clean as _clean
from pytest_ragproof.dataset.values import json_value as _json_value
from pytest_ragproof.dataset.values import normalize_string as _string
from pytest_ragproof.textnorm import describe_char

ID_DOMAIN = b"ragproof.case-id/1\x00"

# Field -> default of the canonical form (schema version 2).
DEFAULTS: dict[str, Any] = {
    "id": None,
    "kind": None,
    "question": None,
    "expected_answer": None,
    "expected_source_ids": [],
    "reference_contexts": [],
    "adversarial_payload": None,
    "canary": None,
    "question_type": "simple",
    "conversation_history": [],
    "tags": [],
    "metadata": {},
    "split": None,
    "synthetic": False,
    "provenance": None,
    "review_status": None,
}
FIELDS = frozenset(DEFAULTS)

# The original RAGProof layout (schema version 1, seed 000).
DEFAULTS_V1: dict[str, Any] = {
    "id": None,
    "kind": None,
    "question": None,
    "expected_answer": None,
    "expected_source_ids": [],
    "adversarial_payload": None,
    "tags": [],
    "metadata": {},
}

_STRING_FIELDS = frozenset(
    {"id", "kind", "question", "expected_answer", "adversarial_payload", "canary"}
    | {"question_type", "split", "review_status"}
)
STRING_LIST_FIELDS = frozenset({"expected_source_ids", "reference_contexts", "tags"})
# Fields that do not identify a case's content: a derived id must not change when
# a case is reviewed or assigned to a split.
_NOT_IN_DERIVED_ID = frozenset({"id", "split", "review_status"})

_UNKNOWN = object()
_CANARY_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")


class UnknownFieldError(RecordError):
    """A record key that is not a case field (worded for JSON; the loader rewords CSV)."""

    def __init__(self, name: str) -> None:
        name = printable_name(name)
        reason, hint = unknown_field(name, FIELDS, csv=False)
        super().__init__(reason, hint=hint)
        self.field = name


def _string_list(value: Any, field: str, printable_ascii: bool = False) -> Any:
    if type(value) is list:
        for item in value:
            if type(item) is not str or not (
                item.strip() is item
                and (printable_ascii or (item.isascii() and item.isprintable()))
            ):
                break
        else:
            return list(value)
    if isinstance(value, list | tuple):
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise RecordError(
                    f"field '{field}[{i}]': expected a string, got {json_type(item)}",
                    hint=f"make every entry of '{field}' a string",
                )
            out.append(_string(item, f"{field}[{i}]"))
        return out
    reason, hint = list_expected(field, value)
    raise RecordError(reason, hint=hint)


def _history(value: Any) -> Any:
    if isinstance(value, list | tuple):
        out: list[Any] = []
        for i, turn in enumerate(value):
            if isinstance(turn, Mapping):
                turn = dict(turn)
                if "content" in turn:
                    turn["content"] = _string(turn["content"], f"conversation_history[{i}].content")
                if "role" in turn:
                    turn["role"] = _string(turn["role"], f"conversation_history[{i}].role")
            out.append(turn)
        return out
    return value


def _provenance(value: Any) -> Any:
    if isinstance(value, Mapping):
        normalized = _json_value(value, "provenance")
        return {k: v for k, v in normalized.items() if v is not None}
    return value


_NORMALIZERS: dict[str, Callable[[Any], Any]] = {
    "conversation_history": _history,
    "provenance": _provenance,
}


def derive_canary(payload: str) -> str | None:
    """The documented canary rule: the longest code-like token of the payload.

    A token is a run of ASCII letters, digits, ``-`` and ``_`` that starts and ends
    with a letter or digit, is at least 6 characters long and holds a digit or a
    dash. The longest wins; among equally long ones, the first. None if none.
    """
    best: str | None = None
    for match in _CANARY_TOKEN.finditer(payload):
        token = match.group()
        if len(token) < 6 or not (("-" in token) or any(c.isdigit() for c in token)):
            continue
        if best is None or len(token) > len(best):
            best = token
    return best


def derive_id(canonical: Mapping[str, Any]) -> str:
    """Domain-separated content hash for records without an id."""
    content = {k: v for k, v in canonical.items() if k not in _NOT_IN_DERIVED_ID}
    try:
        blob = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except ValueError:  # values were checked, only an integer of over 4300 digits is left
        reason, hint = TOO_LONG_INTEGER
        raise RecordError(reason, hint=hint, exc_type="ValueError") from None
    try:
        data = blob.encode("utf-8")
    except UnicodeEncodeError as exc:  # a surrogate in a field of the wrong type
        raise RecordError(
            f"holds the lone surrogate {describe_char(blob[exc.start])}, which is not Unicode text",
            hint=SURROGATE_HINT,
            exc_type="UnicodeEncodeError",
        ) from None
    return "case-" + hashlib.sha256(ID_DOMAIN + data).hexdigest()[:16]


_BAD_ID = re.compile(r"\s|::|\[")


def _check_id(case_id: Any, printable_ascii: bool = False) -> None:
    if type(case_id) is str and (printable_ascii or _clean(case_id)):
        # Printable ASCII: the only whitespace left is the space.
        bad = " " in case_id or "::" in case_id or "[" in case_id
    else:
        bad = isinstance(case_id, str) and _BAD_ID.search(case_id) is not None
    if bad:
        raise RecordError(
            "id contains whitespace, '::' or '['",
            hint="use ids made of letters, digits, '-', '_', '.' or '/'",
        )


_STR, _LIST, _META, _OTHER = range(4)


def _field_specs(defaults: Mapping[str, Any]) -> dict[str, tuple[int, Any]]:
    """Field -> (how to normalize it, its default), one lookup per key in the hot loop."""
    specs: dict[str, tuple[int, Any]] = {}
    for key, default in defaults.items():
        if key in _STRING_FIELDS:
            kind = _STR
        elif key in STRING_LIST_FIELDS:
            kind = _LIST
        elif key == "metadata":
            kind = _META
        else:
            kind = _OTHER
        specs[key] = (kind, default)
    return specs


_SPECS = _field_specs(DEFAULTS)
_SPECS_V1 = _field_specs(DEFAULTS_V1)
_NOT_EMPTY = ("question", "expected_answer", "adversarial_payload", "canary", "id")


def normalize_record(
    raw: Mapping[str, Any], *, schema_version: int = 2, printable_ascii: bool = False
) -> dict[str, Any]:
    """Return the canonical dict of one record (see module docstring).

    Fields at their default value are left out (the model fills them in), so the
    same case written with or without explicit defaults has one canonical form.
    This loop runs once per record of every dataset: the common cases (clean
    ASCII strings, flat metadata) are checked inline. ``printable_ascii``: the
    caller knows every string in ``raw`` (keys too) is printable ASCII (see
    ``readers.printable_ascii``), so only outer whitespace is left to check.
    """
    specs = _SPECS if schema_version >= 2 else _SPECS_V1
    out: dict[str, Any] = {}
    empty = False
    for key, value in raw.items():
        spec = specs.get(key) if type(key) is str else None
        if spec is None:
            raise UnknownFieldError(key if isinstance(key, str) else type(key).__name__)
        kind, default = spec
        if kind == _STR:
            # Printable ASCII without outer whitespace is already canonical; strip()
            # returns the same object when there is nothing to strip.
            if (
                type(value) is str
                and value.strip() is value
                and (printable_ascii or (value.isascii() and value.isprintable()))
            ):
                if not value:
                    empty = True  # kept, so that the check below names the field
                if default is None or value != default:
                    out[key] = value
                continue
            value = _string(value, key)
            if value == "":
                empty = True
            # Defaults of string fields are None or a string ("simple").
            if value is not None and (default is None or value != default):
                out[key] = value
            continue
        if kind == _LIST:
            value = _string_list(value, key, printable_ascii)
            if not (type(value) is list and not value):
                out[key] = value
            continue
        if kind == _META:
            flat = _flat_object(value, printable_ascii) if type(value) is dict else None
            if flat is not None:
                value = flat
            elif isinstance(value, Mapping):
                value = _json_value(value, "metadata")
        else:
            fn = _NORMALIZERS.get(key)
            if fn is not None:
                value = fn(value)
        # Leave out defaults, type-aware: 0 is not the default False and must reach
        # validation.
        if default is None:
            if value is not None:
                out[key] = value
        elif not (
            (type(value) is type(default) or (type(default) is dict and isinstance(value, dict)))
            and value == default
        ):
            out[key] = value
    if empty:
        if out.get("question") == "":
            raise RecordError("question is empty after normalization", hint="write a question")
        for key in _NOT_EMPTY[1:]:
            if out.get(key) == "":
                raise RecordError(f"{key} is empty", hint=f"give {key} a value or leave it out")
    if schema_version >= 2 and out.get("kind") == "injection" and out.get("canary") is None:
        payload = out.get("adversarial_payload")
        if isinstance(payload, str):
            canary = derive_canary(payload)
            if canary is not None:
                out["canary"] = canary
    case_id = out.get("id")
    if case_id is None:
        case_id = out["id"] = derive_id(out)
    _check_id(case_id, printable_ascii)
    return out
