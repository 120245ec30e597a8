"""Inputs that crashed ``ragproof import`` / ``validate`` (issue 30): each is now a DatasetError
naming the file and the line, exit 1, no traceback and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.interop.test_fuzz import run_cli

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("tool", ["raget", "ragas", "deepeval"])
@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_deeply_nested_json(tmp_path: Path, tool: str, name: str) -> None:
    path = tmp_path / name
    first = json.dumps({"question": "q", "input": "q", "user_input": "q"})
    path.write_text(first + "\n" + DEEP + "\n" if name.endswith("l") else DEEP, encoding="utf-8")
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli("import", "--from", tool, path, "-o", out)
    line = 2 if name.endswith("l") else 1
    assert code == 1
    assert f"{path}, line {line}: holds values nested too deeply to parse" in err
    assert not out.exists()


def test_deeply_nested_record_in_a_goldens_object(tmp_path: Path) -> None:
    path = tmp_path / "goldens.json"
    path.write_text('{"goldens": [\n  {"input": "q"},\n  ' + DEEP + "\n]}", encoding="utf-8")
    code, _, err = run_cli("import", "--from", "deepeval", path, "-o", tmp_path / "o.jsonl")
    assert code == 1 and f"{path}, line 3: holds values nested too deeply" in err


def test_a_bad_golden_in_a_goldens_object_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "goldens.json"
    path.write_text(
        '{"goldens": [\n  {"input": "q", "context": ["c"]},\n  {"input": 3}\n]}', encoding="utf-8"
    )
    code, _, err = run_cli("import", "--from", "deepeval", path, "-o", tmp_path / "o.jsonl")
    assert code == 1 and f"{path}, line 3: input is a int, not text" in err


@pytest.mark.parametrize(
    "tool,record",
    [
        ("deepeval", {"input": "q", "context": ["c"], "additional_metadata": {"k": "\ud800"}}),
        ("ragas", {"user_input": "q\ud800", "reference_contexts": ["c"]}),
        ("raget", {"question": "q", "reference_context": "c", "metadata": {"topic": "\udfff"}}),
    ],
)
def test_lone_surrogate_in_an_import(tmp_path: Path, tool: str, record: dict[str, object]) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")  # written as a \u escape
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli("import", "--from", tool, path, "-o", out)
    assert code == 1, err
    assert f"{path}, line 1: the imported case is invalid:" in err
    assert "lone surrogate" in err and not out.exists()


def test_lone_surrogate_in_validate(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"kind": "qa", "question": "q", "expected_source_ids": ["a"], "metadata": {"k": "\ud800"}},
        {"kind": ["\ud800"], "question": "q"},  # a surrogate in a field of the wrong type
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_cli("validate", path)
    assert code == 1
    assert f"{path}, record 1, line 1: metadata.k contains the lone surrogate U+D800" in err
    assert f"{path}, record 2, line 2: holds the lone surrogate U+D800" in err


def test_promptfoo_string_vars_beside_a_default_test(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(
        "defaultTest:\n  vars:\n    locale: en\ntests:\n  - vars:\n      query: q\n"
        "  - vars: file://vars.yaml\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        "import", "--from", "promptfoo", path, "-o", tmp_path / "o.jsonl", "--var", "question=query"
    )
    assert code == 1
    assert f"{path}, line 7: the test's vars is a str, not a mapping" in err


def test_promptfoo_repeated_tests_key(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(
        "tests:\n  - vars: {query: a}\ntests:\n  - vars: {query: b}\n  - vars: {query: c}\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        "import", "--from", "promptfoo", path, "-o", tmp_path / "o.jsonl", "--var", "question=query"
    )
    assert code == 1
    assert f"{path}, line 3: a mapping has the same key twice" in err
