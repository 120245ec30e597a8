"""Explicit source-field -> case-field mapping (never guessed)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_ragproof.dataset.normalize import FIELDS, RecordError
from pytest_ragproof.errors import ConfigError

_ARRAY_FIELDS = frozenset(
    {"expected_source_ids", "reference_contexts", "tags", "conversation_history"}
)
_OBJECT_FIELDS = frozenset({"metadata", "provenance"})


@dataclass(frozen=True)
class DatasetFieldMap:
    """Maps source column/key names to case fields.

    ``columns`` maps a source name to a case field, or to ``metadata.<key>`` to keep
    a column as a metadata string. Source names not in the map are used as they
    are (so an unknown name is reported, not dropped); list names to drop on
    purpose in ``ignore``. In CSV cells, list fields hold JSON arrays, ``metadata``
    and ``provenance`` JSON objects, and ``synthetic`` ``true``/``false``; empty
    cells count as absent.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for source, target in self.columns.items():
            if target not in FIELDS and not (
                target.startswith("metadata.") and len(target) > len("metadata.")
            ):
                raise ConfigError(
                    f"DatasetFieldMap maps '{source}' to '{target}', which is not a case field; "
                    f"expected one of {', '.join(sorted(FIELDS))} or 'metadata.<key>'"
                )
            if target in seen:
                raise ConfigError(
                    f"DatasetFieldMap maps both '{seen[target]}' and '{source}' to '{target}'"
                )
            seen[target] = source
        object.__setattr__(self, "ignore", frozenset(self.ignore))

    @classmethod
    def parse(cls, pairs: list[str] | None, ignore: list[str] | None = None) -> DatasetFieldMap:
        """Build from CLI ``COLUMN=FIELD`` pairs."""
        columns: dict[str, str] = {}
        for pair in pairs or []:
            source, sep, target = pair.partition("=")
            if not sep or not source or not target:
                raise ConfigError(
                    f"--map expects COLUMN=FIELD, e.g. 'Query=question'; got '{pair}'"
                )
            columns[source] = target
        return cls(columns=columns, ignore=frozenset(ignore or ()))

    def apply(self, record: Mapping[str, Any], *, from_csv: bool = False) -> dict[str, Any]:
        """Rename one record's keys; for CSV, decode typed cells."""
        out: dict[str, Any] = {}
        metadata_extra: dict[str, Any] = {}
        for source, value in record.items():
            if source in self.ignore:
                continue
            target = self.columns.get(source, source)
            if from_csv:
                if value is None or value == "":
                    continue
                value = _decode_cell(source, target, value)
            if target.startswith("metadata."):
                metadata_extra[target[len("metadata.") :]] = value
            else:
                out[target] = value
        if metadata_extra:
            base = out.get("metadata", {})
            if not isinstance(base, Mapping):
                return out  # the model reports the type error
            clash = set(base) & set(metadata_extra)
            if clash:
                raise RecordError(
                    "a metadata key is given both in 'metadata' and by a metadata.<key> column",
                    hint="keep only one of them",
                )
            out["metadata"] = {**base, **metadata_extra}
        return out


def _decode_cell(source: str, target: str, value: Any) -> Any:
    if not isinstance(value, str):
        # csv.DictReader puts surplus cells in a list under the None key.
        raise RecordError("row has more cells than the header", hint="check the CSV quoting")
    if target in _ARRAY_FIELDS or target in _OBJECT_FIELDS:
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RecordError(
                f"column '{source[:40]}' ({target}) is not valid JSON: {exc.msg}",
                hint='write arrays like ["a", "b"] and objects like {"k": 1}',
                exc_type="JSONDecodeError",
            ) from None
        except RecursionError:
            raise RecordError(
                f"column '{source[:40]}' ({target}) is nested too deeply to parse",
                hint="flatten it",
                exc_type="RecursionError",
            ) from None
        want = list if target in _ARRAY_FIELDS else dict
        if not isinstance(decoded, want):
            raise RecordError(
                f"column '{source[:40]}' ({target}) must hold a JSON "
                f"{'array' if want is list else 'object'}",
                hint="see CSV under Inputs in the Datasets guide",
            )
        return decoded
    if target == "synthetic":
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise RecordError(
                f"column '{source[:40]}' (synthetic) must be true or false",
                hint="write true or false",
            )
        return lowered == "true"
    return value
