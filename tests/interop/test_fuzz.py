"""Mutated and generated files into ``ragproof import``: exit 0 with a valid dataset, or exit 1
with a DatasetError that names the file (and the line, for a record's error); never a
traceback, never another exit code.

The CLI runs in-process (``pytest_ragproof.cli:main``) with UTF-8 ``strict`` streams, so a
report line that cannot be written (a lone surrogate in a field name) fails too. Every
test is derandomized with a bounded example count: the same files each run.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from pytest_ragproof import load_dataset
from pytest_ragproof.cli import main

FIXTURES = Path(__file__).parent / "fixtures"

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: report the file as found
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SEED = 20261202

# Errors about the whole file rather than one record: they need not name a line.
FILE_LEVEL = (
    "no record could be imported",  # the dropped records above it name their lines
    "promptfoo vars have no fixed meaning",
)


def run_cli(*args: str | Path) -> tuple[int, str, str]:
    """``ragproof ARGS`` in-process, its output through strict UTF-8 streams."""
    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", errors="strict", write_through=True)
    with redirect_stdout(out_text), redirect_stderr(err_text):
        code = main([str(a) for a in args])
    return code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8")


def check_import(tool: str, path: Path, *extra: str) -> int:
    """Import ``path``; the outcome is a valid dataset or a DatasetError naming file and line."""
    out = path.with_name("imported.jsonl")
    out.unlink(missing_ok=True)
    code, stdout, stderr = run_cli("import", "--from", tool, path, "-o", out, *extra)
    assert "Traceback" not in stdout + stderr
    assert code in (0, 1), stderr
    if code == 1:
        error = next(line for line in stderr.splitlines() if "ragproof import: error:" in line)
        assert str(path) in error
        assert re.search(r"\bline \d+", stderr) or any(r in error for r in FILE_LEVEL), stderr
        assert not out.exists()
    else:
        assert len(load_dataset(out)) >= 1
    return code


# -- mutations of the fixture files ---------------------------------------------------

SNIPPETS = [
    b"[" * 1200,
    b"{" * 50,
    b"]",
    b"}",
    b'"',
    b"\n",
    b"\r\n",
    b",",
    b":",
    b"null",
    b"1" * 5000,
    b"NaN",
    b'"\\ud800"',
    b"\\udfff",
    b"\xff",
    b"\x00",
    b"\xef\xbb\xbf",
    b"- ",
    b"tests:\n",
    b"tests:\n  - vars: x\n",
    b"defaultTest:\n  vars: {locale: en}\n",
    b"vars: text\n",
    b"assert: 3\n",
    b"&a [*a]",
    b"Document x: ",
    b"\n\nDocument 1: ",
    b"|",
    b"'",
    b'{"a": ',
    b'"ragproof": {"id": "a b", "kind": "nope", "expected_source_ids": [1]}',
    b'"user_input": [{"type": "ai", "content": 1}]',
    b"!!binary aGk=",
    b"!!set {a}",
]

mutation = st.tuples(
    st.sampled_from(["insert", "delete", "replace", "duplicate"]),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=1, max_value=60),
    st.sampled_from(SNIPPETS) | st.binary(min_size=1, max_size=6),
)


def mutate(data: bytes, ops: list[tuple[str, float, int, bytes]]) -> bytes:
    for op, where, size, snippet in ops:
        at = int(where * len(data))
        if op == "insert":
            data = data[:at] + snippet + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + size :]
        elif op == "replace":
            data = data[:at] + snippet + data[at + len(snippet) :]
        else:
            data = data[:at] + data[at : at + size] * 2 + data[at + size :]
    return data


CASES = [
    ("raget", "raget_testset.jsonl", ()),
    ("ragas", "ragas_testset.jsonl", ()),
    ("ragas", "ragas_testset.csv", ()),
    ("ragas", "ragas_old_testset.json", ()),
    ("deepeval", "deepeval_goldens.json", ()),
    ("deepeval", "deepeval_goldens.csv", ()),
    ("promptfoo", "promptfoo_tests.yaml", ("--var", "question=query", "--var", "id=id")),
    (
        "promptfoo",
        "promptfoo_tests.csv",
        ("--var", "question=query", "--var", "reference_contexts=context"),
    ),
]


@pytest.mark.parametrize("tool,name,extra", CASES, ids=[c[1] for c in CASES])
@seed(SEED)
@FUZZ
@given(ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_files(
    tmp_path: Path, tool: str, name: str, extra: tuple[str, ...], ops: list[Any]
) -> None:
    path = tmp_path / name
    path.write_bytes(mutate((FIXTURES / name).read_bytes(), ops))
    check_import(tool, path, *extra)


# -- files generated from each tool's field names -------------------------------------

text = st.text(
    st.characters(codec="utf-8") | st.sampled_from(["\ud800", "\udfff", "\n", "\r", "\x00"]),
    max_size=12,
) | st.sampled_from(["", " ", "Document 1: a", "Document a: x\n\nDocument b: y", "simple"])
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def records(fields: list[str], special: dict[str, st.SearchStrategy[Any]]) -> Any:
    """Objects of the tool's field names (and a few others) with arbitrary values."""
    names = st.sampled_from(fields) | text
    return st.lists(
        st.dictionaries(names, values | st.one_of(*special.values()), max_size=6), max_size=4
    )


RAGET = ["id", "question", "reference_answer", "reference_context", "conversation_history"]
RAGET += ["metadata", "agent_answer"]
RAGAS = ["user_input", "reference", "reference_contexts", "synthesizer_name", "question"]
RAGAS += ["ground_truth", "ground_truths", "contexts", "evolution_type", "metadata"]
RAGAS += ["persona_name", "eval_sample", "retrieved_contexts"]
DEEPEVAL = ["input", "expected_output", "context", "additional_metadata", "name", "comments"]
DEEPEVAL += ["turns", "scenario", "actual_output", "retrieval_context"]
SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    "metadata": st.fixed_dictionaries(
        {"question_type": st.sampled_from(["simple", "out of scope", "double", "x"])},
        optional={
            "seed_document_id": text,
            "ragproof": st.dictionaries(
                st.sampled_from(["id", "kind", "question_type", "expected_source_ids", "tags"]),
                values | st.sampled_from(["qa", "unanswerable", ["a"]]),
            ),
        },
    ),
    "history": st.lists(
        st.fixed_dictionaries({"role": text, "content": text}) | st.fixed_dictionaries({}),
        max_size=2,
    ),
    "messages": st.lists(
        st.fixed_dictionaries({"type": st.sampled_from(["human", "ai", "x"]), "content": text}),
        max_size=3,
    ),
}


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _csv(rows: list[dict[str, Any]]) -> str:
    columns = sorted({k for row in rows for k in row})
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row[c]) if c in row else "" for c in columns])
    return buf.getvalue()


def _write(path: Path, text_: str) -> bool:
    try:
        path.write_bytes(text_.encode("utf-8", "surrogatepass"))
    except UnicodeEncodeError:
        return False
    return True


LAYOUTS: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "a.jsonl": lambda rows: "".join(json.dumps(r) + "\n" for r in rows),
    "a.json": lambda rows: json.dumps(rows, indent=2),
    "b.json": lambda rows: json.dumps({"goldens": rows, "samples": rows}, indent=1),
    "a.csv": _csv,
}


@pytest.mark.parametrize(
    "tool,fields",
    [("raget", RAGET), ("ragas", RAGAS), ("deepeval", DEEPEVAL)],
    ids=["raget", "ragas", "deepeval"],
)
@seed(SEED)
@FUZZ
@given(data=st.data())
def test_generated_json_and_csv(
    tmp_path: Path, tool: str, fields: list[str], data: st.DataObject
) -> None:
    rows = data.draw(records(fields, SPECIAL))
    name = data.draw(st.sampled_from(["a.jsonl"] if tool == "raget" else sorted(LAYOUTS)))
    path = tmp_path / name
    if _write(path, LAYOUTS[name](rows)):
        check_import(tool, path)


PROMPTFOO_TEST = st.dictionaries(
    st.sampled_from(["vars", "assert", "description", "metadata", "options"]),
    values
    | st.dictionaries(st.sampled_from(["query", "context", "id"]) | text, values, max_size=3)
    | st.lists(
        st.fixed_dictionaries({"type": st.sampled_from(["equals", "contains", "x"]), "value": text})
    ),
    max_size=4,
)


@seed(SEED)
@FUZZ
@given(
    tests=st.lists(PROMPTFOO_TEST | values, max_size=4),
    default=st.none() | PROMPTFOO_TEST | values,
    as_config=st.booleans(),
)
def test_generated_promptfoo_yaml(
    tmp_path: Path, tests: list[Any], default: Any, as_config: bool
) -> None:
    import yaml

    doc: Any = tests
    if as_config:
        doc = {"tests": tests} if default is None else {"defaultTest": default, "tests": tests}
    try:
        body = yaml.safe_dump(doc, allow_unicode=False)
    except yaml.YAMLError:
        return
    path = tmp_path / "promptfooconfig.yaml"
    if _write(path, body):
        check_import("promptfoo", path, "--var", "question=query", "--var", "id=id")
