"""Chunking: the span invariant and determinism by property, and the algorithm by example."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragproof.corpus import load_corpus
from pytest_ragproof.corpus.chunking import Chunk, chunk_corpus, chunk_document, chunk_text
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.textnorm import normalize_body


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    format: str


WORDS = st.sampled_from(
    [
        "alpha",
        "beta",
        "Gamma",
        "δέλτα",
        "東京",
        "x1",
        "3.14",
        "e.g.",
        "end.",
        "why?",
        "wow!",
        "«quote»",
    ]
)
SEPARATORS = st.sampled_from(
    [" ", " ", " ", "\n", "\n\n", "\r\n", "\r\n\r\n", "\t", ". ", "  \n \n"]
)
HEADINGS = st.builds(
    lambda level, title: "\n" + "#" * level + " " + title + "\n",
    st.integers(1, 7),
    st.sampled_from(["Intro", "Setup", "FAQ ##", "", "Deep dive"]),
)
FENCES = st.sampled_from(["\n```\n# not a heading\n```\n", "\n~~~~\n## code\n~~~~\n"])
PIECES = st.one_of(WORDS, SEPARATORS, HEADINGS, FENCES, st.text(max_size=8))


@st.composite
def documents(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(PIECES, max_size=120)))


@st.composite
def settings_pairs(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(1, 120))
    return size, draw(st.integers(0, size // 2))


def check_invariants(text: str, chunks: list[Chunk], doc_id: str, size: int) -> None:
    previous_start = previous_end = -1
    for n, chunk in enumerate(chunks):
        assert chunk.id == f"{doc_id}#{n}" and chunk.index == n
        assert chunk.document_id == doc_id
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text.strip() == chunk.text != ""
        assert len(chunk.text) <= size
        # Overlap may repeat text, but every chunk brings something new.
        assert chunk.start > previous_start and chunk.end > previous_end
        previous_start, previous_end = chunk.start, chunk.end


def covered(text: str, chunks: list[Chunk]) -> bool:
    """Every non-whitespace character lies inside some chunk."""
    mask = [False] * len(text)
    for c in chunks:
        mask[c.start : c.end] = [True] * (c.end - c.start)
    return all(m or ch.isspace() for m, ch in zip(mask, text, strict=True))


@settings(max_examples=300, deadline=None)
@given(raw=documents(), pair=settings_pairs(), fmt=st.sampled_from(["markdown", "text", "docx"]))
def test_span_invariant_coverage_and_determinism(raw: str, pair: tuple[int, int], fmt: str) -> None:
    size, overlap = pair
    text = normalize_body(raw)  # CRLF and lone CR become LF before chunking
    assert "\r" not in text
    doc = Doc("d.md", text, fmt)
    chunks = chunk_document(doc, chunk_size=size, chunk_overlap=overlap)
    check_invariants(text, chunks, "d.md", size)
    assert covered(text, chunks)
    assert chunk_document(Doc("d.md", text, fmt), chunk_size=size, chunk_overlap=overlap) == chunks


def test_same_corpus_twice_gives_identical_chunks(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.md").write_bytes(
        b"# T\r\n\r\nSome text. More text.\r\n## U\r\nbody " * 40
    )
    (tmp_path / "two.txt").write_text("Sentence number one. " * 200)
    first = chunk_corpus(load_corpus(tmp_path).documents, chunk_size=300, chunk_overlap=50)
    second = chunk_corpus(load_corpus(tmp_path).documents, chunk_size=300, chunk_overlap=50)
    assert first == second
    assert [c.id for c in first][:2] == ["a/one.md#0", "a/one.md#1"]
    assert {c.document_id for c in first} == {"a/one.md", "two.txt"}


def test_heading_paths_follow_nesting_and_skip_fenced_code() -> None:
    text = (
        "Preamble text.\n"
        "# Guide\n"
        "## Install ##\n"
        "Run the installer.\n"
        "```\n# not a heading\n```\n"
        "### Linux\n"
        "Use apt.\n"
        "## Usage\n"
        "Call it.\n"
        "# Appendix\n"
        "The end."
    )
    chunks = chunk_text(text, "g.md", headings=True, chunk_size=1000, chunk_overlap=0)
    assert [(c.heading_path, c.text.splitlines()[0]) for c in chunks] == [
        ((), "Preamble text."),
        (("Guide", "Install"), "# Guide"),  # heading-only "# Guide" merged into its child
        (("Guide", "Install", "Linux"), "### Linux"),
        (("Guide", "Usage"), "## Usage"),
        (("Appendix",), "# Appendix"),
    ]
    assert "# not a heading" in chunks[1].text
    assert chunks[2].topic == "Guide > Install > Linux"
    assert chunks[0].topic is None


def test_plain_text_ignores_hash_lines() -> None:
    chunks = chunk_text("# comment\nbody", "a.txt", headings=False, chunk_size=100)
    assert [(c.text, c.heading_path) for c in chunks] == [("# comment\nbody", ())]


def test_prefers_paragraph_then_sentence_then_hard_cut() -> None:
    para = "First paragraph is here. It has two sentences.\n\nSecond paragraph follows."
    chunks = chunk_text(para, "p", chunk_size=60, chunk_overlap=0)
    assert [c.text for c in chunks] == [
        "First paragraph is here. It has two sentences.",
        "Second paragraph follows.",
    ]
    sentences = "One short sentence here. Another one comes after it. And a third one."
    chunks = chunk_text(sentences, "s", chunk_size=40, chunk_overlap=0)
    assert [c.text for c in chunks] == [
        "One short sentence here.",
        "Another one comes after it.",
        "And a third one.",
    ]
    words = "no sentence ends anywhere in this rather long line of words"
    chunks = chunk_text(words, "w", chunk_size=30, chunk_overlap=0)
    assert [c.text for c in chunks] == [
        "no sentence ends anywhere in",
        "this rather long line of words",
    ]
    chunks = chunk_text("x" * 25, "h", chunk_size=10, chunk_overlap=0)
    assert [(c.start, c.end) for c in chunks] == [(0, 10), (10, 20), (20, 25)]


def test_overlap_starts_at_a_sentence_inside_the_window() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota kappa lambda mu."
    chunks = chunk_text(text, "o", chunk_size=40, chunk_overlap=20)
    assert chunks[0].text == "Alpha beta gamma. Delta epsilon zeta."
    assert chunks[1].text.startswith("Delta epsilon zeta.")
    assert chunks[1].start < chunks[0].end


def test_crlf_document_spans_index_the_normalized_text(tmp_path: Path) -> None:
    (tmp_path / "w.md").write_bytes(b"# Title\r\n\r\nLine one.\r\nLine two.\r\n")
    (doc,) = load_corpus(tmp_path).documents
    (chunk,) = chunk_document(doc)
    assert chunk.text == "# Title\n\nLine one.\nLine two." == doc.text[chunk.start : chunk.end]


def test_default_overlap_is_100_capped_at_half_the_size() -> None:
    text = " ".join(f"w{i:03d}" for i in range(600))  # 2,999 characters, no sentences
    big = chunk_text(text, "t")
    assert big[1].start == big[0].end - 99  # the first word start in the last 100 characters
    small = chunk_text(text, "t", chunk_size=20)
    assert small[0].text == "w000 w001 w002 w003"
    assert small[1].text.startswith("w002")  # within 10 characters of the end


def test_whitespace_only_text_gives_no_chunks() -> None:
    assert chunk_text(" \n\t\n ", "w") == []


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 6), (10, -1), (True, 0), (10, 1.0)])
def test_bad_settings_are_config_errors(size: object, overlap: object) -> None:
    with pytest.raises(ConfigError):
        chunk_text("text", "t", chunk_size=size, chunk_overlap=overlap)  # type: ignore[arg-type]
