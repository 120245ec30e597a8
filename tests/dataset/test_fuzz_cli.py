"""Mutated dataset files into ``ragproof validate`` (in-process, strict UTF-8 streams): exit 0,
or exit 1 listing problems that each name the file; never a traceback.

Derandomized with a bounded example count: the same files every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, seed
from hypothesis import strategies as st

from tests.interop.test_fuzz import FUZZ, SEED, mutate, mutation, run_cli, text, values

CASES: list[dict[str, Any]] = [
    {
        "id": "rate",
        "kind": "qa",
        "question": "What is the flat rate below $50?",
        "expected_answer": "$5.99",
        "expected_source_ids": ["shipping.md"],
        "reference_contexts": ["For orders below $50, we charge a flat rate of $5.99."],
        "tags": ["smoke"],
        "metadata": {"topic": "Shipping", "k": ["a", {"b": 1}]},
    },
    {"kind": "unanswerable", "question": "Do you deliver by drone?", "split": "test"},
    {
        "kind": "qa",
        "question": "Within how many days?",
        "expected_source_ids": ["returns.txt"],
        "conversation_history": [{"role": "user", "content": "I bought a jacket."}],
        "question_type": "conversational",
    },
]
BODIES = {
    "cases.jsonl": "".join(json.dumps(c) + "\n" for c in CASES).encode(),
    "cases.json": json.dumps(CASES, indent=2).encode(),
}


@pytest.mark.parametrize("name", sorted(BODIES))
@seed(SEED)
@FUZZ
@given(ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_datasets_into_validate(tmp_path: Path, name: str, ops: list[Any]) -> None:
    path = tmp_path / name
    path.write_bytes(mutate(BODIES[name], ops))
    code, out, err = run_cli("validate", path)
    assert "Traceback" not in out + err
    assert code in (0, 1), err
    if code == 1:
        head, *problems = err.splitlines()
        assert head.startswith("ragproof validate:") and str(path) in head
        assert problems and all(p.strip().startswith(str(path)) for p in problems[:50]), err


FIELDS = sorted({k for case in CASES for k in case} | {"canary", "provenance", "synthetic"})
record = st.dictionaries(
    st.sampled_from(FIELDS) | text,
    values | st.sampled_from(["qa", "unanswerable", "simple", ["a"]]),
    max_size=6,
)


@seed(SEED)
@FUZZ
@given(rows=st.lists(st.fixed_dictionaries({"kind": st.just("qa")}) | record, max_size=3))
def test_generated_records_into_validate(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    """Arbitrary values (lone surrogates among them, as ``\\u`` escapes) in case fields."""
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run_cli("validate", path)
    assert "Traceback" not in out + err
    assert code in (0, 1), err
    if code == 1:
        problems = err.splitlines()[1:]
        assert problems and all(p.strip().startswith(str(path)) for p in problems[:50]), err
