"""Deterministic split assignment (docs/datasets.md, "Splits").

bucket = first 8 bytes of sha256(``<seed>`` NUL ``<group value or id>``) / 2^64,
compared with the cumulative ratios of optimize, validation, test.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError, DatasetError
from pytest_ragproof.vocabulary import SPLITS

DEFAULT_RATIOS: tuple[float, float, float] = (0.8, 0.1, 0.1)


def parse_ratios(text: str) -> tuple[float, float, float]:
    """Parse ``"0.8,0.1,0.1"``; finite, non-negative, summing to one within 1e-9."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise ConfigError(
            f"--ratios needs three numbers for optimize,validation,test, e.g. 0.8,0.1,0.1; "
            f"got {len(parts)}"
        )
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise ConfigError("--ratios must be numbers, e.g. 0.8,0.1,0.1") from None
    return check_ratios(values)


def check_ratios(values: Sequence[float]) -> tuple[float, float, float]:
    if len(values) != 3:
        raise ConfigError("ratios need three values: optimize, validation, test")
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise ConfigError("ratios must be finite and non-negative, e.g. 0.8,0.1,0.1")
    if abs(math.fsum(values) - 1.0) > 1e-9:
        raise ConfigError(f"ratios must sum to 1 (within 1e-9); they sum to {math.fsum(values)!r}")
    return (float(values[0]), float(values[1]), float(values[2]))


def bucket(seed: str | int, key: str) -> float:
    """The case's position in [0, 1)."""
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_for(value: float, ratios: Sequence[float]) -> str:
    cumulative = 0.0
    for name, ratio in zip(SPLITS, ratios, strict=True):
        cumulative += ratio
        if ratio > 0 and value < cumulative:
            return name
    # Rounding can leave the top of [0, 1) uncovered: give it to the last non-empty split.
    return next(name for name, ratio in reversed(list(zip(SPLITS, ratios, strict=True))) if ratio)


def group_key(case: Case, group_by: str | None, record: int, source: str | None) -> str:
    if group_by is None:
        return case.id
    value = case.metadata.get(group_by)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DatasetError(
            f"metadata['{group_by[:40]}'] is missing or not a string/integer",
            source=source,
            record=record,
            hint=f"give every case a string or integer metadata.{group_by[:40]}, "
            "or split without --group-by",
        )
    return str(value)


def assign_splits(
    cases: Sequence[Case],
    seed: str | int,
    ratios: Sequence[float] = DEFAULT_RATIOS,
    *,
    group_by: str | None = None,
    source: str | None = None,
) -> list[Case]:
    """Return the cases with ``split`` assigned; order and everything else unchanged."""
    checked = check_ratios(ratios)
    out: list[Case] = []
    for i, case in enumerate(cases, start=1):
        key = group_key(case, group_by, i, source)
        out.append(case.model_copy(update={"split": split_for(bucket(seed, key), checked)}))
    return out
