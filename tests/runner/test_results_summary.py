"""``Results.summary()`` of a run without thresholds prints its aggregates (issue 29, item 6)."""

from __future__ import annotations

from typing import Any

from pytest_ragproof import evaluate

CASES: list[dict[str, Any]] = [
    {
        "id": "q1",
        "kind": "qa",
        "question": "Refund window?",
        "expected_answer": "30 days",
        "expected_source_ids": ["refunds.md"],
    },
    {"id": "u1", "kind": "unanswerable", "question": "Who is the CEO's dentist?"},
]


def _pipeline(question: str) -> dict[str, object]:
    return {"answer": "30 days", "contexts": [{"id": "refunds.md", "text": "30 days"}]}


def test_summary_without_thresholds_prints_the_aggregates() -> None:
    results = evaluate(CASES, _pipeline, case_thresholds=["none"])
    assert results.thresholds == []
    lines = results.summary().splitlines()
    assert lines[0].split() == ["pipeline", "selector", "metric", "n", "mean", "min", "p50", "p95"]
    rows = {tuple(line.split()[:3]): line.split()[3:] for line in lines[2:]}
    assert rows[("rag_pipeline", "qa", "hit@5")][:2] == ["1", "1.000"]
    assert rows[("rag_pipeline", "qa", "precision@5")][:2] == ["1", "0.200"]
    assert rows[("rag_pipeline", "unanswerable", "abstained")][:2] == ["1", "0.000"]


def test_summary_with_thresholds_is_the_threshold_table() -> None:
    results = evaluate(CASES, _pipeline, thresholds=["qa:recall@5>=0.5"])
    text = results.summary()
    assert "threshold" in text.splitlines()[0]
    assert "mean >= 0.5 (aggregate)" in text
