"""Answer metrics: SQuAD v1.1 rules with their quirks, ROUGE-L, completeness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from pytest_ragproof.metrics import (
    STOPWORDS,
    completeness,
    exact_match,
    rouge_l,
    squad_normalize,
    token_f1,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   apple,  a pear ", "apple pear"),
        ("theater", "theater"),  # articles only as whole words
        ("the-end", "theend"),  # punctuation goes before articles are looked for
        ("A.", ""),
        ("“Paris”", "“paris”"),  # string.punctuation is ASCII only
        ("Über THE top", "über top"),
    ],
)
def test_squad_normalization(text: str, normalized: str) -> None:
    assert squad_normalize(text) == normalized


@pytest.mark.parametrize(
    ("answer", "expected", "em", "f1"),
    [
        ("The Eiffel Tower!", "eiffel tower", 1.0, 1.0),
        # pred cat sat on mat / ref cat on mat: P 3/4, R 1 -> F1 6/7
        ("the cat sat on the mat", "a cat on a mat", 0.0, 6 / 7),
        # Counter intersection: three cats share only one with the reference.
        ("cat cat cat", "cat", 0.0, 0.5),
        ("Paris", "London", 0.0, 0.0),
        ("", "Paris", 0.0, 0.0),
        # Quirk: both normalize to "", an exact match with F1 0.
        ("The.", "a!", 1.0, 0.0),
        ("", "", 1.0, 0.0),
        # Curly quotes survive normalization, so these differ.
        ("“Paris”", "Paris", 0.0, 0.0),
        # P 1/2, R 1/1 -> 2/3
        ("in 1889", "1889", 0.0, 2 / 3),
    ],
)
def test_exact_match_and_token_f1(answer: str, expected: str, em: float, f1: float) -> None:
    assert exact_match(answer, expected) == em
    assert token_f1(answer, expected) == pytest.approx(f1, abs=1e-15)


SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
WORDS = st.sampled_from(["the", "cat", "Sat", "on", "MAT", "a", "dog", "42", "x1", "on-line"])
SEPARATORS = st.sampled_from([" ", "  ", ", ", ".", "-", "\n", "!? ", "_", "'"])


@st.composite
def ascii_sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, max_size=12))
    return "".join(w + draw(SEPARATORS) for w in words)


ASCII_TEXT = st.one_of(
    ascii_sentences(), st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
)


@settings(max_examples=400)
@given(ASCII_TEXT, ASCII_TEXT)
def test_rouge_l_equals_rouge_score_on_ascii(answer: str, expected: str) -> None:
    reference = SCORER.score(expected, answer)["rougeL"].fmeasure
    assert rouge_l(answer, expected) == pytest.approx(reference, abs=1e-12)


def test_rouge_l_hand_computed() -> None:
    # LCS of "police killed the gunman" / "police kill the gunman" is 3 of 4.
    assert rouge_l("police kill the gunman", "police killed the gunman") == pytest.approx(0.75)
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("a b c", "c b a") == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("answer", "expected", "ours", "theirs"),
    [
        # rouge-score drops ü/ö and sees "m ller" on both sides.
        ("Müller", "Möller", 0.0, 1.0),
        # rouge-score keeps no token of CJK text at all.
        ("東京タワー", "東京タワー", 1.0, 0.0),
        # Devanagari vowel signs are combining marks: still one word each.
        ("नमस्ते दुनिया", "नमस्ते दुनिया", 1.0, 0.0),
        # Decomposed and composed é are the same word; rouge-score sees "cafe"
        # against "caf".
        ("cafe\u0301 noir", "café noir", 1.0, 0.5),
        ("Zürich", "Zurich", 0.0, 0.0),
    ],
)
def test_rouge_l_is_unicode_aware(answer: str, expected: str, ours: float, theirs: float) -> None:
    assert rouge_l(answer, expected) == pytest.approx(ours)
    assert SCORER.score(expected, answer)["rougeL"].fmeasure == pytest.approx(theirs)


def test_tokenize() -> None:
    assert tokenize("It's 3PM, Zoë!") == ["it", "s", "3pm", "zoë"]
    assert tokenize("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]
    assert tokenize("snake_case") == ["snake", "case"]  # as rouge-score: _ separates


@pytest.mark.parametrize(
    ("answer", "expected", "share"),
    [
        ("Paris is France's capital", "The capital of France is Paris.", 1.0),
        ("Paris.", "The capital of France is Paris.", 1 / 3),
        ("nothing relevant", "The capital of France is Paris.", 0.0),
        # Distinct content words: repeating one does not count twice.
        ("paris paris paris", "Paris, Paris and Lyon", 1 / 2),
        # Only stopwords expected: fall back to all of its tokens.
        ("to be", "To be or not to be", 2 / 4),
    ],
)
def test_completeness(answer: str, expected: str, share: float) -> None:
    assert completeness(answer, expected) == pytest.approx(share)


def test_completeness_is_absent_without_expected_tokens() -> None:
    assert completeness("anything", "?!") is None


def test_stopwords_are_lowercase_words() -> None:
    assert all(w == w.lower() and w.isalpha() for w in STOPWORDS)
    assert {"the", "of", "is"} <= STOPWORDS
    assert "paris" not in STOPWORDS


@given(st.text(max_size=30), st.text(max_size=30))
def test_answer_metrics_are_in_unit_interval(answer: str, expected: str) -> None:
    for value in (
        exact_match(answer, expected),
        token_f1(answer, expected),
        rouge_l(answer, expected),
        completeness(answer, expected),
    ):
        assert value is None or 0.0 <= value <= 1.0 + 1e-12


def _lcs_by_table(a: list[str], b: list[str]) -> int:
    """The textbook dynamic programme, cell by cell."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            if x == y:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


TOKENS = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=70)


@settings(max_examples=500)
@given(TOKENS, TOKENS)
def test_bit_parallel_lcs_equals_the_table(a: list[str], b: list[str]) -> None:
    from pytest_ragproof.metrics.answer import _lcs_length

    assert _lcs_length(a, b) == _lcs_by_table(a, b)


@settings(max_examples=300)
@given(ASCII_TEXT | st.text(max_size=30), ASCII_TEXT | st.text(max_size=30))
def test_answer_metrics_equal_the_four_functions(answer: str, expected: str) -> None:
    from pytest_ragproof.metrics.answer import answer_metrics

    want = {
        "exact_match": exact_match(answer, expected),
        "token_f1": token_f1(answer, expected),
        "rouge_l": rouge_l(answer, expected),
    }
    share = completeness(answer, expected)
    if share is not None:
        want["completeness"] = share
    assert answer_metrics(answer, expected) == want


def _squad_script_f1(answer: str, expected: str) -> float:
    """The SQuAD v1.1 script's normalize_answer and f1_score, as it writes them."""
    import re
    import string
    from collections import Counter

    def normalize(s: str) -> str:
        s = s.lower()
        s = "".join(ch for ch in s if ch not in set(string.punctuation))
        s = re.sub(r"\b(a|an|the)\b", " ", s)
        return " ".join(s.split())

    prediction, truth = normalize(answer).split(), normalize(expected).split()
    common = Counter(prediction) & Counter(truth)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(truth)
    return (2 * precision * recall) / (precision + recall)


@settings(max_examples=400)
@given(ASCII_TEXT | st.text(max_size=30), ASCII_TEXT | st.text(max_size=30))
def test_token_f1_equals_the_squad_script(answer: str, expected: str) -> None:
    assert token_f1(answer, expected) == _squad_script_f1(answer, expected)
