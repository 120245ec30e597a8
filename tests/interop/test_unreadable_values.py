"""Values no importer can turn into a case: one line naming the file, the line and the field
(never a traceback from a hash or a parser deep inside), and nothing written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.interop.conftest import Ran

LONE = "a \\ud800 b"  # as the file spells it: a JSON escape of half a surrogate pair

CASES = {
    "ragas": (
        "ragas.jsonl",
        '{"user_input": "What is x?", "reference": "x is y.", '
        f'"reference_contexts": ["{LONE}"]}}\n',
        [],
        "line 1: reference_contexts holds a lone surrogate escape",
    ),
    "deepeval": (
        "goldens.json",
        f'[{{"input": "What is x?", "expected_output": "x is y.", "context": ["{LONE}"]}}]',
        [],
        "line 1: context holds a lone surrogate escape",
    ),
    "promptfoo": (
        "tests.csv",
        f'question,context\n"What is x?","[""{LONE}""]"\n',
        ["--var", "question=question", "--var", "reference_contexts=context"],
        "line 2: vars.context holds a lone surrogate escape",
    ),
}


@pytest.mark.parametrize("tool", list(CASES))
def test_a_lone_surrogate_in_a_context_is_named(
    tool: str, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    name, text, extra, why = CASES[tool]
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    ran = cli("import", "--from", tool, source, "-o", tmp_path / "cases.jsonl", *extra)
    assert ran.code != 0
    (line,) = ran.err.splitlines()
    assert line.startswith(f"ragproof import: error: {source}, {why}"), line
    assert "Fix: remove that escape or write the character itself" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_promptfoo_yaml_number_too_long_to_read_is_named(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(
        "tests:\n"
        "  - vars:\n"
        "      query: What is x?\n"
        "    assert:\n"
        "      - type: equals\n"
        f"        value: {'9' * 5000}\n",
        encoding="utf-8",
    )
    ran = cli("import", "--from", "promptfoo", source, "-o", tmp_path / "cases.jsonl")
    assert ran.code != 0
    (line,) = ran.err.splitlines()
    assert line == (
        f"ragproof import: error: {source}, line 6: holds a number too long to read (thousands "
        "of digits). Fix: quote it to make it text, or shorten it"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]
