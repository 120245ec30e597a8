"""Record errors in the words of the file the user wrote.

A dataset is JSON (or CSV mapped onto JSON fields), so errors speak of JSON
types (string, number, array, object, true/false, null), name the field as it is
spelled in the file, suggest the closest known field for a misspelt one, and refer
to documentation by page title. Pydantic's own wording ("valid tuple", "Extra
inputs are not permitted") never reaches the user. No message holds a value
from a record: only field names, positions and JSON type names.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

SCHEMA_HINT = "see the Datasets guide for the case schema"

# Names other tools use for a case field, where spelling alone would not find it.
_ALIASES = {
    "answer": "expected_answer",
    "ground_truth": "expected_answer",
    "reference": "expected_answer",
    "reference_answer": "expected_answer",
    "sources": "expected_source_ids",
    "source": "expected_source_ids",
    "doc_ids": "expected_source_ids",
    "context": "reference_contexts",
    "contexts": "reference_contexts",
    "history": "conversation_history",
    "type": "question_type",
    "query": "question",
    "user_input": "question",  # Ragas
    "input": "question",  # DeepEval, LangChain
    "expected_output": "expected_answer",  # DeepEval
    "payload": "adversarial_payload",
}

# Other tools' names for what a pipeline returns: never part of a case.
_OUTPUT_FIELDS = frozenset(
    {"retrieved_contexts", "retrieval_context", "response", "actual_output", "output"}
)

# Fields of the nested models, for unknown keys inside them.
_NESTED_FIELDS: dict[str, frozenset[str]] = {
    "conversation_history": frozenset({"role", "content"}),
    "provenance": frozenset(
        {"document_id", "chunk_id", "span", "model", "prompt_version"}
        | {"generator_version", "seed", "usage", "confidence"}
    ),
    "provenance.usage": frozenset({"prompt_tokens", "completion_tokens"}),
}


def json_type(value: Any) -> str:
    """The JSON name of a value's type, with its article ("a string", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def closest(name: str, choices: Collection[str]) -> str | None:
    """The known name a misspelt one most likely means, or None."""
    alias = _ALIASES.get(name.lower())
    if alias is not None and alias in choices:
        return alias
    match = difflib.get_close_matches(name.lower(), sorted(choices), n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_field(name: str, fields: Collection[str], *, csv: bool) -> tuple[str, str]:
    """Reason and fix for a record key that is not one of ``fields``."""
    shown = name[:40]
    guess = closest(name, fields)
    if csv:
        target = guess or "metadata." + shown
        reason = f"unknown column '{shown}'"
        hint = (
            f"map it with --map '{shown}={target}' (a DatasetFieldMap in Python), "
            f"or drop it with --ignore-column '{shown}'"
        )
    elif name.lower() in _OUTPUT_FIELDS:
        reason = f"unknown field '{shown}': it names what the pipeline returns, not a case field"
        return reason, (
            f"remove '{shown}': ragproof calls the pipeline and scores its answer and contexts "
            "(gold passages go in 'reference_contexts', their ids in 'expected_source_ids')"
        )
    else:
        reason = f"unknown field '{shown}'"
        hint = (
            f"rename '{shown}' to '{guess}'"
            if guess
            else f"remove '{shown}', or move it into 'metadata' ({SCHEMA_HINT})"
        )
    if guess:
        reason += f"; did you mean '{guess}'?"
    return reason, hint


def list_expected(field: str, value: Any) -> tuple[str, str]:
    """Reason and fix for a list field holding something else."""
    return (
        f"field '{field}': expected a list of strings, got {json_type(value)}",
        f'make \'{field}\' a JSON array of strings, e.g. "{field}": ["…"]',
    )


def _path(loc: Sequence[Any]) -> str:
    """A location as the file spells it: conversation_history[0].role."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _lookup(record: Any, loc: Sequence[Any]) -> Any:
    value = record
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


_EXPECTED = {
    "string_type": "a string",
    "bool_type": "true or false",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _expected_list(loc: Sequence[Any], string_lists: Collection[str]) -> str:
    top = loc[0] if loc else ""
    if top in string_lists:
        return "a list of strings"
    if top == "conversation_history":
        return 'a list of {"role": …, "content": …} objects'
    if loc and loc[-1] == "span":
        return "a list of two integers [start, end]"
    return "a list"


def field_error(
    error: Mapping[str, Any], record: Any, string_lists: Collection[str]
) -> tuple[str, str]:
    """Reason and fix for one pydantic error of a record.

    ``error["loc"]`` is the location inside the record (no batch index); ``record``
    is the validated dict, read only for the JSON type at that location;
    ``string_lists`` names the fields that hold lists of strings.
    """
    loc = [p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    kind = str(error["type"])
    msg = str(error["msg"]).removeprefix("Value error, ")
    if not loc:  # a rule across fields (kind-specific requirements)
        return msg, "see the Datasets guide for what each kind needs"
    path = _path(loc)
    if kind == "missing":
        if isinstance(loc[-1], int):  # a fixed-length list that is too short
            parent = _path(loc[:-1])
            wanted = _expected_list(loc[:-1], string_lists)
            return f"field '{parent}': too few entries", f"make '{parent}' {wanted}"
        return f"missing field '{path}'", f"add '{path}' to the record"
    if kind == "extra_forbidden":
        parent = ".".join(str(p) for p in loc[:-1] if not isinstance(p, int))
        name = str(loc[-1])
        guess = closest(name, _NESTED_FIELDS.get(parent, frozenset()))
        reason = f"unknown field '{path}'"
        if guess:
            return f"{reason}; did you mean '{guess}'?", f"rename '{name}' to '{guess}'"
        return reason, f"remove '{name}' from '{_path(loc[:-1])}' ({SCHEMA_HINT})"
    got = json_type(_lookup(record, loc))
    wanted = _EXPECTED.get(kind) or _expected_list(loc, string_lists)
    if kind in _EXPECTED or kind in ("tuple_type", "list_type"):
        return f"field '{path}': expected {wanted}, got {got}", f"make '{path}' {wanted}"
    if kind == "string_too_short":
        return f"field '{path}' is empty", f"give '{path}' a value or leave it out"
    if kind in ("too_long", "too_short"):
        bound = msg.partition(" should have ")[2].partition(" item")[0]  # "at most 2"
        return f"field '{path}' must have {bound} entries", f"make '{path}' {wanted}"
    if msg.startswith("Input should be "):
        hint = f"change '{path}' to one of them" if kind == "literal_error" else f"change '{path}'"
        return f"field '{path}' must be {msg.removeprefix('Input should be ')}", hint
    if msg.startswith("expected ") and ", got " in msg:  # our own validators' wording
        return f"field '{path}': {msg}", f"make '{path}' {msg[9:].partition(', got ')[0]}"
    return f"field '{path}': {msg}", f"change '{path}' ({SCHEMA_HINT})"
