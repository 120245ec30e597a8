"""Strings and JSON values inside a record: normalized, or a value-free :class:`RecordError`.

Strings are normalized (LF, NFC, outer whitespace stripped) and refused when they hold a
disallowed control character or a lone surrogate (a broken ``\\u`` escape, which no
UTF-8 file can hold); JSON values (metadata, provenance) are refused when they hold
what JSON cannot (non-finite numbers, non-string keys, other types) or nest too deeply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pytest_ragproof.dataset.frozendict import CheckedFrozenDict
from pytest_ragproof.textnorm import describe_char, find_disallowed_control, normalize_text

#: Reason and fix when canonical JSON cannot hold a number: only an integer of more
#: digits than Python converts to text (4300) gets past normalization.
TOO_LONG_INTEGER = (
    "holds a number JSON cannot hold (an integer of over 4300 digits)",
    "store it as a string",
)


class RecordError(ValueError):
    """A record is invalid. ``reason`` never contains record values."""

    def __init__(self, reason: str, *, hint: str | None = None, exc_type: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.hint = hint
        self.exc_type = exc_type


_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_HINT = (
    "a \\uD800-\\uDFFF escape must be half of a valid pair: write the character itself "
    "or its full pair"
)


def _surrogate(where: str, text: str, pos: int) -> RecordError:
    return RecordError(
        f"{where} contains the lone surrogate {describe_char(text[pos])} at character "
        f"{pos + 1}, which is not Unicode text",
        hint=SURROGATE_HINT,
        exc_type="UnicodeEncodeError",
    )


def _check_controls(text: str, where: str) -> None:
    pos = find_disallowed_control(text)
    if pos is not None:
        raise RecordError(
            f"{where} contains the disallowed control character {describe_char(text[pos])} "
            f"at character {pos + 1}",
            hint="remove the control character (tab and line feed are allowed)",
        )
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise _surrogate(where, text, bad.start())


def normalize_string(value: Any, where: str) -> Any:
    if type(value) is str:
        # Fast path: printable ASCII with no outer whitespace is already canonical
        # (no CR, no control characters, NFC trivially). strip() returns the same
        # object when there is nothing to strip.
        if value.strip() is value and value.isascii() and value.isprintable():
            return value
        text = normalize_text(value)
        _check_controls(text, where)
        return text
    if isinstance(value, str):
        text = normalize_text(str(value))
        _check_controls(text, where)
        return text
    return value  # type errors are reported by the model


def is_clean(value: str) -> bool:
    """True when a string is printable ASCII without outer whitespace (already canonical)."""
    return value.strip() is value and value.isascii() and value.isprintable()


MAX_DEPTH = 100
"""How deeply metadata and provenance may nest (deeper, or a value holding itself, is refused)."""


def _too_deep(where: str) -> RecordError:
    field = where.split(".", 1)[0].split("[", 1)[0]
    return RecordError(
        f"{field} is nested more than {MAX_DEPTH} levels deep (or contains itself)",
        hint="flatten it",
    )


def flat_object(value: dict[Any, Any], printable_ascii: bool = False) -> CheckedFrozenDict | None:
    """A flat JSON object of clean keys and scalar values, kept as it is; None otherwise.

    Clean: printable ASCII without outer whitespace (``printable_ascii``: the caller
    knows every string is printable ASCII, so only outer whitespace is checked).
    """
    for key, item in value.items():
        if type(key) is not str or not (
            key.strip() is key and (printable_ascii or (key.isascii() and key.isprintable()))
        ):
            return None
        t = type(item)
        if t is str:
            if not (
                item.strip() is item
                and (printable_ascii or (item.isascii() and item.isprintable()))
            ):
                return None
        elif not (t is int or t is bool or item is None or (t is float and item - item == 0)):
            return None
    return CheckedFrozenDict(value)


def json_value(value: Any, where: str, depth: int = 0) -> Any:
    """Normalize strings inside a JSON value and reject what JSON cannot hold."""
    kind = type(value)
    if kind is int or kind is bool or value is None:
        return value
    if kind is str:
        return value if is_clean(value) else normalize_string(value, where)
    if kind is dict:
        flat = flat_object(value)
        if flat is not None:
            return flat
    if isinstance(value, str):
        return normalize_string(value, where)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError(
                f"{where} holds a non-finite number", hint="use a finite number or a string"
            )
        return value
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        raise _too_deep(where)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError(f"{where} has a non-string key", hint="use string keys")
            nkey = normalize_string(key, f"a key of {where}")
            if nkey in out:
                raise RecordError(
                    f"{where} has two keys that are equal after normalization",
                    hint="rename one of them",
                )
            out[nkey] = json_value(item, f"{where}.{nkey[:40]}", depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [json_value(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise RecordError(
        f"{where} holds a {type(value).__name__}, which is not a JSON value",
        hint="use strings, numbers, booleans, null, arrays and objects only",
    )


def printable_name(name: str, limit: int = 60) -> str:
    """A field or key name as messages and reports show it: characters that are not
    printable (controls, line breaks, lone surrogates) as ``\\uXXXX``, cut to ``limit``."""
    if not name.isprintable():
        name = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name)
    return name if len(name) <= limit else name[: limit - 1] + "…"
