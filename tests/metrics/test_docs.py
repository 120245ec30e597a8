"""docs/metrics.md lists the defaults users rely on; keep it in step with the code."""

from __future__ import annotations

from pathlib import Path

from pytest_ragproof.metrics import (
    DEFAULT_ABSTAIN_PATTERNS,
    STOPWORDS,
    completeness,
    retrieval_metrics,
    rouge_l,
    token_f1,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_every_default_abstention_pattern_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for pattern in DEFAULT_ABSTAIN_PATTERNS["en"]:
        assert pattern in text, pattern


def test_the_stopword_list_is_documented_exactly() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("Stopwords (`pytest_ragproof.metrics.STOPWORDS`, English):")[1]
    words = block.split("```")[1].split()
    assert words == sorted(STOPWORDS)


def test_worked_examples_match_the_code() -> None:
    m = retrieval_metrics(["a", "x", "a", "b", "y"], {"a", "b", "z"}, (1, 3, 5))
    assert round(m["ndcg@3"], 4) == round(m["ndcg@5"], 4) == 0.7039
    assert m["precision@5"] == 0.4
    assert round(m["map"], 4) == 0.5556
    assert round(token_f1("The Eiffel Tower, in Paris", "the eiffel tower"), 4) == 0.6667
    assert rouge_l("the tower was built in 1889", "built in 1889 for the fair") == 0.5
    assert completeness("It opened in 1889 in Paris.", "The Eiffel Tower opened in 1889.") == 0.5
