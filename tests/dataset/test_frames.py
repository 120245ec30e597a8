"""``Dataset.to_pandas()`` and ``Results.to_pandas()``."""

from __future__ import annotations

import sys

import pytest

from pytest_ragproof import evaluate, load_dataset
from pytest_ragproof.errors import MissingExtraError

pd = pytest.importorskip("pandas")

CASES = [
    {
        "id": "a",
        "kind": "qa",
        "question": "Q?",
        "expected_answer": "x",
        "expected_source_ids": ["d"],
    },
    {"id": "u", "kind": "unanswerable", "question": "Z?", "tags": ["oos"]},
]


def pipeline(question: str) -> dict[str, object]:
    if question == "Z?":
        return {"answer": "I don't know.", "contexts": []}
    return {"answer": "x", "contexts": [{"id": "d", "text": "t"}]}


def test_dataset_to_pandas_has_one_row_per_case_and_the_schema_columns() -> None:
    frame = load_dataset(CASES).to_pandas()
    assert list(frame["id"]) == ["a", "u"]
    assert list(frame.columns[:3]) == ["id", "kind", "question"]
    assert frame.loc[0, "expected_source_ids"] == ["d"]
    assert frame.loc[1, "tags"] == ["oos"]


def test_results_to_pandas_has_metrics_as_columns_and_na_where_unmeasured() -> None:
    results = evaluate(load_dataset(CASES), pipeline)
    frame = results.to_pandas()
    assert list(frame["id"]) == ["a", "u"]
    assert list(frame["status"]) == ["passed", "passed"]
    assert frame.loc[0, "hit@5"] == 1.0 and frame.loc[0, "token_f1"] == 1.0
    assert frame.loc[1, "abstained"] == 1.0
    # an unanswerable case has no expected answer or source ids: absent, never 0 or NaN
    assert frame.loc[1, "token_f1"] is pd.NA and frame.loc[1, "recall@5"] is pd.NA
    assert str(frame.dtypes["recall@5"]) == "Float64"
    assert frame.loc[0, "retrieved_ids"] == ["d"]


def test_without_pandas_the_error_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(MissingExtraError, match=r"pip install pandas"):
        load_dataset(CASES).to_pandas()
    results = evaluate(load_dataset(CASES), pipeline)
    with pytest.raises(MissingExtraError, match=r"Results.to_pandas\(\) needs the 'pandas'"):
        results.to_pandas()
