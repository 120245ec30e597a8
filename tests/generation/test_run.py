"""End to end through the CLI and litellm's real HTTP path: a mixed-format corpus,
the output contract, determinism by seed, and the byte-identical cached re-run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_ragproof import freeze, load_dataset
from pytest_ragproof.cli import main
from pytest_ragproof.corpus import load_corpus
from pytest_ragproof.generation import GenerationSettings, chunk_order, generate, plan
from tests.generation.conftest import MODEL, MakeClient, write_text_corpus
from tests.generation.fake_model import FakeModel
from tests.ingest._files import make_docx, make_pdf
from tests.llm_stub import StubServer

MAX_BYTES = 50_000


@pytest.fixture
def mixed_corpus(tmp_path: Path) -> Path:
    """Markdown, text, PDF and DOCX documents plus three files that must be skipped."""
    root = write_text_corpus(tmp_path / "corpus")
    (root / "manual.pdf").write_bytes(
        make_pdf(
            (
                "Warranty claims need the original receipt and the serial number.",
                "Batteries are covered for twelve months after purchase.",
            )
        )
    )
    make_docx(root / "handbook.docx")
    (root / ".hidden.md").write_text("# Secret\n\nNever read this.", encoding="utf-8")
    (root / "notes.xyz").write_text("unknown format", encoding="utf-8")
    (root / "huge.txt").write_text("word " * 12_000, encoding="utf-8")
    return root


def _cli(corpus: Path, out: Path, stub: StubServer, cache: Path, *extra: str) -> int:
    return main(
        [
            "generate",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--qa",
            "12",
            "--unanswerable",
            "4",
            "--injection",
            "3",
            "--seed",
            "7",
            "--model",
            MODEL,
            "--api-base",
            stub.url,
            "--cache-dir",
            str(cache),
            "--max-file-bytes",
            str(MAX_BYTES),
            *extra,
        ]
    )


def test_full_run_writes_a_reviewable_dataset_that_loads_and_freezes(
    mixed_corpus: Path,
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out" / "dataset.jsonl"
    cache = tmp_path / "cache"
    assert _cli(mixed_corpus, out, llm_stub, cache) == 0
    err = capsys.readouterr().err
    assert "requested" in err and "shortfall" in err  # the summary table
    assert "generate: " in err and "requests" in err  # progress lines

    dataset = load_dataset(out)
    cases = list(dataset)
    assert [c.kind for c in cases] == ["qa"] * 12 + ["unanswerable"] * 4 + ["injection"] * 3
    assert [c.id for c in cases[:2]] == ["gen-7-qa-1", "gen-7-qa-2"]
    assert cases[-1].id == "gen-7-injection-3"
    # --qa 12 over six types: two each, in type order.
    assert [c.question_type for c in cases[:12:2]] == [
        "simple",
        "complex",
        "distracting",
        "situational",
        "double",
        "conversational",
    ]
    assert {c.question_type for c in cases[12:16]} == {"simple", "out_of_scope"}

    corpus = load_corpus(mixed_corpus, max_file_bytes=MAX_BYTES)
    formats = set()
    for case in cases:
        prov = case.provenance
        assert prov is not None and prov.span is not None and prov.usage is not None
        assert case.synthetic and case.review_status == "pending"
        assert prov.model == MODEL and prov.seed == 7
        assert prov.confidence is not None and 0.0 <= prov.confidence <= 1.0
        assert prov.usage.prompt_tokens > 0 and prov.usage.completion_tokens > 0
        doc = corpus.document(prov.document_id)
        formats.add(doc.format)
        start, end = prov.span
        assert prov.chunk_id is not None and prov.chunk_id.startswith(doc.id + "#")
        if case.kind == "unanswerable":
            assert case.expected_source_ids == () and case.expected_answer is None
            assert case.metadata["checked_chunk_ids"]
        else:
            assert case.expected_source_ids == (doc.id,)
            assert case.expected_answer
            assert case.reference_contexts == (doc.text[start:end],)
        if case.question_type == "conversational":
            roles = [m.role for m in case.conversation_history]
            assert roles == ["user", "assistant"]
        if case.kind == "injection":
            assert case.canary and case.canary.startswith("RP-")
            assert case.adversarial_payload and case.canary in case.adversarial_payload
    assert len({c.canary for c in cases if c.kind == "injection"}) == 3
    topics = [c.metadata.get("topic") for c in cases if c.provenance.document_id == "billing.md"]  # type: ignore[union-attr]
    assert all(t and t.startswith("Billing") for t in topics)
    assert formats == {"markdown", "text", "pdf", "docx"}
    raw = out.read_text(encoding="utf-8")
    # No timestamps inside cases: nothing that looks like a date or a time.
    assert re.search(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}", raw) is None

    summary = json.loads((out.parent / "dataset.jsonl.summary.json").read_text("utf-8"))
    skipped = {s["id"]: s["reason"] for s in summary["corpus"]["skipped"]}
    assert skipped == {
        ".hidden.md": "hidden",
        "notes.xyz": "unknown_extension",
        "huge.txt": "too_large",
    }
    assert summary["requested"] == summary["written"] == 19 and summary["shortfall"] == 0
    assert summary["language"] == "en" and summary["language_source"] == "detected"
    assert summary["llm"]["calls"] == summary["llm"]["requests"] == llm_stub.request_count
    assert summary["llm"]["prompt_tokens"] == 11 * llm_stub.request_count

    frozen = freeze(out)
    assert load_dataset(frozen).sha256 == dataset.sha256


def test_cached_rerun_is_byte_identical_and_makes_no_request(
    mixed_corpus: Path,
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path / "cache"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert _cli(mixed_corpus, first, llm_stub, cache, "-q") == 0
    sent = llm_stub.request_count
    assert sent > 0
    assert _cli(mixed_corpus, second, llm_stub, cache, "-q") == 0
    assert llm_stub.request_count == sent
    assert first.read_bytes() == second.read_bytes()
    summary = json.loads((tmp_path / "second.jsonl.summary.json").read_text("utf-8"))
    assert summary["llm"]["requests"] == 0
    assert summary["llm"]["cache_hits"] == summary["llm"]["calls"] > 0
    assert capsys.readouterr().err == ""  # -q: no progress, no table


def test_same_seed_samples_the_same_chunks_and_another_seed_differs(
    mixed_corpus: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    def chunk_ids(seed: int) -> list[str]:
        settings = GenerationSettings(qa=6, unanswerable=2, seed=seed, items_per_request=1)
        result = generate(
            mixed_corpus, settings, client=make_client(enabled=False), max_file_bytes=MAX_BYTES
        )
        return [c.provenance.chunk_id for c in result.cases]  # type: ignore[union-attr,misc]

    first, again, other = chunk_ids(3), chunk_ids(3), chunk_ids(4)
    assert len(first) == 8
    assert first == again
    assert first != other
    # The plan, without calls, agrees with what was generated.
    settings = GenerationSettings(qa=6, unanswerable=2, seed=3, items_per_request=1)
    planned = plan(mixed_corpus, settings, max_file_bytes=MAX_BYTES)
    assert [r.chunk.id for r in planned.requests] == first
    assert chunk_order(planned.chunks, 3) != chunk_order(planned.chunks, 4)
