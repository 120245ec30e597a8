"""``ragproof validate --corpus``: expected source ids against a corpus's document and chunk ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.corpus import load_corpus
from pytest_ragproof.corpus.chunking import chunk_document
from tests.dataset.conftest import SECRET, qa


def _corpus(root: Path) -> Path:
    (root / "policies").mkdir(parents=True)
    (root / "policies" / "refunds.md").write_text(
        "# Refunds\n\n" + "Refunds take thirty days to arrive in full. " * 60, encoding="utf-8"
    )
    (root / "faq.txt").write_text("Short answer file.\n", encoding="utf-8")
    (root / "big.txt").write_text("x" * 200, encoding="utf-8")
    return root


def _dataset(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_known_document_and_chunk_ids_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    n_chunks = len(chunk_document(load_corpus(corpus).document("policies/refunds.md")))
    assert n_chunks >= 3
    data = _dataset(
        tmp_path / "cases.jsonl",
        [
            qa(id="a", expected_source_ids=["faq.txt"]),
            qa(
                id="b",
                expected_source_ids=[
                    "policies/refunds.md#0",
                    f"policies/refunds.md#{n_chunks - 1}",
                ],
            ),
        ],
    )
    assert main(["validate", str(data), "--corpus", str(corpus)]) == 0
    out, err = capsys.readouterr()
    assert (
        f"corpus: {corpus}, 3 document(s), {n_chunks + 2} chunk(s) "
        "(chunk_size=1000, chunk_overlap=100)" in out
    )
    assert "expected_source_ids: 3 checked, 0 not in the corpus" in out
    assert err == ""


def test_unknown_ids_are_listed_with_the_closest_real_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    n_chunks = len(chunk_document(load_corpus(corpus).document("policies/refunds.md")))
    data = _dataset(
        tmp_path / "cases.jsonl",
        [
            qa(id="a", expected_source_ids=["faq.txt", "policies/refund.md"]),
            qa(id="b", expected_source_ids=["policies/refunds.md#99"]),
            qa(id="c", expected_source_ids=["polices/refunds.md#1"]),
            qa(id="d", expected_source_ids=["nothing-like-it"]),
        ],
    )
    assert main(["validate", str(data), "--corpus", str(corpus)]) == 1
    out, err = capsys.readouterr()
    assert "expected_source_ids: 5 checked, 4 not in the corpus" in out
    assert err.splitlines() == [
        f"ragproof validate: 4 expected source id(s) not in {corpus}",
        "  case 'a': 'policies/refund.md' is not in the corpus; closest: 'policies/refunds.md'",
        f"  case 'b': 'policies/refunds.md#99' is not a chunk of 'policies/refunds.md', which "
        f"has {n_chunks} chunk(s) (#0 to #{n_chunks - 1}); "
        f"closest: 'policies/refunds.md#{n_chunks - 1}'",
        "  case 'c': 'polices/refunds.md#1' is not a chunk in the corpus; "
        "closest: 'policies/refunds.md#1'",
        "  case 'd': 'nothing-like-it' is not in the corpus",
    ]
    assert SECRET not in out + err and "thirty days" not in out + err


def test_a_skipped_file_is_named_as_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "scan.pdf").write_bytes(b"not a pdf at all")
    data = _dataset(tmp_path / "cases.jsonl", [qa(id="a", expected_source_ids=["scan.pdf"])])
    assert main(["validate", str(data), "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert "  case 'a': 'scan.pdf' is in the corpus folder but was skipped (" in err


def test_a_missing_corpus_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _dataset(tmp_path / "cases.jsonl", [qa(id="a")])
    assert main(["validate", str(data), "--corpus", str(tmp_path / "nope")]) == 2
    assert "ragproof validate: error: " in capsys.readouterr().err
