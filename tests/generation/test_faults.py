"""Faults injected by the stub (by request content) are discarded and counted by reason,
and provider messages never surface."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_ragproof.generation import (
    GeneratedItem,
    GenerationSettings,
    ItemRequest,
    QuestionGenerator,
    generate,
)
from pytest_ragproof.generation.summary import ProgressPrinter, render_table
from tests.generation.conftest import MakeClient, write_text_corpus
from tests.generation.fake_model import SECRET, FakeModel
from tests.llm_stub import Action, StubServer, reply

# One single-chunk document per behaviour; with --qa 12, one type and one item per
# request, the round-robin sends each document exactly once.
FAULT_DOCS = {
    "ok1.txt": "Refunds are processed within fourteen days of the request.",
    "ok2.txt": "Invoices are issued monthly and list every subscription separately.",
    "r429.txt": "FAULT_429 Parcels travel with regional carriers across the country.",
    "e500.txt": "FAULT_500 Batteries are covered for twelve months after purchase.",
    "hang.txt": "FAULT_HANG Warranty claims need the original receipt and serial number.",
    "malformed.txt": "FAULT_MALFORMED The router resets after holding the button.",
    "truncated.txt": "FAULT_TRUNCATED Tracking numbers arrive once parcels leave.",
    "count.txt": "FAULT_COUNT Gift cards never expire and can be combined freely.",
    "verifyno.txt": "VERIFY_NO Support answers chats between nine and five daily.",
    "wrong.txt": "WRONG_ANSWER Accounts are deleted ninety days after closing.",
    "dup1.txt": "DUPKEY The first document about duplicate policy wording.",
    "dup2.txt": "DUPKEY The second document about duplicate policy wording.",
}


def test_every_fault_is_discarded_and_counted_by_reason(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    corpus = write_text_corpus(tmp_path / "faults", FAULT_DOCS)
    settings = GenerationSettings(qa=12, types=("simple",), items_per_request=1, seed=5)
    client = make_client(timeout_s=0.5, max_retries=2, concurrency=6, enabled=False)
    stream = io.StringIO()
    progress = ProgressPrinter(stream, 12, client.stats, interval_s=0.0)
    result = generate(corpus, settings, client=client, on_outcome=progress)

    summary = result.summary
    assert summary["discarded"] == {
        "invalid_output": 2,  # malformed and truncated, each after one repair
        "count_mismatch": 1,
        "not_answerable": 1,
        "wrong_answer": 1,
        "duplicate": 1,
        "provider_error": 2,  # HTTP 500 and timeouts past the retries
    }
    assert summary["written"] == 4 and summary["shortfall"] == 8
    (row,) = summary["by_kind_and_type"]
    assert (row["requested"], row["written"], row["shortfall"]) == (12, 4, 8)
    written_docs = sorted(c.provenance.document_id for c in result.cases)  # type: ignore[union-attr]
    assert written_docs[:3] == ["dup1.txt", "ok1.txt", "ok2.txt"] or written_docs[:3] == [
        "dup2.txt",
        "ok1.txt",
        "ok2.txt",
    ]
    assert "r429.txt" in written_docs  # a 429 is retried, not discarded

    llm = summary["llm"]
    assert llm["retries"] == {"rate_limit": 1, "server_error": 2, "timeout": 2}
    assert llm["repairs"] == 2
    assert llm["failures"] == {
        "InvalidOutputError": 2,
        "LLMTimeoutError:Timeout": 1,
        "ProviderError:InternalServerError": 1,
    }
    # What the stub answered matches: 12 generation requests + 3 retries of the 500,
    # 3 attempts of the hang, 1 of the 429, 2 repairs; verification for the 7
    # requests whose generation succeeded with the right count (ok x2, 429, the two
    # verification faults, the two duplicates: duplicates are found after verification).
    assert fake.calls["verify_qa"] == 7
    assert fake.calls["gen"] == 12 + 2 + 2 + 1 + 2
    assert llm["requests"] == llm_stub.request_count

    shown = render_table(summary) + stream.getvalue() + json.dumps(summary)
    assert "generate: 12/12 requests" in stream.getvalue()
    assert SECRET not in shown and "upstream failed" not in shown
    for case in result.cases:
        assert SECRET not in case.model_dump_json()


def test_unanswerable_questions_answered_by_the_top_contexts_are_discarded(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    corpus = write_text_corpus(
        tmp_path / "scope",
        {
            "a.txt": "SCOPE_YES Shipping abroad takes ten working days by air freight.",
            "b.txt": "Returns are accepted within thirty days with the original packaging.",
        },
    )
    settings = GenerationSettings(
        unanswerable=2, unanswerable_types=("simple",), items_per_request=1, top_k=2
    )
    result = generate(corpus, settings, client=make_client(enabled=False))
    assert result.summary["discarded"] == {"answerable": 1}
    (case,) = result.cases
    assert case.kind == "unanswerable" and case.provenance is not None
    assert case.provenance.document_id == "b.txt"
    assert fake.calls["verify_scope"] == 2
    # The checked contexts are the BM25 top-k of the whole corpus, recorded for review.
    assert 1 <= len(case.metadata["checked_chunk_ids"]) <= 2
    scope_bodies = [r for r in llm_stub.requests if "retrieved for it" in json.dumps(r)]
    assert len(scope_bodies) == 2


class GlossaryTerms(BaseModel):
    terms: list[dict[str, str]]


class GlossaryGenerator:
    """A custom generator: asks for glossary terms and turns them into questions."""

    name = "glossary"
    kind = "qa"
    question_types = ("simple",)
    prompt_version = "test.glossary/1"
    schema = GlossaryTerms

    def build_messages(self, request: ItemRequest) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": f"GLOSSARY: list exactly {request.n_items} terms."},
            {"role": "user", "content": request.chunk.text},
        ]

    def parse_items(self, reply: BaseModel, request: ItemRequest) -> list[GeneratedItem]:
        assert isinstance(reply, GlossaryTerms)
        return [
            GeneratedItem(
                f"What does {t['term']} mean here?", t["definition"], metadata={"term": t["term"]}
            )
            for t in reply.terms
        ]


def test_a_custom_question_generator_replaces_the_builtin_one(
    text_corpus: Path, llm_stub: StubServer, make_client: MakeClient
) -> None:
    fake = FakeModel()

    def handler(body: dict[str, Any]) -> Action:
        system = str(body["messages"][0]["content"])
        if system.startswith("GLOSSARY"):
            text = str(body["messages"][1]["content"])
            word = text.split()[1].strip(".#")
            return reply(json.dumps({"terms": [{"term": word, "definition": f"{word} def"}]}))
        return fake(body)

    llm_stub.set_handler(handler)
    generator = GlossaryGenerator()
    assert isinstance(generator, QuestionGenerator)
    settings = GenerationSettings(
        qa=4, types=("simple", "complex"), items_per_request=1, generators=(generator,)
    )
    result = generate(text_corpus, settings, client=make_client(enabled=False))
    simple = [c for c in result.cases if c.question_type == "simple"]
    complex_ = [c for c in result.cases if c.question_type == "complex"]
    assert len(simple) == 2 and len(complex_) == 2
    for case in simple:
        assert case.question.startswith("What does ") and case.metadata["generator"] == "glossary"
        assert case.metadata["term"]
        assert case.provenance is not None
        assert case.provenance.prompt_version.startswith("test.glossary/1+")
    assert all(c.metadata["generator"] == "builtin.qa.complex" for c in complex_)
    # Custom items are verified like built-in ones.
    assert fake.calls["verify_qa"] == 4
    assert result.summary["settings"]["custom_generators"] == ["glossary"]


class EchoesRepair:
    """The fake model, except that a generation request for a FAULT_ECHO passage is
    answered with prose, and its repair with valid JSON that copies the repair request
    into the conversation history and the answer (as a confused model did)."""

    def __init__(self, fake: FakeModel) -> None:
        self.fake = fake

    def __call__(self, body: dict[str, Any]) -> Action:
        messages = body["messages"]
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        if "FAULT_ECHO" not in first_user or "You write test questions" not in str(messages[0]):
            return self.fake(body)
        if messages[-1]["role"] != "user" or messages[-1]["content"] == first_user:
            return reply("Sure! Here is the JSON you asked for: {question: ...")
        repair = messages[-1]["content"]
        item = {
            "question": "And what about it?",
            "answer": repair,
            "history": [
                {"role": "user", "content": repair},
                {"role": "assistant", "content": "Sure, what would you like to know?"},
            ],
        }
        return reply(json.dumps({"items": [item]}))


def test_a_field_repeating_our_prompt_is_discarded_and_never_written(
    tmp_path: Path, llm_stub: StubServer, fake: FakeModel, make_client: MakeClient
) -> None:
    llm_stub.set_handler(EchoesRepair(fake))
    corpus = write_text_corpus(
        tmp_path / "echo", {"echo.txt": "FAULT_ECHO Refunds are processed within fourteen days."}
    )
    settings = GenerationSettings(
        qa=1, types=("conversational",), items_per_request=1, seed=1, max_rounds=1
    )
    result = generate(corpus, settings, client=make_client(enabled=False))
    repair = [
        m for b in llm_stub.requests for m in b["messages"] if "could not be used" in m["content"]
    ]
    assert repair  # the repair request was sent, and copied into the reply
    assert result.cases == ()
    assert result.summary["discarded"] == {"prompt_text": 1}
    assert fake.calls["verify_qa"] == 0  # discarded before verification
    out = tmp_path / "out.jsonl"
    result.write(out)
    assert "could not be used" not in out.read_text("utf-8")
    assert "prompt_text" in render_table(result.summary)


def test_prompt_echoes_are_told_from_ordinary_questions() -> None:
    from pytest_ragproof.generation.echo import echoes_prompt

    ordinary = [
        GeneratedItem("What is the capital of France?", "Paris."),  # an example of ours
        GeneratedItem("How long do refunds take?", "Refunds take fourteen days."),
        GeneratedItem("Is the reply valid JSON?", "The reply must be valid JSON."),
    ]
    assert not any(echoes_prompt(item) for item in ordinary)
    echoes = [
        GeneratedItem("Your previous reply could not be used: fix it?", "Yes."),
        GeneratedItem("Q?", "Reply with only a JSON value that matches this JSON Schema."),
        GeneratedItem(
            "What now?",
            "Sure.",
            conversation_history=(("user", "the JSON does not match the schema: items"),),
        ),
        GeneratedItem("Why?", "It must be answerable from the passage alone, without help."),
    ]
    assert all(echoes_prompt(item) for item in echoes)
