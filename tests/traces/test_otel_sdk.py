"""Traces written by the real ``opentelemetry-sdk`` and its OTLP JSON file exporter.

A small RAG pipeline (a keyword retriever over three documents, a scripted answer)
records its spans with the OpenInference attribute names of
``openinference-semantic-conventions``; a chat service records GenAI spans. Both are
exported by ``opentelemetry-exporter-otlp-json-file`` (the SDK's maintained OTLP JSON
encoder, one ExportTraceServiceRequest per line, hex ids) and imported field by field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from pytest_ragproof import load_dataset
from tests.interop.conftest import Ran
from tests.traces.otlp import read_jsonl

Cli = Callable[..., Ran]

DOCS = {
    "billing.md": "Invoices are under Settings, Billing. Pro costs 12 euros a month.",
    "account.md": "Reset your password with the link on the sign-in page.",
    "api.md": "The REST API needs a token from Settings, API.",
}
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND


def _retrieve(question: str) -> list[tuple[str, float]]:
    words = {w.strip("?.,").lower() for w in question.split()}
    scored = [
        (doc_id, float(len(words & set(text.lower().split())))) for doc_id, text in DOCS.items()
    ]
    return sorted((s for s in scored if s[1] > 0), key=lambda s: -s[1])[:2]


def _provider(path: Path, service: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(path)))
    return provider


def _rag(provider: TracerProvider, question: str, history: list[tuple[str, str]]) -> str:
    tracer = provider.get_tracer("rag-app")
    answer = f"From the docs: {question.lower()}"
    with tracer.start_as_current_span("query") as root:
        root.set_attribute(KIND, OpenInferenceSpanKindValues.CHAIN.value)
        root.set_attribute(SpanAttributes.INPUT_VALUE, question)
        root.set_attribute(SpanAttributes.INPUT_MIME_TYPE, OpenInferenceMimeTypeValues.TEXT.value)
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attribute(KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
            span.set_attribute(SpanAttributes.INPUT_VALUE, question)
            for i, (doc_id, score) in enumerate(_retrieve(question)):
                prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
                span.set_attribute(prefix + DocumentAttributes.DOCUMENT_ID, doc_id)
                span.set_attribute(prefix + DocumentAttributes.DOCUMENT_SCORE, score)
                span.set_attribute(prefix + DocumentAttributes.DOCUMENT_CONTENT, DOCS[doc_id])
        with tracer.start_as_current_span("llm") as span:
            span.set_attribute(KIND, OpenInferenceSpanKindValues.LLM.value)
            messages = [("system", "Answer from the context."), *history, ("user", question)]
            for i, (role, content) in enumerate(messages):
                prefix = f"{SpanAttributes.LLM_INPUT_MESSAGES}.{i}."
                span.set_attribute(prefix + MessageAttributes.MESSAGE_ROLE, role)
                span.set_attribute(prefix + MessageAttributes.MESSAGE_CONTENT, content)
            prefix = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0."
            span.set_attribute(prefix + MessageAttributes.MESSAGE_ROLE, "assistant")
            span.set_attribute(prefix + MessageAttributes.MESSAGE_CONTENT, answer)
        root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return f"{root.get_span_context().trace_id:032x}"


def test_openinference_traces_of_the_sdk(cli: Cli, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    provider = _provider(traces, "support-bot")
    first = _rag(provider, "Where are my invoices?", [])
    second = _rag(
        provider,
        "And how much is Pro?",
        [("user", "Where are my invoices?"), ("assistant", "Under Billing.")],
    )
    provider.shutdown()
    # the exporter's own format: one request per line, camelCase, hex ids
    assert json.loads(traces.read_text().splitlines()[0])["resourceSpans"]
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--format", "otel", traces, "-o", out)
    assert ran.code == 0, ran.err
    assert "traces: 2 read (6 span(s) in 1 file(s)), 2 kept, 0 skipped" in ran.out
    one, two = read_jsonl(out)
    assert (one["id"], two["id"]) == (f"otel-{first}", f"otel-{second}")
    assert one["question"] == "Where are my invoices?" and "conversation_history" not in one
    assert two["question"] == "And how much is Pro?"
    assert two["question_type"] == "conversational"
    assert two["conversation_history"] == [
        {"role": "user", "content": "Where are my invoices?"},
        {"role": "assistant", "content": "Under Billing."},
    ]
    trace = one["metadata"]["trace"]
    assert trace["trace_id"] == first and trace["service"] == "support-bot"
    assert trace["answer"] == "From the docs: where are my invoices?"
    assert trace["retrieved"] == [{"id": "billing.md", "rank": 1, "score": 2.0}]
    assert set(trace["span_ids"]) == {"root", "retriever", "llm"}
    assert trace["timestamp"].endswith("Z")
    assert two["metadata"]["trace"]["retrieved"][0]["id"] == "billing.md"
    assert all(c["review_status"] == "pending" for c in (one, two))
    assert "expected_source_ids" not in one and "expected_answer" not in one
    dataset = load_dataset(out)
    assert dataset.n_pending == 2


def test_genai_traces_of_the_sdk(cli: Cli, tmp_path: Path) -> None:
    traces = tmp_path / "genai.jsonl"
    provider = _provider(traces, "chat")
    tracer = provider.get_tracer("opentelemetry.instrumentation.openai_v2")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "gpt-4o-mini")
        span.add_event("gen_ai.user.message", {"content": "Call me at +44 20 7946 0958"})
        span.add_event("gen_ai.assistant.message", {"content": "Sure."})
        span.add_event("gen_ai.user.message", {"content": "Email is ann@example.org, ok?"})
        span.add_event(
            "gen_ai.choice",
            {"index": 0, "message": json.dumps({"role": "assistant", "content": "Noted."})},
        )
    provider.shutdown()
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", traces, "-o", out, "--redact-pii")
    assert ran.code == 0, ran.err
    [case] = read_jsonl(out)
    assert case["question"] == "Email is [EMAIL], ok?"
    assert case["conversation_history"] == [
        {"role": "user", "content": "Call me at [PHONE]"},
        {"role": "assistant", "content": "Sure."},
    ]
    assert case["metadata"]["trace"]["answer"] == "Noted."
    assert case["metadata"]["trace"]["service"] == "chat"
    assert "last user message of the first LLM span -> question: 1" in " ".join(ran.out.split())
