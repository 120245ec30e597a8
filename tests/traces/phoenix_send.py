"""Real spans sent to a running Phoenix, and the same spans written as OTLP JSON.

Run with the Python of Phoenix's own venv (it has ``opentelemetry-sdk``, the OTLP/HTTP
protobuf exporter Phoenix's ``/v1/traces`` needs, and OpenInference's attribute
names): ``python phoenix_send.py URL API_KEY OUT.jsonl``. Two projects (chosen by
the resource attribute ``openinference.project.name``, as ``phoenix.otel`` sets it):

* ``support-bot``: a RAG trace; a multi-turn chat whose root input is JSON; a trace
  with no question; a later near-duplicate of the first; a reranked trace whose
  documents have no ids; a GenAI-convention chat span (``gen_ai.*``, no
  OpenInference kind) with an e-mail address and a phone number in its question;
* ``billing-bot``: two RAG traces.

Each project's spans go to Phoenix through the SDK's ``OTLPSpanExporter`` and, the
same finished spans, into one line of OUT.jsonl: the ``ExportTraceServiceRequest``
that exporter sends, in protobuf's JSON mapping (base64 ids, camelCase). Prints the
number of spans sent per project as JSON.

This file is not imported by the test suite (its imports are in Phoenix's venv
only); the modules are loaded with ``importlib`` so that the main venv's mypy, which
checks every file under tests/, has nothing to resolve.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

T0 = 1_793_610_000_123_456_789  # 2026-11-02T09:00:00.123456789Z: a start time with nanoseconds
MINUTE = 60 * 10**9

DOCS = {
    "billing.md": "Invoices are under Settings, Billing. Pro costs 12 euros a month.",
    "account.md": "Reset your password with the link on the sign-in page.",
    "api.md": "The REST API needs a token from Settings, API.",
}


def _mod(name: str) -> Any:
    return importlib.import_module(name)


def _rag(
    tracer: Any,
    start: int,
    question: str,
    answer: str,
    docs: list[tuple[str, float]],
    *,
    history: list[tuple[str, str]] = (),  # type: ignore[assignment]
    json_input: bool = False,
) -> None:
    si = _mod("openinference.semconv.trace")
    attrs, kind = si.SpanAttributes, si.SpanAttributes.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("query", start_time=start) as root:
        root.set_attribute(kind, "CHAIN")
        if json_input:
            root.set_attribute(attrs.INPUT_VALUE, json.dumps({"query": question, "top_k": 2}))
            root.set_attribute(attrs.INPUT_MIME_TYPE, "application/json")
        else:
            root.set_attribute(attrs.INPUT_VALUE, question)
        with tracer.start_as_current_span("retrieve", start_time=start + 1000) as span:
            span.set_attribute(kind, "RETRIEVER")
            span.set_attribute(attrs.INPUT_VALUE, question)
            for i, (doc_id, score) in enumerate(docs):
                prefix = f"{attrs.RETRIEVAL_DOCUMENTS}.{i}."
                span.set_attribute(prefix + "document.id", doc_id)
                span.set_attribute(prefix + "document.score", score)
                span.set_attribute(prefix + "document.content", DOCS[doc_id])
        with tracer.start_as_current_span("llm", start_time=start + 2000) as span:
            span.set_attribute(kind, "LLM")
            messages = [("system", "Answer from the context."), *history, ("user", question)]
            for i, (role, content) in enumerate(messages):
                prefix = f"{attrs.LLM_INPUT_MESSAGES}.{i}."
                span.set_attribute(prefix + "message.role", role)
                span.set_attribute(prefix + "message.content", content)
            span.set_attribute(f"{attrs.LLM_OUTPUT_MESSAGES}.0.message.role", "assistant")
            span.set_attribute(f"{attrs.LLM_OUTPUT_MESSAGES}.0.message.content", answer)
        root.set_attribute(attrs.OUTPUT_VALUE, answer)


def _support(tracer: Any) -> None:
    si = _mod("openinference.semconv.trace").SpanAttributes
    kind = si.OPENINFERENCE_SPAN_KIND
    _rag(
        tracer,
        T0,
        "How do I reset my password?",
        "Use the reset link on the sign-in page.",
        [("account.md", 0.91), ("api.md", 0.12)],
    )
    _rag(
        tracer,
        T0 + 2 * MINUTE,
        "And how much is Pro?",
        "Pro costs 12 euros a month.",
        [("billing.md", 0.77)],
        history=[("user", "Where are my invoices?"), ("assistant", "Under Settings, Billing.")],
        json_input=True,
    )
    with tracer.start_as_current_span("healthcheck", start_time=T0 + 3 * MINUTE) as root:
        root.set_attribute(kind, "CHAIN")
        with tracer.start_as_current_span("ping", start_time=T0 + 3 * MINUTE + 1000) as span:
            span.set_attribute(kind, "TOOL")
            span.set_attribute(si.OUTPUT_VALUE, "ok")
    _rag(
        tracer,
        T0 + 4 * MINUTE,
        "how do I reset my password",
        "The sign-in page has a reset link.",
        [("account.md", 0.88)],
    )
    with tracer.start_as_current_span("query", start_time=T0 + 5 * MINUTE) as root:
        root.set_attribute(kind, "CHAIN")
        root.set_attribute(si.INPUT_VALUE, "Where is the API token?")
        with tracer.start_as_current_span("rerank", start_time=T0 + 5 * MINUTE + 1000) as span:
            span.set_attribute(kind, "RERANKER")
            for i, text in enumerate([DOCS["api.md"], DOCS["account.md"]]):
                span.set_attribute(f"reranker.output_documents.{i}.document.content", text)
                span.set_attribute(f"reranker.output_documents.{i}.document.score", 0.5 - i / 4)
        root.set_attribute(si.OUTPUT_VALUE, "Settings, API.")
    with tracer.start_as_current_span("chat gpt-4o", start_time=T0 + 6 * MINUTE) as span:
        question = "I am ann@example.com, call me on +44 20 7946 0958: is there an API?"
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "gpt-4o")
        span.set_attribute(
            "gen_ai.input.messages",
            json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
        )
        span.set_attribute(
            "gen_ai.output.messages",
            json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Yes, REST."}]}]
            ),
        )


def _billing(tracer: Any) -> None:
    _rag(
        tracer,
        T0 + 10 * MINUTE,
        "Where are my invoices?",
        "Under Settings, Billing.",
        [("billing.md", 0.95)],
    )
    _rag(
        tracer,
        T0 + 11 * MINUTE,
        "Do I need a token for the API?",
        "Yes, from Settings, API.",
        [("api.md", 0.83), ("account.md", 0.2)],
    )


def main(url: str, api_key: str, out_path: str) -> None:
    sdk = _mod("opentelemetry.sdk.trace")
    export = _mod("opentelemetry.sdk.trace.export")
    memory = _mod("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    resources = _mod("opentelemetry.sdk.resources")
    otlp = _mod("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    encoder = _mod("opentelemetry.exporter.otlp.proto.common.trace_encoder")
    json_format = _mod("google.protobuf.json_format")
    sent: dict[str, int] = {}
    with open(out_path, "w", encoding="utf-8") as out:
        for project, service, write in (
            ("support-bot", "support-api", _support),
            ("billing-bot", "billing-api", _billing),
        ):
            resource = resources.Resource.create(
                {"service.name": service, "openinference.project.name": project}
            )
            provider = sdk.TracerProvider(resource=resource)
            kept = memory.InMemorySpanExporter()
            exporter = otlp.OTLPSpanExporter(
                endpoint=f"{url}/v1/traces",
                headers={"authorization": f"Bearer {api_key}"},
                timeout=30,
            )
            provider.add_span_processor(export.SimpleSpanProcessor(kept))
            provider.add_span_processor(export.BatchSpanProcessor(exporter))
            write(provider.get_tracer("rag-app"))
            provider.force_flush()
            provider.shutdown()
            spans = kept.get_finished_spans()
            request = encoder.encode_spans(spans)
            out.write(json.dumps(json_format.MessageToDict(request)) + "\n")
            sent[project] = len(spans)
    print(json.dumps(sent))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
