"""The results file is written part by part, byte for byte the text of one ``json.dumps``."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_ragproof.results.document as document
from pytest_ragproof.results.digest import DIGEST_COVERS, digest
from pytest_ragproof.results.document import dump_parts, dumps
from tests.pytester_projects import behave, load_json, run

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
_DOCUMENTS = st.fixed_dictionaries(
    {"format": st.just("ragproof.results/1"), "cases": st.lists(_VALUES, max_size=6)},
    optional={"notes": st.lists(st.text(max_size=8), max_size=3), "run": _VALUES},
)


def _one_dumps_digest(doc: dict[str, Any]) -> str:
    """The digest as it was computed before: one canonical ``json.dumps`` of the parts."""
    parts = {key: doc.get(key) for key in DIGEST_COVERS}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@settings(max_examples=200, deadline=None)
@given(doc=_DOCUMENTS, part=st.integers(min_value=1, max_value=200))
def test_parts_join_to_dumps_and_digest_is_unchanged(doc: dict[str, Any], part: int) -> None:
    original = document._PART
    document._PART = part
    try:
        parts = list(dump_parts(doc))
    finally:
        document._PART = original
    assert "".join(parts) == dumps(doc)
    assert digest(doc) == _one_dumps_digest(doc)


def test_a_case_list_of_tuples_digests_as_lists() -> None:
    doc = {"cases": ({"ids": ("a", "b")}, [1.5, -0.0])}
    assert digest(doc) == _one_dumps_digest(doc)
    assert digest({"cases": None}) == _one_dumps_digest({"cases": None})


def test_a_mixed_run_writes_the_file_one_dumps_would_write(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small parts: the file is written in many pieces (the run is in this process).
    monkeypatch.setattr(document, "_PART", 100)
    behave(project, {"qa-two": "wrong-sources", "un-1": "raise", "inj-1": "leak"})
    result = run(
        project,
        [],
        "--ragproof-report=results.json",
        "--ragproof-baseline=base.json",
        "--ragproof-baseline-update",
    )
    assert result.ret == 1
    for name in ("results.json", "base.json"):
        path = project.path / name
        text = path.read_text(encoding="utf-8")
        data = load_json(path)
        statuses = {c["status"] for c in data["cases"]}
        assert statuses == {"passed", "failed", "error"}, statuses
        unsigned = {k: v for k, v in data.items() if k != "digest"}
        expected = {
            **unsigned,
            "digest": {"sha256": _one_dumps_digest(unsigned), "covers": list(DIGEST_COVERS)},
        }
        assert text == dumps(expected)
