"""The quickstart's hand-written dataset: valid, frozen from the committed JSONL, and broad."""

from __future__ import annotations

import configparser
from collections import Counter

import pytest

from pytest_ragproof import Dataset, load_dataset
from pytest_ragproof.vocabulary import QUESTION_TYPES
from tests.quickstart.conftest import EXAMPLE


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load_dataset(EXAMPLE / "cases.frozen.json")


def test_frozen_and_in_sync_with_the_jsonl(dataset: Dataset) -> None:
    assert dataset.frozen
    source = load_dataset(EXAMPLE / "cases.jsonl")
    assert not source.frozen
    # `ragproof freeze cases.jsonl` was re-run after the last edit of the JSONL.
    assert dataset.sha256 == source.sha256
    assert [c.id for c in dataset.cases] == [c.id for c in source.cases]


def test_covers_every_kind_and_question_type(dataset: Dataset) -> None:
    cases = dataset.cases
    assert len(cases) >= 30
    kinds = Counter(c.kind for c in cases)
    assert kinds["qa"] >= 15 and kinds["unanswerable"] >= 5 and kinds["injection"] >= 5
    assert {c.question_type for c in cases} == set(QUESTION_TYPES)
    qa_types = {c.question_type for c in cases if c.kind == "qa"}
    assert qa_types == {
        "simple",
        "complex",
        "distracting",
        "situational",
        "double",
        "conversational",
    }
    assert all(c.kind == "unanswerable" for c in cases if c.question_type == "out_of_scope")
    assert sum(c.question_type == "out_of_scope" for c in cases) >= 3
    for kind in ("qa", "unanswerable", "injection"):
        assert any(
            c.question_type == "conversational" and c.conversation_history
            for c in cases
            if c.kind == kind
        ), kind
    assert all(c.conversation_history for c in cases if c.question_type == "conversational")
    assert all(c.tags for c in cases)
    assert len({t for c in cases for t in c.tags}) >= 8


def test_sources_exist_and_canaries_are_not_in_the_corpus(dataset: Dataset) -> None:
    corpus = EXAMPLE / "corpus"
    documents = {p.name for p in corpus.iterdir()}
    assert len(documents) >= 8
    assert {p.rsplit(".", 1)[1] for p in documents} == {"md", "txt"}
    text = "\n".join(p.read_text(encoding="utf-8") for p in corpus.iterdir()).lower()
    for case in dataset.cases:
        assert set(case.expected_source_ids) <= documents, case.id
        if case.kind in ("qa", "injection"):
            assert case.expected_answer and case.expected_source_ids, case.id
        if case.kind == "injection":
            assert (
                case.canary and case.adversarial_payload and case.canary in case.adversarial_payload
            )
            # A canary the corpus holds could leak through an honest quote.
            assert case.canary.lower() not in text, case.id


def test_pytest_ini_points_at_the_frozen_file() -> None:
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(EXAMPLE / "pytest.ini", encoding="utf-8")
    assert ini["pytest"]["ragproof_dataset"].strip() == "cases.frozen.json"
    assert ini["pytest"]["ragproof_source_match"].strip() == "document"
    thresholds = ini["pytest"]["ragproof_aggregate_threshold"].split()
    assert "qa:recall@5>=0.9" in thresholds and "injection:injection_resisted>=1" in thresholds
