"""A file whose strings are all printable ASCII is normalized as any other (issue 39.1).

Loading skips the per-string ASCII and printability checks when one scan of the
text shows it holds no escape, no DEL and no non-ASCII character; outer whitespace
is still stripped and every other rule still applies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragproof.dataset.io import load_dataset, load_to_write
from pytest_ragproof.dataset.readers import printable_ascii
from pytest_ragproof.errors import DatasetError

PADDED = {
    "id": "c1",
    "kind": "qa",
    "question": "  What is alpha?  ",
    "expected_answer": "alpha ",
    "expected_source_ids": [" docs/a.md", "docs/b.md "],
    "tags": ["  t1"],
    "metadata": {" key ": " value ", "n": 1},
    "question_type": "simple",
    "synthetic": False,
}


def test_the_screen_accepts_only_escape_free_printable_ascii() -> None:
    assert printable_ascii('{"question": "plain text"}')
    assert not printable_ascii('{"question": "caf\\u00e9"}')  # an escape
    assert not printable_ascii('{"question": "café"}')
    assert not printable_ascii('{"question": "del \x7f"}')


@pytest.mark.parametrize("loader", [load_dataset, load_to_write])
def test_a_printable_ascii_file_loads_as_the_same_records_from_python(
    tmp_path: Path, loader: object
) -> None:
    path = tmp_path / "cases.jsonl"
    text = json.dumps(PADDED) + "\n"
    assert printable_ascii(text)
    path.write_text(text, encoding="utf-8")
    from_file = loader(path)  # type: ignore[operator]
    from_python = load_dataset([PADDED])  # no screen for Python records
    assert from_file.canonical_cases == from_python.canonical_cases
    assert from_file.sha256 == from_python.sha256
    case = from_file.cases[0]
    assert case.question == "What is alpha?"
    assert case.expected_source_ids == ("docs/a.md", "docs/b.md")
    assert dict(case.metadata) == {"key": "value", "n": 1}


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"id": "a b", "kind": "qa", "question": "q", "expected_source_ids": ["d"]}, "whitespace"),
        ({"id": "c", "kind": "qa", "question": "   ", "expected_source_ids": ["d"]}, "empty"),
        ({"id": "c", "kind": "qa", "question": "q", "expected_source_ids": [" "]}, "expected"),
        ({"id": "c", "kind": "qa", "question": "q", "colour": "red"}, "colour"),
    ],
)
def test_a_printable_ascii_file_is_refused_as_python_records_are(
    tmp_path: Path, record: dict[str, object], reason: str
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as from_file:
        load_dataset(path)
    with pytest.raises(DatasetError) as from_python:
        load_dataset([record])
    assert reason in from_file.value.reason
    assert from_file.value.reason == from_python.value.reason
