"""``ragproof import --from otel``: hand-built OTLP JSON of each convention and file shape."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_ragproof import load_dataset
from tests.interop.conftest import Ran
from tests.traces.otlp import T0, rag_trace, read_jsonl, request, span, write_jsonl

Cli = Callable[..., Ran]


def imported(cli: Cli, tmp_path: Path, *args: str | Path) -> tuple[Ran, list[dict[str, Any]]]:
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", *args, "-o", out)
    assert ran.code == 0, ran.err
    assert cli("validate", out).code == 0
    return ran, read_jsonl(out)


def test_openinference_rag_trace_becomes_a_pending_draft(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "traces.jsonl", [request(rag_trace(1, "How do I reset it?"))])
    ran, [case] = imported(cli, tmp_path, path)
    assert case["question"] == "How do I reset it?"
    assert case["kind"] == "qa" and case["review_status"] == "pending"
    assert "expected_answer" not in case and "expected_source_ids" not in case
    assert case["id"] == f"otel-{1:032x}"
    trace = case["metadata"]["trace"]
    assert case["metadata"]["imported_from"] == "otel"
    assert trace == {
        "trace_id": f"{1:032x}",
        "span_ids": {
            "root": "0000000100000001",
            "retriever": ["0000000100000002"],
            "llm": ["0000000100000003"],
        },
        "timestamp": "2025-11-24T16:00:00.000000Z",
        "service": "rag-api",
        "answer": "Use the reset link on the sign-in page.",
        "retrieved": [
            {"id": "faq.md#2", "rank": 1, "score": 0.82},
            {"id": "faq.md#7", "rank": 2, "score": 0.41},
        ],
    }
    said = " ".join(ran.out.split())
    assert "read 1 trace(s) from" in said
    assert "traces: 1 read (3 span(s) in 1 file(s)), 1 kept, 0 skipped" in said
    assert "root span input.value -> question: 1" in said
    assert "metadata.trace.retrieved (not expected_source_ids): 1" in said


def test_history_from_the_llm_messages_and_question_from_the_last_user_message(
    cli: Cli, tmp_path: Path
) -> None:
    llm = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "Which plans are there?",
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.content": "Free and Pro.",
        "llm.input_messages.3.message.role": "user",
        "llm.input_messages.3.message.contents.0.message_content.type": "text",
        "llm.input_messages.3.message.contents.0.message_content.text": "How much is Pro?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "12 euros a month.",
    }
    reranker = {
        "openinference.span.kind": "RERANKER",
        "reranker.output_documents.0.document.id": "pricing.md",
        "reranker.output_documents.0.document.score": 3.5,
        "reranker.output_documents.1.document.content": "a passage without an id",
    }
    spans = [
        span(2, 1, attributes={"openinference.span.kind": "AGENT"}),
        span(2, 2, parent=1, start=1, attributes=reranker),
        span(2, 3, parent=1, start=2, attributes=llm),
    ]
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans)])
    ran, [case] = imported(cli, tmp_path, path)
    assert case["question"] == "How much is Pro?"
    assert case["question_type"] == "conversational"
    assert case["conversation_history"] == [
        {"role": "user", "content": "Which plans are there?"},
        {"role": "assistant", "content": "Free and Pro."},
    ]
    trace = case["metadata"]["trace"]
    assert trace["answer"] == "12 euros a month."
    assert trace["retrieved"] == []
    from pytest_ragproof.metrics.outputs import content_id

    assert trace["reranked"] == [
        {"id": "pricing.md", "rank": 1, "score": 3.5},
        {"id": content_id("a passage without an id"), "rank": 2, "id_from": "content"},
    ]
    assert "last user message of the first LLM span -> question: 1" in " ".join(ran.out.split())


def test_a_document_without_an_id_takes_one_from_its_metadata(cli: Cli, tmp_path: Path) -> None:
    # OpenInference's LangChain instrumentation writes document.metadata (JSON text), never
    # document.id; LangChain's loaders put the file in metadata["source"]
    prefix = "retrieval.documents"
    retriever: dict[str, Any] = {
        "openinference.span.kind": "RETRIEVER",
        f"{prefix}.0.document.content": "first passage",
        f"{prefix}.0.document.metadata": json.dumps({"source": "a.md", "page": 2}),
        f"{prefix}.1.document.content": "second passage",
        f"{prefix}.1.document.metadata": json.dumps({"source": "b.md", "doc_id": "b-7"}),
        f"{prefix}.2.document.content": "third passage",
        f"{prefix}.2.document.metadata": "{not json",
        f"{prefix}.3.document.content": "fourth passage",
        f"{prefix}.3.document.metadata": json.dumps({"source": "", "page": 1}),
        f"{prefix}.4.document.id": "e.md",
        f"{prefix}.4.document.metadata": json.dumps({"source": "other.md"}),
    }
    spans = [
        span(3, 1, attributes={"openinference.span.kind": "CHAIN", "input.value": "Q?"}),
        span(3, 2, parent=1, start=1, attributes=retriever),
    ]
    raw = request(spans)
    # a metadata map as a kvlistValue (an exporter that keeps maps as maps)
    raw["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"].append(
        {
            "key": f"{prefix}.5.document.metadata",
            "value": {"kvlistValue": {"values": [{"key": "id", "value": {"intValue": "42"}}]}},
        }
    )
    path = write_jsonl(tmp_path / "t.jsonl", [raw])
    _, [case] = imported(cli, tmp_path, path)
    from pytest_ragproof.metrics.outputs import content_id

    assert case["metadata"]["trace"]["retrieved"] == [
        {"id": "a.md", "rank": 1, "id_from": "metadata.source"},
        {"id": "b-7", "rank": 2, "id_from": "metadata.doc_id"},
        {"id": content_id("third passage"), "rank": 3, "id_from": "content"},
        {"id": content_id("fourth passage"), "rank": 4, "id_from": "content"},
        {"id": "e.md", "rank": 5},
        {"id": "42", "rank": 6, "id_from": "metadata.id"},
    ]


def _logs(records: list[dict[str, Any]]) -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "chat"}}]}
    return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": records}]}]}


def _any(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue, a mapping as a kvlistValue (as the SDK writes a log body)."""
    from tests.traces.otlp import value

    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(x)} for k, x in v.items()]}}
    return value(v)


def _record(trace: int, n: int | None, event: str | None, body: Any, at: int) -> dict[str, Any]:
    record: dict[str, Any] = {"timeUnixNano": str(T0 + at * 1_000_000), "body": _any(body)}
    if n is not None:
        record |= {"traceId": f"{trace:032x}", "spanId": f"{trace:08x}{n:08x}"}
    if event is not None:
        record["eventName"] = event
    return record


def test_genai_messages_sent_as_log_records_join_their_span(cli: Cli, tmp_path: Path) -> None:
    chat = span(4, 2, parent=1, start=1, attributes={"gen_ai.operation.name": "chat"})
    traces = write_jsonl(tmp_path / "t.jsonl", [request([span(4, 1), chat])])
    older = _record(4, 2, None, "Who am I?", 3)  # a plain-text body
    older["attributes"] = [{"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}}]
    choice = {"message": {"role": "assistant", "content": "Still Ann."}}
    records = [
        older,  # an older SDK names the event in an attribute
        _record(4, 2, "gen_ai.assistant.message", {"content": "Ann."}, 4),
        _record(4, 2, "gen_ai.user.message", {"content": "And now?"}, 5),
        _record(4, 2, "app.log", {"content": "ignored"}, 6),
        _record(4, None, "gen_ai.user.message", {"content": "outside any span"}, 6),
        _record(4, 2, "gen_ai.choice", choice, 7),
        _record(5, 1, "gen_ai.user.message", {"content": "Alone?"}, 1),  # no spans
    ]
    logs = write_jsonl(tmp_path / "logs.jsonl", [_logs(records[4:]), _logs(records[:4])])
    _, [case, alone] = imported(cli, tmp_path, logs, traces)
    assert case["question"] == "And now?"
    assert case["conversation_history"] == [
        {"role": "user", "content": "Who am I?"},
        {"role": "assistant", "content": "Ann."},
    ]
    trace = case["metadata"]["trace"]
    assert trace["answer"] == "Still Ann."
    assert trace["span_ids"] == {"root": f"{4:08x}{1:08x}", "llm": [f"{4:08x}{2:08x}"]}
    assert trace["service"] == "rag-api"  # the root's, from the traces
    assert alone["question"] == "Alone?" and "answer" not in alone["metadata"]["trace"]
    assert alone["metadata"]["trace"]["service"] == "chat"


def test_json_input_value_reads_a_question_member(cli: Cli, tmp_path: Path) -> None:
    root = {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"query": "Where is my invoice?", "top_k": 3}),
        "input.mime_type": "application/json",
        "output.value": json.dumps({"output": "Under Billing."}),
        "output.mime_type": "application/json",
    }
    unknown = {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"foo": "bar"}),
        "input.mime_type": "application/json",
    }
    path = write_jsonl(
        tmp_path / "t.jsonl",
        [request([span(3, 1, attributes=root), span(4, 1, attributes=unknown)])],
    )
    ran, [case] = imported(cli, tmp_path, path)
    assert case["question"] == "Where is my invoice?"
    assert case["metadata"]["trace"]["answer"] == "Under Billing."
    assert f"1: no recognisable question: {4:032x}" in ran.out


GENAI_VARIANTS: list[tuple[str, dict[str, Any], list[tuple[str, dict[str, Any]]]]] = [
    (
        "gen_ai.input.messages attributes (1.37+)",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [
                    {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
                    {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
                    {"role": "assistant", "parts": [{"type": "text", "content": "Hello!"}]},
                    {"role": "user", "parts": [{"type": "text", "content": "What is RAG?"}]},
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Retrieval."}]}]
            ),
        },
        [],
    ),
    (
        "message events (1.28-1.36)",
        {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
        [
            ("gen_ai.system.message", {"content": "Be brief."}),
            ("gen_ai.user.message", {"content": "Hi"}),
            ("gen_ai.assistant.message", {"content": "Hello!"}),
            ("gen_ai.user.message", {"content": "What is RAG?"}),
            (
                "gen_ai.choice",
                {"index": 0, "message": json.dumps({"role": "assistant", "content": "Retrieval."})},
            ),
        ],
    ),
    (
        "content events (1.26-1.27)",
        {"gen_ai.system": "openai"},
        [
            (
                "gen_ai.content.prompt",
                {
                    "gen_ai.prompt": json.dumps(
                        [
                            {"role": "user", "content": "Hi"},
                            {"role": "assistant", "content": "Hello!"},
                            {"role": "user", "content": "What is RAG?"},
                        ]
                    )
                },
            ),
            (
                "gen_ai.content.completion",
                {"gen_ai.completion": json.dumps([{"role": "assistant", "content": "Retrieval."}])},
            ),
        ],
    ),
    (
        "flat gen_ai.prompt.N attributes",
        {
            "gen_ai.system": "openai",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "Hi",
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.content": "Hello!",
            "gen_ai.prompt.2.role": "user",
            "gen_ai.prompt.2.content": "What is RAG?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": "Retrieval.",
        },
        [],
    ),
]


def test_genai_conventions_of_each_version(cli: Cli, tmp_path: Path) -> None:
    requests = [
        request([span(10 + i, 1, start=i, attributes=a, events=e)])
        for i, (_, a, e) in enumerate(GENAI_VARIANTS)
    ]
    _, cases = imported(cli, tmp_path, write_jsonl(tmp_path / "g.jsonl", requests))
    # the four variants say the same: all but the first collapse as near-duplicates
    assert len(cases) == 1
    case = cases[0]
    assert case["question"] == "What is RAG?"
    assert case["conversation_history"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
    ]
    assert case["metadata"]["trace"]["answer"] == "Retrieval."
    assert case["metadata"]["trace"]["repeats"] == 3
    for i, (name, a, e) in enumerate(GENAI_VARIANTS):
        one = write_jsonl(
            tmp_path / f"v{i}.jsonl", [request([span(20, 1, attributes=a, events=e)])]
        )
        out = tmp_path / f"v{i}.out.jsonl"
        assert cli("import", "--from", "otel", one, "-o", out).code == 0, name
        [got] = read_jsonl(out)
        assert (got["question"], got["metadata"]["trace"]["answer"]) == (
            "What is RAG?",
            "Retrieval.",
        ), name
        assert len(got["conversation_history"]) == 2, name


def test_spans_over_lines_and_files_gzip_pretty_printed_and_base64_ids(
    cli: Cli, tmp_path: Path
) -> None:
    first, retriever, llm = rag_trace(5, "Can I export my data?")
    write_jsonl(tmp_path / "a.jsonl", [request([retriever]), request([first], service="web")])
    with gzip.open(tmp_path / "b.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(request([llm])) + "\n")
    # protobuf's JSON mapping (MessageToJson) writes ids as base64 and snake_case is accepted
    other = rag_trace(6, "Is there an API?")
    for s in other:
        s["traceId"] = base64.b64encode(bytes.fromhex(s["traceId"])).decode()
        s["span_id"] = base64.b64encode(bytes.fromhex(s.pop("spanId"))).decode()
        if "parentSpanId" in s:
            s["parentSpanId"] = base64.b64encode(bytes.fromhex(s["parentSpanId"])).decode()
    pretty = tmp_path / "c.json"
    pretty.write_text(json.dumps(request(other), indent=2), encoding="utf-8")
    ran, cases = imported(cli, tmp_path, tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz", pretty)
    assert [c["question"] for c in cases] == ["Can I export my data?", "Is there an API?"]
    five, six = (c["metadata"]["trace"] for c in cases)
    assert five["service"] == "web"
    assert five["span_ids"]["llm"] == ["0000000500000003"]
    assert six["trace_id"] == f"{6:032x}" and six["span_ids"]["root"] == "0000000600000001"
    assert "traces: 2 read (6 span(s) in 3 file(s)), 2 kept, 0 skipped" in ran.out


def test_freeze_approved_only_after_review(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "t.jsonl",
        [request(rag_trace(7, "How do I reset it?")), request(rag_trace(8, "Who are you?"))],
    )
    _, cases = imported(cli, tmp_path, path)
    refused = cli("freeze", tmp_path / "cases.jsonl", "--approved-only", "-o", tmp_path / "f.json")
    assert refused.code != 0 and "no case is approved" in refused.err
    # what a reviewer does: take the production answer and retrieved ids, approve
    first = cases[0]
    first["expected_answer"] = first["metadata"]["trace"]["answer"]
    first["expected_source_ids"] = [d["id"] for d in first["metadata"]["trace"]["retrieved"]]
    first["review_status"] = "approved"
    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    ran = cli("freeze", reviewed, "--approved-only", "-o", tmp_path / "f.json")
    assert ran.code == 0, ran.err
    assert "left out 1 pending case(s) (--approved-only)" in ran.out
    frozen = load_dataset(tmp_path / "f.json")
    assert [c.id for c in frozen.cases] == [f"otel-{7:032x}"]
    assert frozen.cases[0].expected_source_ids == ("faq.md#2", "faq.md#7")


def test_approving_a_draft_without_sources_is_refused(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(9, "How do I reset it?"))])
    _, [case] = imported(cli, tmp_path, path)
    case["review_status"] = "approved"
    bad = tmp_path / "approved.jsonl"
    bad.write_text(json.dumps(case) + "\n", encoding="utf-8")
    ran = cli("validate", bad)
    assert ran.code != 0
    assert "a qa case needs at least one expected_source_ids entry" in ran.err


def test_timestamp_is_the_root_start(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(11, "Q?", start=90_061_001))])
    _, [case] = imported(cli, tmp_path, path)
    # T0 + 1 day, 1 h, 1 min, 1 s and 1 ms
    assert case["metadata"]["trace"]["timestamp"] == "2025-11-25T17:01:01.001000Z"
    assert T0 == 1_764_000_000 * 10**9


def test_a_trace_exported_without_its_root_takes_the_llm_question(cli: Cli, tmp_path: Path) -> None:
    _, retriever, llm = rag_trace(12, "Is there an API?")
    _, [case] = imported(
        cli, tmp_path, write_jsonl(tmp_path / "t.jsonl", [request([retriever, llm])])
    )
    # the LLM's last user message is the templated prompt, taken as it is, never guessed at
    assert case["question"] == "Context: ...\nQuestion: Is there an API?"
    assert case["metadata"]["trace"]["span_ids"]["root"] == "0000000c00000002"
    assert case["metadata"]["trace"]["answer"] == "Use the reset link on the sign-in page."


def test_the_review_app_opens_the_drafts_and_refuses_approving_one_without_sources(
    tmp_path: Path, cli: Cli
) -> None:
    from pytest_ragproof.errors import DatasetError
    from pytest_ragproof.review.reviewed import Decision, ReviewedFile

    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(13, "How do I reset it?"))])
    imported(cli, tmp_path, path)
    reviewed = ReviewedFile(tmp_path / "cases.jsonl", tmp_path / "reviewed.jsonl")
    reviewed.decide(0, Decision("rejected"), reviewer="ana", time="2026-12-04T10:00:00Z")
    assert read_jsonl(tmp_path / "reviewed.jsonl")[0]["review_status"] == "rejected"
    try:
        reviewed.decide(0, Decision("approved"), reviewer="ana", time="2026-12-04T10:01:00Z")
    except DatasetError as exc:
        assert "a qa case needs at least one expected_source_ids entry" in str(exc)
    else:
        raise AssertionError("approving a draft without expected sources was accepted")
    assert read_jsonl(tmp_path / "reviewed.jsonl")[0]["review_status"] == "rejected"
