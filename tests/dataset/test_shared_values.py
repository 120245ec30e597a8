"""Loading keeps repeated values once (memory of large runs, issue 28) without changing them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import freeze, load_dataset
from tests.dataset.conftest import qa

RECORDS: list[dict[str, Any]] = [
    qa(id=f"q{i}", tags=["billing", f"t{i % 2}"], metadata={"topic": "refunds", "n": i})
    for i in range(4)
] + [
    {"id": "u1", "kind": "unanswerable", "question": "Who won in 1850?", "tags": ["billing"]},
]


@pytest.fixture(params=["jsonl", "frozen"])
def loaded(request: pytest.FixtureRequest, write_jsonl: Callable[..., Path]) -> Any:
    path = write_jsonl(RECORDS)
    if request.param == "frozen":
        path = freeze(path)
    return load_dataset(path)


def test_values_are_those_of_the_file(loaded: Any) -> None:
    dumped = [case.model_dump(mode="json", exclude_unset=True) for case in loaded.cases]
    assert dumped == json.loads(json.dumps(RECORDS))


def test_repeated_strings_are_one_object(loaded: Any) -> None:
    qas = [c for c in loaded.cases if c.kind == "qa"]
    assert len({id(c.expected_source_ids[0]) for c in qas}) == 1
    assert len({id(c.tags[0]) for c in loaded.cases}) == 1


def test_cases_setting_the_same_fields_share_one_fields_set(loaded: Any) -> None:
    qas = [c for c in loaded.cases if c.kind == "qa"]
    assert len({id(c.__pydantic_fields_set__) for c in qas}) == 1
    other = next(c for c in loaded.cases if c.kind == "unanswerable")
    assert other.__pydantic_fields_set__ == {"id", "kind", "question", "tags"}
    assert other.__pydantic_fields_set__ is not qas[0].__pydantic_fields_set__


def test_a_copy_with_changes_leaves_the_shared_fields_set_alone(loaded: Any) -> None:
    first, second = [c for c in loaded.cases if c.kind == "qa"][:2]
    before = set(second.__pydantic_fields_set__)
    changed = first.model_copy(update={"split": "test"})
    assert "split" in changed.model_fields_set
    assert second.model_fields_set == before == first.model_fields_set
    assert second.model_dump(exclude_unset=True).keys() == before
