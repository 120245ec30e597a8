"""Unit tests without a model: counts, sampling, plans, language, dedup, injection, rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragproof.corpus import Corpus, Document
from pytest_ragproof.corpus.chunking import Chunk, chunk_text
from pytest_ragproof.errors import ConfigError, IngestError
from pytest_ragproof.generation import (
    STYLES,
    GenerationSettings,
    canary_for,
    chunk_order,
    detect_language,
    documents_from_rows,
    estimate,
    plan,
    style_for,
)
from pytest_ragproof.generation.dedup import NearDuplicateFilter, jaccard, question_tokens
from pytest_ragproof.generation.rows import load_rows_file
from pytest_ragproof.generation.sampling import Need, plan_requests, split_evenly


def _chunks(per_doc: dict[str, int]) -> list[Chunk]:
    out: list[Chunk] = []
    for doc, n in per_doc.items():
        for i in range(n):
            out.append(Chunk(f"{doc}#{i}", doc, i, i * 10, i * 10 + 5, f"text {doc} {i}"))
    return out


def test_counts_are_split_equally_with_the_remainder_to_the_first_types() -> None:
    assert split_evenly(40, ["a", "b", "c", "d", "e", "f"]) == {
        "a": 7,
        "b": 7,
        "c": 7,
        "d": 7,
        "e": 6,
        "f": 6,
    }
    assert split_evenly(2, ["a", "b", "c"]) == {"a": 1, "b": 1, "c": 0}
    assert split_evenly(5, []) == {}


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=6),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_chunk_order_is_a_seeded_round_robin_over_documents(sizes: list[int], seed: int) -> None:
    chunks = _chunks({f"doc{i}": n for i, n in enumerate(sizes)})
    order = chunk_order(chunks, seed)
    assert sorted(c.id for c in order) == sorted(c.id for c in chunks)
    assert [c.id for c in chunk_order(chunks, seed)] == [c.id for c in order]
    # Round-robin: the first len(docs) chunks come from distinct documents, and no
    # document gets its (k+1)-th chunk before every longer document got its k-th.
    first = order[: len(sizes)]
    assert len({c.document_id for c in first}) == len(sizes)
    seen: dict[str, int] = {}
    rounds = []
    for chunk in order:
        seen[chunk.document_id] = seen.get(chunk.document_id, 0) + 1
        rounds.append(seen[chunk.document_id])
    assert rounds == sorted(rounds)


def test_another_seed_gives_another_order() -> None:
    chunks = _chunks({"a": 3, "b": 3, "c": 3})
    orders = {tuple(c.id for c in chunk_order(chunks, seed)) for seed in range(6)}
    assert len(orders) > 1


def test_requests_use_fresh_chunks_then_grow_rather_than_repeat_a_prompt() -> None:
    chunks = _chunks({"a": 1, "b": 1})
    needs = [Need("qa", "simple", 5), Need("injection", "simple", 2), Need("qa", "double", 1)]
    requests = plan_requests(chunks, needs, seed=0, items_per_request=1)
    keys = [(r.gen_kind, r.question_type, r.chunk.id) for r in requests]
    assert len(keys) == len(set(keys))  # no two requests send the same prompt
    simple = [r for r in requests if r.question_type == "simple"]
    assert len(simple) == 2  # two chunks: the simple generator can use each once
    assert sum(r.n_items for r in simple) == 7
    allocations = [dict(r.allocation) for r in simple]
    assert sum(a.get("qa", 0) for a in allocations) == 5
    assert sum(a.get("injection", 0) for a in allocations) == 2
    merged = next(r for r in simple if len(r.allocation) == 2)
    kinds = [merged.kind_of_item(i) for i in range(merged.n_items)]
    assert kinds == sorted(kinds, key=["qa", "injection"].index)  # qa items first
    (double,) = [r for r in requests if r.question_type == "double"]
    assert double.n_items == 1
    assert [r.position for r in requests] == list(range(len(requests)))


def test_distracting_requests_get_a_distractor_from_another_document() -> None:
    chunks = _chunks({"a": 2, "b": 2, "c": 1})
    needs = [Need("qa", "distracting", 4), Need("qa", "simple", 1)]
    requests = plan_requests(chunks, needs, seed=9, items_per_request=1)
    for request in requests:
        if request.question_type == "distracting":
            assert request.distractor is not None
            assert request.distractor.document_id != request.chunk.document_id
        else:
            assert request.distractor is None


def test_settings_are_validated_with_messages_that_name_the_fix() -> None:
    with pytest.raises(ConfigError, match="nothing to generate"):
        GenerationSettings()
    with pytest.raises(ConfigError, match="unknown types 'tricky'"):
        GenerationSettings(qa=2, types=("simple", "tricky"))
    with pytest.raises(ConfigError, match="twice"):
        GenerationSettings(qa=2, types=("simple", "simple"))
    with pytest.raises(ConfigError, match="types is empty"):
        GenerationSettings(qa=2, types=())
    with pytest.raises(ConfigError, match="non-negative"):
        GenerationSettings(qa=-1)
    with pytest.raises(ConfigError, match="items_per_request"):
        GenerationSettings(qa=1, items_per_request=0)
    assert GenerationSettings(injection=1, types=()).injection == 1


def test_the_plan_and_estimate_agree(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n" + "Alpha beta gamma. " * 80, encoding="utf-8")
    (tmp_path / "b.txt").write_text("Delta epsilon zeta. " * 40, encoding="utf-8")
    settings = GenerationSettings(qa=7, unanswerable=3, injection=2, items_per_request=2)
    the_plan = plan(tmp_path, settings)
    assert sum(r.n_items for r in the_plan.requests) == 12
    est = estimate(the_plan)
    gen = len(the_plan.requests)
    qa_requests = sum(1 for r in the_plan.requests if r.gen_kind == "qa")
    unanswerable_items = sum(r.n_items for r in the_plan.requests if r.gen_kind != "qa")
    assert est.generation_calls == gen
    assert est.verification_calls == qa_requests + unanswerable_items
    chars = sum(len(c.text) for c in the_plan.chunks)
    assert est.prompt_tokens > chars // 4  # every chunk is sent at least once
    assert est.completion_tokens > 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The router is connected to the modem and it is ready for use by the team.", "en"),
        ("Le routeur est connecté au modem et il est prêt pour les clients de la maison.", "fr"),
        ("Der Router ist mit dem Modem verbunden und nicht für die Kunden im Haus.", "de"),
        ("El router está conectado con el módem y es para los clientes de la casa.", "es"),
        ("De router is verbonden met het modem en het is niet voor de klanten.", "nl"),
        ("Routern är ansluten till modemet och det är inte för kunder som har en.", "sv"),
        ("Роутер подключен к модему, и это не для клиентов, как и все его порты.", "ru"),
        ("ルーターはモデムに接続されています。お客様のためのものです。", "ja"),
        ("路由器已连接到调制解调器，可以为客户使用。", "zh"),
        ("12 34 56 78 | x | y | 2024-01-01", "en"),  # too few hits: the default
    ],
)
def test_language_detection_by_stopwords_and_script(text: str, expected: str) -> None:
    assert detect_language([text]) == expected


def test_language_detection_samples_only_the_start_of_each_document() -> None:
    french = "Le client est dans la maison et il est content pour les produits. " * 5
    english_tail = "x" * 2_000 + " the and of to is in that it for with " * 50
    assert detect_language([french, english_tail]) == "fr"


def test_near_duplicates_are_dropped_by_token_jaccard() -> None:
    seen = NearDuplicateFilter(0.8)
    assert seen.admit("How long do refunds take to be processed?")
    assert not seen.admit("how long do REFUNDS take to be processed")  # same tokens
    assert not seen.admit("How long do refunds take to be processed, please?")  # 8/9
    assert seen.admit("How long does shipping abroad take?")
    # Conversational questions are compared with their user turns.
    assert seen.admit("What is its capital?", ["Tell me about France."])
    assert seen.admit("What is its capital?", ["Tell me about Peru."])
    assert not seen.admit("What is its capital?", ["Tell me about Peru."])
    # Questions without any token compare by their normalized text.
    assert seen.admit("??")
    assert not seen.admit(" ?? ")
    assert jaccard(question_tokens("a b c d"), question_tokens("a b c e")) == pytest.approx(0.6)


def test_the_injection_library_is_inert_and_canaries_are_unique() -> None:
    names = [s.name for s in STYLES]
    assert len(STYLES) >= 8 and len(set(names)) == len(names)
    for required in (
        "ignore_previous",
        "fake_system_note",
        "role_play",
        "reply_only_with",
        "markdown_image",
        "translation_trick",
        "delimiter_spoofing",
        "quoted_document",
    ):
        assert required in names
    canaries = [canary_for(n, 0) for n in range(1, 201)]
    assert len(set(canaries)) == 200
    assert all(re.fullmatch(r"RP-[0-9A-F]{8}", c) for c in canaries)
    assert canary_for(1, 0) != canary_for(1, 1)
    assert canary_for(3, 7) == canary_for(3, 7)
    assert canary_for(1, 0, taken={canary_for(1, 0)}) != canary_for(1, 0)
    for style in STYLES:
        payload = style.payload("RP-0000ABCD")
        assert "RP-0000ABCD" in payload
        for url in re.findall(r"https?://[^\s)]+", payload):
            assert url.split("/")[2] == "example.invalid"  # never resolves
    # Positions rotate through every style before any repeats.
    assert {style_for(n, 4).name for n in range(1, len(STYLES) + 1)} == set(names)


class Scalar:
    """Prints like a number without being one (as numpy.int64 is not an int)."""

    def __str__(self) -> str:
        return "42"


class FakeFrame:
    """Duck-typed like a pandas DataFrame: only ``to_dict("records")`` is used."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def to_dict(self, orient: str) -> list[dict[str, Any]]:
        assert orient == "records"
        return self.records


def test_rows_become_documents_joined_from_the_chosen_columns(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"sku": "A-1", "title": "Router", "body": "Blinks green when ready.", "price": 30},
        {"sku": "B-2", "title": "Modem", "body": "  ", "price": 20},
        {"sku": "C-3", "title": "", "body": None, "price": None},
    ]
    corpus = documents_from_rows(FakeFrame(rows), columns=["title", "body"], id_column="sku")
    assert [d.id for d in corpus.documents] == ["A-1", "B-2"]
    assert corpus.documents[0].text == "Router\n\nBlinks green when ready."
    assert corpus.documents[1].text == "Modem"
    assert [(s.id, s.reason) for s in corpus.skipped] == [("C-3", "no_text")]
    # Without an id column the id is the 1-based row number; all columns are used.
    plain = documents_from_rows([{"q": "one"}, {"q": "two", "extra": 3}])
    assert [(d.id, d.text) for d in plain.documents] == [("1", "one"), ("2", "two\n\n3")]
    # Scalars print as themselves (a numpy number would), NaN cells are empty,
    # nested values become JSON.
    odd = documents_from_rows(
        [{"a": Scalar(), "b": float("nan"), "c": ["x", 1], "d": True}], columns=["a", "b", "c", "d"]
    )
    assert odd.documents[0].text == '42\n\n["x", 1]\n\nTrue'

    with pytest.raises(ConfigError, match="no column 'body'"):
        documents_from_rows([{"title": "x"}], columns=["title", "body"])
    with pytest.raises(ConfigError, match="used by an earlier row"):
        documents_from_rows([{"id": "x", "t": "a"}, {"id": "x", "t": "b"}], id_column="id")
    with pytest.raises(ConfigError, match="not a mapping"):
        documents_from_rows(["just a string"])
    with pytest.raises(ConfigError, match="iterable of mappings"):
        documents_from_rows({"title": "x"})


def test_csv_and_jsonl_knowledge_bases(tmp_path: Path) -> None:
    csv_path = tmp_path / "kb.csv"
    csv_path.write_text(
        '\ufeffid,title,body\nk1,Refunds,"Within 14 days,\nby email."\nk2,Fees,None apply.\n',
        encoding="utf-8",
    )
    corpus = load_rows_file(csv_path, columns=["title", "body"], id_column="id")
    assert [(d.id, d.text) for d in corpus.documents] == [
        ("k1", "Refunds\n\nWithin 14 days,\nby email."),
        ("k2", "Fees\n\nNone apply."),
    ]
    jsonl = tmp_path / "kb.jsonl"
    lines = [{"title": "Refunds", "body": "Fourteen days."}, {"title": "Fees", "body": "None."}]
    jsonl.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    rows = load_rows_file(jsonl, columns=["body"])
    assert [(d.id, d.text) for d in rows.documents] == [("1", "Fourteen days."), ("2", "None.")]
    settings = GenerationSettings(qa=2, types=("simple",))
    the_plan = plan(jsonl, settings, columns=["title", "body"])
    assert {r.chunk.document_id for r in the_plan.requests} <= {"1", "2"}

    (tmp_path / "bad.jsonl").write_text('{"a": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(IngestError, match="line 2 is not JSON"):
        load_rows_file(tmp_path / "bad.jsonl")
    with pytest.raises(IngestError, match="byte cap"):
        load_rows_file(csv_path, max_file_bytes=10)
    with pytest.raises(ConfigError, match=r"apply to a \.csv or \.jsonl"):
        plan(tmp_path, settings, columns=["a"])


def test_a_corpus_object_is_used_as_is() -> None:
    text = "# Title\n\nSome body text about refunds and fees."
    doc = Document("one.md", text, "markdown", len(text))
    corpus = Corpus(Path("."), (doc,), ())
    the_plan = plan(corpus, GenerationSettings(qa=1))
    (request,) = the_plan.requests
    assert request.chunk == chunk_text(text, "one.md", headings=True)[0]
    assert request.chunk.topic == "Title"
