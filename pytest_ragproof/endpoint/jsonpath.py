"""The small JSON path subset of ``--ragproof-endpoint-answer`` and its siblings.

Grammar (docs/pipelines.md, "Testing a deployed endpoint")::

    path    := "$" step*
    step    := "." name | "[" integer "]" | "[" quoted "]"
    name    := one or more characters other than . [ ] ' " and whitespace
    quoted  := '...' or "..." (any key without that quote character)

``$`` is the response (for the context paths: one context item); ``[N]`` indexes
a list, ``[-1]`` is its last item. No wildcards, filters or recursion: a path
names one value. Parsed once when the run starts; :func:`lookup` reports a
missing step by its path, never by a value of the document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ragproof.errors import ConfigError

_STEP = re.compile(
    r"""\.(?P<name>[^.\[\]'"\s]+)"""
    r"""|\[(?P<index>-?\d+)\]"""
    r"""|\[(?P<q>['"])(?P<key>.*?)(?P=q)\]"""
)
Step = str | int


@dataclass(frozen=True)
class JsonPath:
    """A parsed path: its text as the user wrote it and its steps (keys and indexes)."""

    text: str
    steps: tuple[Step, ...]


class PathMissing(Exception):
    """A step of a path found nothing; ``reason`` names the step, not the document's values."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def parse(text: str, option: str) -> JsonPath:
    """Parse ``text``; a ConfigError naming ``option`` and the supported forms otherwise."""
    stripped = text.strip()
    if not stripped.startswith("$"):
        raise ConfigError(
            f"{option} '{stripped}' is not a JSON path: it must start with $, "
            f"e.g. {option} '$.{stripped or 'answer'}'"
        )
    steps: list[Step] = []
    pos = 1
    while pos < len(stripped):
        match = _STEP.match(stripped, pos)
        if match is None:
            raise ConfigError(
                f"{option} '{stripped}': cannot read the path at character {pos + 1}; "
                "supported steps are .name, [0] (list index, [-1] the last) and ['key'], "
                "e.g. $.data.answer, $.choices[0].text, $['source documents']"
            )
        if match.group("name") is not None:
            steps.append(match.group("name"))
        elif match.group("index") is not None:
            steps.append(int(match.group("index")))
        else:
            steps.append(match.group("key"))
        pos = match.end()
    return JsonPath(stripped, tuple(steps))


def _shown(steps: Sequence[Step]) -> str:
    out = "$"
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif re.fullmatch(r"""[^.\[\]'"\s]+""", step):
            out += f".{step}"
        else:
            out += f"['{step}']"
    return out


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def lookup(document: object, path: JsonPath) -> object:
    """The value ``path`` names in ``document``; :class:`PathMissing` when a step finds nothing."""
    value = document
    for i, step in enumerate(path.steps):
        here = _shown(path.steps[:i])
        if isinstance(step, int):
            if not isinstance(value, list):
                raise PathMissing(f"{here} is {json_type(value)}, not a list")
            if not -len(value) <= step < len(value):
                raise PathMissing(f"{here} has {len(value)} item(s), no [{step}]")
            value = value[step]
        else:
            if not isinstance(value, Mapping):
                raise PathMissing(f"{here} is {json_type(value)}, not an object")
            if step not in value:
                raise PathMissing(f"{here} has no key '{step}'")
            value = value[step]
    return value
