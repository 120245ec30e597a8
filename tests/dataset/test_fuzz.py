"""Arbitrary bytes and arbitrary JSON values into each loader raise only DatasetError.

For files, ``find_problems`` (what ``ragproof validate`` lists) must agree with the loader.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragproof import DatasetError, DatasetFieldMap, load_dataset

FUZZ = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,  # the same inputs every run (a fixed seed); the count is bounded
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "a\udfff"]),  # lone surrogates (a JSON "\ud800" escape)
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

FIELD_NAMES = [
    "id",
    "kind",
    "question",
    "expected_answer",
    "expected_source_ids",
    "reference_contexts",
    "adversarial_payload",
    "canary",
    "question_type",
    "conversation_history",
    "tags",
    "metadata",
    "split",
    "synthetic",
    "provenance",
    "review_status",
]
records = st.dictionaries(
    st.sampled_from(FIELD_NAMES) | st.text(max_size=6),
    json_values | st.sampled_from(["qa", "unanswerable", "injection", "simple", "test"]),
    max_size=8,
)


def _load_or_dataset_error(path: Path, field_map: DatasetFieldMap | None = None) -> None:
    """Loading raises only DatasetError, and ``ragproof validate``'s list agrees with it."""
    from pytest_ragproof.dataset.io import find_problems

    problems = find_problems(path, field_map=field_map)
    assert all(isinstance(p, DatasetError) for p in problems)
    try:
        load_dataset(path, field_map=field_map)
    except DatasetError as exc:
        assert str(exc) in {str(p) for p in problems}  # the load's error is among them
    else:
        assert problems == []


@pytest.mark.parametrize("name", ["cases.jsonl", "cases.json", "cases.frozen.json", "cases.csv"])
@FUZZ
@given(blob=st.binary(max_size=300))
def test_arbitrary_bytes(tmp_path: Path, name: str, blob: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(blob)
    _load_or_dataset_error(path, DatasetFieldMap({"q": "question"}))


@FUZZ
@given(value=json_values | st.lists(records, max_size=3))
def test_arbitrary_json_into_jsonl_and_array(tmp_path: Path, value: Any) -> None:
    try:
        text = json.dumps(value)
    except ValueError:
        return
    for name, body in (("a.jsonl", text + "\n"), ("a.json", text)):
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        _load_or_dataset_error(path)
    if isinstance(value, list):
        lines = "".join(json.dumps(v) + "\n" for v in value)
        (tmp_path / "b.jsonl").write_text(lines, encoding="utf-8")
        _load_or_dataset_error(tmp_path / "b.jsonl")


@FUZZ
@given(value=st.lists(records | json_values, max_size=3))
def test_arbitrary_values_into_python_iterables(value: list[Any]) -> None:
    with contextlib.suppress(DatasetError):
        load_dataset(value)


@FUZZ
@given(value=json_values, cases=st.lists(records, max_size=2))
def test_arbitrary_json_into_frozen(tmp_path: Path, value: Any, cases: list[Any]) -> None:
    from pytest_ragproof.dataset.canonical import canonical_json, dataset_hash, frozen_text

    try:
        jsons = [canonical_json(c) for c in cases]
    except ValueError:
        return
    path = tmp_path / "f.frozen.json"
    # A correctly hashed and laid-out file of arbitrary records: only validation stands.
    try:
        text = frozen_text(jsons, 2, dataset_hash(jsons))
    except UnicodeEncodeError:  # a lone surrogate: no frozen file holds it (the part below does)
        return
    path.write_text(text, encoding="utf-8")
    _load_or_dataset_error(path)
    try:
        doc = json.dumps({"format": "ragproof.dataset/1", "schema_version": value, "cases": value})
    except ValueError:
        return
    path.write_text(doc, encoding="utf-8")
    _load_or_dataset_error(path)


@FUZZ
@given(
    rows=st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=4), min_size=1, max_size=4)
)
def test_arbitrary_csv(tmp_path: Path, rows: list[list[str]]) -> None:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    path = tmp_path / "a.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    fmap = DatasetFieldMap(
        {"a": "question", "b": "tags", "c": "metadata", "d": "synthetic"}, ignore=frozenset({""})
    )
    _load_or_dataset_error(path, fmap)
