"""Validated cases share the values many of them repeat (memory of large datasets)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.dataset.models import Case


def share_repeated_values(cases: Sequence[Case]) -> None:
    """Keep values that many validated cases repeat once: their fields set, source ids, tags.

    Pydantic keeps a set of the fields given per instance (about 0.7 KB for six
    fields), the same for most cases of a dataset; cases are frozen and pydantic
    copies the set before changing it (``model_copy``), so one set serves them all.
    JSON decoding makes a new string for every occurrence of a source id or tag,
    and validation keeps the strings it is given: a source id named by a thousand
    cases was a thousand strings, held by the cases to the end of a run. The
    values are unchanged; the cases are this load's own, not yet handed out.
    """
    memo: dict[str, str] = {}
    share = memo.setdefault
    fields_sets: dict[frozenset[str], set[str]] = {}
    last: set[str] | None = None
    for case in cases:
        values = case.__dict__
        ids = values["expected_source_ids"]
        if ids:
            values["expected_source_ids"] = tuple(map(share, ids, ids))
        tags = values["tags"]
        if tags:
            values["tags"] = tuple(map(share, tags, tags))
        own = case.__pydantic_fields_set__
        if own != last:  # a case setting other fields than the one before
            last = fields_sets.setdefault(frozenset(own), own)
        if last is not own:
            object.__setattr__(case, "__pydantic_fields_set__", last)
