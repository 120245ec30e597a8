"""Turning a model's text into a validated pydantic object, tolerantly.

Models wrap JSON in prose or Markdown fences, or stop mid-object. We accept the
first usable JSON value (whole text, then a fenced block, then the outermost
``{...}`` / ``[...]``) and validate it. A failure is described by a short summary
-- JSON error position or pydantic locations and messages, never the rejected
values -- which is what the repair request sends back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_ERRORS = 5


class OutputParseError(ValueError):
    """The text held no valid instance of the schema; ``summary`` says why."""

    def __init__(self, summary: str) -> None:
        self.summary = summary
        super().__init__(summary)


def extract_json(text: str | None) -> Any:
    """The first JSON value found in ``text`` (see module docstring)."""
    if text is None or not text.strip():
        raise OutputParseError("the reply was empty")
    stripped = text.strip()
    candidates = [stripped]
    candidates.extend(m.group(1).strip() for m in _FENCE.finditer(stripped))
    outer = _outermost(stripped)
    if outer is not None:
        candidates.append(outer)
    last_error: json.JSONDecodeError | None = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            last_error = exc
    if last_error is None or outer is None:
        raise OutputParseError("no JSON object or array was found in the reply")
    # JSONDecodeError.msg carries only the error kind; position is line/column.
    raise OutputParseError(
        f"the reply is not valid JSON ({last_error.msg} at line {last_error.lineno} "
        f"column {last_error.colno}); it may be truncated"
    )


def _outermost(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    closer = "}" if text[start] == "{" else "]"
    end = text.rfind(closer)
    if end <= start:
        # An opening brace with no closer at all: truncated output.
        return text[start:]
    return text[start : end + 1]


def parse_structured(text: str | None, schema: type[T]) -> T:
    """Validate ``text`` against ``schema`` or raise :class:`OutputParseError`."""
    value = extract_json(text)
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        raise OutputParseError(summarize_validation_error(exc)) from None


def summarize_validation_error(exc: ValidationError) -> str:
    """Locations and messages of the first errors, without the offending inputs."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False)[
        :_MAX_ERRORS
    ]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - _MAX_ERRORS
    if more > 0:
        parts.append(f"and {more} more error(s)")
    return "the JSON does not match the schema: " + "; ".join(parts)
