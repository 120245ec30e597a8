"""OTLP JSON written by hand: spans with attributes as AnyValues, requests, files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

T0 = 1_764_000_000_000_000_000  # 2025-11-24T16:00:00Z in Unix nanoseconds


def value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v}


def attrs(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in values.items()]


def span(
    trace: int,
    n: int,
    *,
    parent: int | None = None,
    start: int = 0,
    attributes: Mapping[str, Any] | None = None,
    events: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> dict[str, Any]:
    """Span ``n`` of trace ``trace`` (ids made of those numbers), ``start`` ms after T0."""
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{n:08x}",
        "name": f"span {n}",
        "kind": 1,
        "startTimeUnixNano": str(T0 + start * 1_000_000),
        "endTimeUnixNano": str(T0 + (start + 5) * 1_000_000),
        "status": {},
    }
    if parent is not None:
        out["parentSpanId"] = f"{trace:08x}{parent:08x}"
    if attributes is not None:
        out["attributes"] = attrs(attributes)
    if events:
        out["events"] = [
            {"timeUnixNano": out["startTimeUnixNano"], "name": name, "attributes": attrs(a)}
            for name, a in events
        ]
    return out


def request(spans: Sequence[dict[str, Any]], service: str | None = "rag-api") -> dict[str, Any]:
    resource = {"attributes": attrs({"service.name": service} if service else {})}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}
        ]
    }


def rag_trace(
    trace: int,
    question: str,
    *,
    answer: str = "Use the reset link on the sign-in page.",
    start: int = 0,
    docs: Sequence[tuple[str, float]] = (("faq.md#2", 0.82), ("faq.md#7", 0.41)),
) -> list[dict[str, Any]]:
    """An OpenInference RAG trace: CHAIN root, RETRIEVER, LLM."""
    retrieved: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": question}
    for i, (doc_id, score) in enumerate(docs):
        retrieved[f"retrieval.documents.{i}.document.id"] = doc_id
        retrieved[f"retrieval.documents.{i}.document.score"] = score
        retrieved[f"retrieval.documents.{i}.document.content"] = f"text of {doc_id}"
    llm = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Answer from the context.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": f"Context: ...\nQuestion: {question}",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
    }
    return [
        span(
            trace,
            1,
            start=start,
            attributes={
                "openinference.span.kind": "CHAIN",
                "input.value": question,
                "output.value": answer,
            },
        ),
        span(trace, 2, parent=1, start=start + 1, attributes=retrieved),
        span(trace, 3, parent=1, start=start + 2, attributes=llm),
    ]


def write_jsonl(path: Path, requests: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
