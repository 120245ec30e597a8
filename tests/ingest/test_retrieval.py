"""BM25 against hand-computed scores, tie-breaking, tokenizer, and the index vs brute force."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragproof.corpus.chunking import chunk_text
from pytest_ragproof.corpus.retrieval import K1, B, BM25Index, Hit, tokenize


@dataclass(frozen=True)
class C:
    id: str
    document_id: str
    text: str


def test_tokenizer_lowercases_unicode_alphanumeric_runs() -> None:
    assert tokenize("Hello, WORLD! snake_case x2 Ünïcode café 東京 3.14") == [
        "hello",
        "world",
        "snake",
        "case",
        "x2",
        "ünïcode",
        "café",
        "東京",
        "3",
        "14",
    ]
    # NFD input tokenizes like its NFC form.
    assert tokenize("cafe\u0301") == ["café"]


def test_constants_are_the_documented_ones() -> None:
    assert (K1, B) == (1.5, 0.75)


def test_scores_match_a_hand_computation() -> None:
    chunks = [
        C("a#0", "a", "the cat sat"),  # 3 tokens
        C("b#0", "b", "the dog"),  # 2 tokens
        C("c#0", "c", "cat cat dog bird"),  # 4 tokens
    ]
    index = BM25Index(chunks)
    n_docs, avgdl = 3, (3 + 2 + 4) / 3
    assert index.avgdl == pytest.approx(avgdl)

    def idf(n: int) -> float:
        return math.log(1 + (n_docs - n + 0.5) / (n + 0.5))

    def term(tf: int, dl: int, n: int) -> float:
        return idf(n) * tf * (1.5 + 1) / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl))

    # "cat": in a (tf 1) and c (tf 2), n = 2; "dog": in b and c, n = 2.
    expected = {
        "a#0": term(1, 3, 2),
        "b#0": term(1, 2, 2),
        "c#0": term(2, 4, 2) + term(1, 4, 2),
    }
    hits = index.search("Cat dog", k=None)
    assert [h.chunk_id for h in hits] == sorted(expected, key=lambda cid: -expected[cid])
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.chunk_id], rel=1e-12)
    assert index.scores("cat dog") == pytest.approx(expected, rel=1e-12)
    # A term present in every chunk still scores positive with this idf.
    assert idf(3) > 0


def test_repeated_query_terms_count_twice() -> None:
    index = BM25Index([C("x#0", "x", "apple pie"), C("y#0", "y", "banana")])
    once = index.search("apple")[0].score
    assert index.search("apple apple")[0].score == pytest.approx(2 * once)


def test_ties_are_broken_by_chunk_id() -> None:
    # Same text, so identical scores; insertion order deliberately not sorted.
    chunks = [C("m#1", "m", "same words"), C("b#0", "b", "same words"), C("m#0", "m", "same words")]
    hits = BM25Index(chunks).search("words", k=None)
    assert [h.chunk_id for h in hits] == ["b#0", "m#0", "m#1"]
    assert len({h.score for h in hits}) == 1
    assert BM25Index(chunks).search("words", k=2) == hits[:2]


def test_hits_carry_document_ids_and_non_matching_chunks_are_left_out() -> None:
    index = BM25Index([C("d1#0", "d1", "alpha beta"), C("d2#0", "d2", "gamma")])
    assert [(h.chunk_id, h.document_id) for h in index.search("alpha")] == [("d1#0", "d1")]
    assert index.search("zeta") == []
    assert index.search("") == []
    assert index.search("alpha", k=0) == []
    assert index.get("d2#0").text == "gamma"
    assert len(index) == 2 and index.vocabulary_size == 3


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate chunk id"):
        BM25Index([C("a#0", "a", "x"), C("a#0", "a", "y")])
    with pytest.raises(ValueError):
        BM25Index([C("a#0", "a", "x")]).search("x", k=-1)


def test_empty_index_and_token_free_chunks() -> None:
    assert BM25Index[C]([]).search("anything") == []
    index = BM25Index([C("p#0", "p", "!!! ..."), C("q#0", "q", "word")])
    assert [h.chunk_id for h in index.search("word")] == ["q#0"]


def test_index_over_real_chunks() -> None:
    text = "Refunds take 14 days.\n\nShipping is free over 50 euros.\n\nReturns need a receipt."
    chunks = chunk_text(text, "faq.txt", chunk_size=35, chunk_overlap=0)
    assert len(chunks) == 3
    hits = BM25Index(chunks).search("how long do refunds take", k=1)
    assert hits == [Hit("faq.txt#0", "faq.txt", hits[0].score)]
    assert hits[0].score > 0


def brute_force(chunks: list[C], query: str) -> dict[str, float]:
    """Textbook BM25 over every chunk, written independently of the index."""
    docs = [Counter(tokenize(c.text)) for c in chunks]
    lengths = [sum(d.values()) for d in docs]
    avgdl = sum(lengths) / len(lengths)
    out: dict[str, float] = {}
    for chunk, tf_map, dl in zip(chunks, docs, lengths, strict=True):
        total = 0.0
        for term in tokenize(query):
            tf = tf_map.get(term, 0)
            if tf:
                n = sum(1 for d in docs if term in d)
                w = math.log(1 + (len(docs) - n + 0.5) / (n + 0.5))
                total += w * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
        if total:
            out[chunk.id] = total
    return out


VOCAB = st.sampled_from(["a", "b", "c", "dd", "Ee", "ff", "é", "1"])


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(st.lists(VOCAB, min_size=1, max_size=12).map(" ".join), min_size=1, max_size=15),
    query=st.lists(VOCAB, max_size=5).map(" ".join),
)
def test_index_agrees_with_brute_force(texts: list[str], query: str) -> None:
    chunks = [C(f"d{i % 3}#{i}", f"d{i % 3}", t) for i, t in enumerate(texts)]
    expected = brute_force(chunks, query)
    hits = BM25Index(chunks).search(query, k=None)
    assert {h.chunk_id: h.score for h in hits} == pytest.approx(expected, rel=1e-9)
    keys = [(-h.score, h.chunk_id) for h in hits]
    assert keys == sorted(keys)


def test_sparse_and_dense_accumulation_agree_with_brute_force() -> None:
    # 40 chunks: a rare term touches 1 posting (sparse path), a common one all (dense path).
    chunks = [
        C(f"d#{i:02d}", "d", f"common filler {'rare ' if i == 7 else ''}w{i % 5}")
        for i in range(40)
    ]
    index = BM25Index(chunks)
    for query in ("rare", "common w3", "rare w1 rare", "filler"):
        assert index.scores(query) == pytest.approx(brute_force(chunks, query), rel=1e-12)
    assert [h.chunk_id for h in index.search("rare")] == ["d#07"]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_fast_path_matches_the_general_rule(text: str) -> None:
    import re

    assert tokenize(text) == [t.lower() for t in re.findall(r"[^\W_]+", text)]
