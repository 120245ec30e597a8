"""Which cases differ between two versions of a dataset, by id and digest only.

Used to refuse a modified frozen file (its stored digests against its cases) and by
``ragproof freeze --check`` (a frozen file against its source). Only ids are named,
never a value.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_NAMED = 10  # ids named per group; the count is always complete


def _key(case_id: Any) -> str:
    if isinstance(case_id, str):
        return case_id
    return json.dumps(case_id, sort_keys=True, default=str)  # a tampered, non-string id


def _shown(key: str) -> str:
    short = key if len(key) <= 60 else key[:57] + "..."
    return "'" + (short if short.isprintable() else short.encode("unicode_escape").decode()) + "'"


@dataclass(frozen=True)
class CaseChanges:
    """Ids whose content changed, that were added, removed, or moved, in ``after`` order."""

    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    moved: tuple[str, ...]
    first_index: int | None  # position in ``after`` of the first differing case

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed or self.moved)

    def describe(self) -> str:
        """``changed: 'a', 'b'; added: 'c'; removed: 'd'; moved: 'e'`` (non-empty groups)."""
        parts: list[str] = []
        for title, ids in (
            ("changed", self.changed),
            ("added", self.added),
            ("removed", self.removed),
            ("moved", self.moved),
        ):
            if ids:
                named = ", ".join(_shown(key) for key in ids[:MAX_NAMED])
                more = f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else ""
                parts.append(f"{title}: {named}{more}")
        return "; ".join(parts)


def case_changes(
    before: Sequence[tuple[Any, str]], after: Sequence[tuple[Any, str]]
) -> CaseChanges:
    """Compare two lists of (id, digest) pairs.

    An id present more often in ``after`` is added (a copy), less often removed; an
    id in both whose first digest differs changed; among ids in both, those outside
    the longest common order moved.
    """
    b = [(_key(i), d) for i, d in before]
    a = [(_key(i), d) for i, d in after]
    b_count = Counter(k for k, _ in b)
    a_count = Counter(k for k, _ in a)
    b_digest: dict[str, str] = {}
    for k, d in b:
        b_digest.setdefault(k, d)
    a_digest: dict[str, str] = {}
    for k, d in a:
        a_digest.setdefault(k, d)
    a_order = list(a_digest)
    added = tuple(k for k in a_order if a_count[k] > b_count[k])
    removed = tuple(k for k in b_digest if a_count[k] < b_count[k])
    changed = tuple(k for k in a_order if k in b_digest and b_digest[k] != a_digest[k])
    common_b = [k for k in b_digest if k in a_digest]
    common_a = [k for k in a_order if k in b_digest]
    matcher = difflib.SequenceMatcher(None, common_b, common_a, autojunk=False)
    in_place = {
        k
        for block in matcher.get_matching_blocks()
        for k in common_a[block.b : block.b + block.size]
    }
    moved = tuple(k for k in common_a if k not in in_place)
    differing = set(changed) | set(added) | set(moved)
    first = next((i for i, (k, _) in enumerate(a) if k in differing), None)
    if first is None and removed:
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    return CaseChanges(changed, added, removed, moved, first)
