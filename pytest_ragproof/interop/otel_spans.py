"""One OTLP span in our words: what the OpenInference and GenAI conventions say it did.

A span arrives as OTLP JSON (``traceId``, ``spanId``, ``parentSpanId``,
``startTimeUnixNano``, ``attributes`` as ``[{key, value: AnyValue}]``, ``events``);
:func:`span_of` keeps only what a draft case needs (:class:`SpanInfo`), so a trace's
prompts and document texts are dropped as soon as its line is read.

Conventions read:

* OpenInference: ``openinference.span.kind``, ``input.value`` / ``input.mime_type``,
  ``output.value``, ``llm.input_messages.N.message.role|content`` (or
  ``message.contents.M.message_content.text``), ``llm.output_messages.N…``,
  ``retrieval.documents.N.document.id|score`` (RETRIEVER; a document without an id
  takes one from ``document.metadata``, else from its content) and
  ``reranker.output_documents.N.document.id|score`` (RERANKER).
* OpenTelemetry GenAI, every version that wrote message text: ``gen_ai.input.messages``
  / ``gen_ai.output.messages`` (JSON of ``{role, parts: [{type, content}]}``, as
  attributes or on a ``gen_ai.client.inference.operation.details`` event), the
  ``gen_ai.user.message`` / ``gen_ai.assistant.message`` / ``gen_ai.choice`` events,
  the ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events and the flat
  ``gen_ai.prompt.N.role|content`` / ``gen_ai.completion.N.content`` attributes.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 100_000
"""Longest question or answer kept (characters); a longer one skips its trace, counted."""


Doc = tuple[str, float | None, str | None]
"""A retrieved document: id, score (None when absent), and where the id came from when the
document gave no ``document.id``: ``metadata.<key>`` or ``content`` (None: its own id)."""

METADATA_ID_KEYS = ("id", "doc_id", "document_id", "source")
"""Members of ``document.metadata`` read as the id of a document without ``document.id``
(OpenInference's LangChain instrumentation writes none; LangChain's loaders set
``source``), in this order."""


LATEST_NS = 253_402_300_800 * 10**9  # 10000-01-01T00:00:00Z in Unix nanoseconds


class SpanShapeError(ValueError):
    """A span that is not OTLP JSON; the message names the part, never a value."""


@dataclass(slots=True)
class SpanInfo:
    """What one span contributes to its trace's draft case."""

    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    kind: str = ""  # OpenInference span kind, or LLM for a GenAI chat span
    input: str | None = None
    input_json: bool = False
    output: str | None = None
    output_json: bool = False
    messages: list[tuple[str, str]] = field(default_factory=list)  # user/assistant input
    reply: str | None = None  # the last assistant output message
    documents: list[Doc] = field(default_factory=list)
    reranked: list[Doc] = field(default_factory=list)


def _hex_id(value: Any, name: str, size: int) -> str:
    """An OTLP id as lower-case hex: OTLP/JSON writes hex, protobuf's JSON mapping base64."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise SpanShapeError(f"{name} is not a string")
    if len(value) == 2 * size:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""  # 2 x size characters of base64 are no id of either size
        if len(raw) == size:
            return raw.hex()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise SpanShapeError(f"{name} is neither {2 * size} hex digits nor base64 of {size} bytes")
    return raw.hex()


def any_value(value: Any) -> Any:
    """The Python value of an OTLP ``AnyValue`` (None for an empty one)."""
    if not isinstance(value, Mapping):
        raise SpanShapeError("an attribute value is not an AnyValue object")
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            try:
                return int(value[key])
            except (TypeError, ValueError):
                raise SpanShapeError("an intValue is not an integer") from None
    for key in ("doubleValue", "double_value"):
        if key in value:
            raw = value[key]
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                return float(raw)
            if raw in ("NaN", "Infinity", "-Infinity"):
                return None  # no score rather than a non-finite one
            try:
                return float(raw)
            except (TypeError, ValueError):
                raise SpanShapeError("a doubleValue is not a number") from None
    for key in ("arrayValue", "array_value"):
        if key in value:
            items = value[key].get("values", []) if isinstance(value[key], Mapping) else None
            if not isinstance(items, list):
                raise SpanShapeError("an arrayValue has no list of values")
            return [any_value(item) for item in items]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            items = value[key].get("values", []) if isinstance(value[key], Mapping) else None
            if not isinstance(items, list):
                raise SpanShapeError("a kvlistValue has no list of values")
            return attributes(items)
    return None  # bytesValue or an empty AnyValue: nothing a case holds


def attributes(items: Any) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` as a dict (the last of repeated keys wins)."""
    if items is None:
        return {}
    if type(items) is not list:  # values come from json.loads: plain dicts and lists
        raise SpanShapeError("attributes is not a list")
    out: dict[str, Any] = {}
    for item in items:
        if type(item) is not dict or type(item.get("key")) is not str:
            raise SpanShapeError("an attribute is not a {key, value} object")
        value = item.get("value")
        if type(value) is dict and "stringValue" in value:  # most attributes: a string
            out[item["key"]] = value["stringValue"]
        else:
            out[item["key"]] = None if value is None else any_value(value)
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        score = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return score if math.isfinite(score) else None


Groups = dict[str, dict[int, dict[str, Any]]]
"""Indexed attributes (``prefix.N.rest``) by prefix (with its dot), then N, then rest."""


INDEXED = (
    "llm.input_messages.",
    "llm.output_messages.",
    "retrieval.documents.",
    "reranker.output_documents.",
    "gen_ai.prompt.",
    "gen_ai.completion.",
)
"""The prefixes of the indexed attributes read (``prefix.N.rest``)."""


def _group(attrs: Mapping[str, Any]) -> Groups:
    """The ``prefix.N.rest`` attributes of :data:`INDEXED`, grouped in one pass."""
    groups: Groups = {}
    for key, value in attrs.items():
        if key.startswith(INDEXED):
            for prefix in INDEXED:
                if key.startswith(prefix):
                    index, _, rest = key[len(prefix) :].partition(".")
                    if index.isdigit() and rest:
                        groups.setdefault(prefix, {}).setdefault(int(index), {})[rest] = value
                    break
    return groups


def _indexed(groups: Groups, prefix: str) -> list[dict[str, Any]]:
    """The ``prefix.N`` groups in N order."""
    found = groups.get(prefix)
    return [found[n] for n in sorted(found)] if found else []


def _documents(groups: Groups, prefix: str) -> list[Doc]:
    from pytest_ragproof.metrics.outputs import content_id
    from pytest_ragproof.textnorm import normalize_text

    out: list[Doc] = []
    for doc in _indexed(groups, prefix):
        doc_id = _id(doc.get("document.id"))
        score = _score(doc.get("document.score"))
        if doc_id is not None:
            out.append((doc_id, score, None))
        elif (found := _metadata_id(doc.get("document.metadata"))) is not None:
            out.append((found[1], score, f"metadata.{found[0]}"))
        elif _text(doc.get("document.content")):
            out.append((content_id(normalize_text(doc["document.content"])), score, "content"))
    return out


def _id(value: Any) -> str | None:
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
        return str(value)
    return None


def _metadata_id(metadata: Any) -> tuple[str, str] | None:
    """The first of :data:`METADATA_ID_KEYS` in ``document.metadata`` (JSON text, as the
    instrumentations write it, or a kvlist) with an id: (key, id)."""
    if isinstance(metadata, str) and metadata.lstrip().startswith("{"):
        try:
            metadata = json.loads(metadata)
        except (ValueError, RecursionError):
            return None
    if not isinstance(metadata, Mapping):
        return None
    for key in METADATA_ID_KEYS:
        if (found := _id(metadata.get(key))) is not None:
            return key, found
    return None


def _oi_messages(groups: Groups, prefix: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for msg in _indexed(groups, prefix):
        role = msg.get("message.role")
        content = _text(msg.get("message.content"))
        if content is None:
            parts = [
                v
                for k, v in sorted(msg.items())
                if k.startswith("message.contents.") and k.endswith(".message_content.text")
            ]
            content = _text("\n".join(p for p in parts if isinstance(p, str)))
        if isinstance(role, str) and content is not None:
            out.append((role, content))
    return out


def _part_text(content: Any) -> str | None:
    """A GenAI message's text: a string, or the text parts of ``parts``/``content``."""
    if isinstance(content, str):
        return _text(content)
    if isinstance(content, list):
        texts = [
            p.get("content") if isinstance(p.get("content"), str) else p.get("text")
            for p in content
            if isinstance(p, Mapping) and p.get("type", "text") == "text"
        ]
        return _text("\n".join(t for t in texts if isinstance(t, str)))
    return None


def json_messages(raw: Any, role: str | None = None) -> list[tuple[str, str]]:
    """GenAI messages given as JSON text (or already decoded): ``[{role, parts|content}]``."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return [(role, raw)] if role and _text(raw) else []
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list):
        return []
    out: list[tuple[str, str]] = []
    for msg in raw:
        if not isinstance(msg, Mapping):
            continue
        inner: Mapping[str, Any] = msg
        if isinstance(msg.get("message"), Mapping):
            inner = msg["message"]
        text = _part_text(inner.get("parts")) or _part_text(inner.get("content"))
        who = inner.get("role", role)
        if isinstance(who, str) and text is not None:
            out.append((who, text))
    return out


_EVENT_ROLES = {"gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant"}


def genai(span: SpanInfo, attrs: Mapping[str, Any], groups: Groups, events: list[Any]) -> None:
    """The GenAI messages of a span's attributes and events (OTLP JSON events, or
    ``(name, attributes)`` pairs: log records, ``otel_logs.py``)."""
    if not events and not any(key.startswith("gen_ai.") for key in attrs):
        return
    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []
    inputs += json_messages(attrs.get("gen_ai.input.messages"))
    outputs += json_messages(attrs.get("gen_ai.output.messages"), "assistant")
    for msg in _indexed(groups, "gen_ai.prompt."):
        if isinstance(msg.get("role"), str) and _text(msg.get("content")):
            inputs.append((msg["role"], msg["content"]))
    for msg in _indexed(groups, "gen_ai.completion."):
        if _text(msg.get("content")):
            outputs.append((str(msg.get("role") or "assistant"), msg["content"]))
    for event in events:
        if isinstance(event, tuple):
            name, ev = event
        elif isinstance(event, Mapping):
            name, ev = event.get("name"), None
        else:
            raise SpanShapeError("an event is not an object")
        if not isinstance(name, str) or not name.startswith("gen_ai."):
            continue
        if ev is None:
            ev = attributes(event.get("attributes"))
        if name == "gen_ai.client.inference.operation.details":
            inputs += json_messages(ev.get("gen_ai.input.messages"))
            outputs += json_messages(ev.get("gen_ai.output.messages"), "assistant")
        elif name == "gen_ai.content.prompt":
            inputs += json_messages(ev.get("gen_ai.prompt"), "user")
        elif name == "gen_ai.content.completion":
            outputs += json_messages(ev.get("gen_ai.completion"), "assistant")
        elif name in _EVENT_ROLES:
            body = ev.get("content", ev.get("gen_ai.event.content"))
            inputs += json_messages(body, _EVENT_ROLES[name])
        elif name == "gen_ai.choice":
            body = ev.get("message", ev.get("gen_ai.event.content", ev.get("content")))
            outputs += json_messages(body, "assistant")
    if inputs or outputs or "gen_ai.operation.name" in attrs:
        span.kind = span.kind or "LLM"
    if inputs and not span.messages:
        span.messages = [(r, c) for r, c in inputs if r in ("user", "assistant")]
    if outputs and span.reply is None:
        span.reply = next((c for r, c in reversed(outputs) if r in ("assistant", "model")), None)


def span_of(raw: Any) -> SpanInfo:
    """The :class:`SpanInfo` of one OTLP JSON span; :class:`SpanShapeError` if it is not one."""
    if not isinstance(raw, Mapping):
        raise SpanShapeError("a span is not an object")
    trace_id = _hex_id(raw.get("traceId", raw.get("trace_id")), "traceId", 16)
    span_id = _hex_id(raw.get("spanId", raw.get("span_id")), "spanId", 8)
    if not trace_id or not span_id:
        raise SpanShapeError("a span has no traceId or spanId")
    parent = _hex_id(raw.get("parentSpanId", raw.get("parent_span_id")), "parentSpanId", 8)
    start = raw.get("startTimeUnixNano", raw.get("start_time_unix_nano", 0))
    try:
        start_ns = int(start or 0)
    except (TypeError, ValueError):
        raise SpanShapeError("startTimeUnixNano is not an integer") from None
    if not 0 <= start_ns < LATEST_NS:
        raise SpanShapeError("startTimeUnixNano is not a time between 1970 and 9999")
    span = SpanInfo(trace_id, span_id, parent, start_ns)
    attrs = attributes(raw.get("attributes"))
    kind = attrs.get("openinference.span.kind")
    span.kind = kind.upper() if isinstance(kind, str) else ""
    span.input = _text(attrs.get("input.value"))
    span.input_json = attrs.get("input.mime_type") == "application/json"
    span.output = _text(attrs.get("output.value"))
    span.output_json = attrs.get("output.mime_type") == "application/json"
    events = raw.get("events") or []
    if not isinstance(events, list):
        raise SpanShapeError("events is not a list")
    if span.kind not in _READ_KINDS:
        return span  # a CHAIN, EMBEDDING, TOOL… span: its input and output only
    groups = _group(attrs)
    if span.kind == "LLM":
        messages = _oi_messages(groups, "llm.input_messages.")
        span.messages = [(r, c) for r, c in messages if r in ("user", "assistant")]
        replies = [c for r, c in _oi_messages(groups, "llm.output_messages.") if r == "assistant"]
        span.reply = replies[-1] if replies else None
    elif span.kind == "RETRIEVER":
        span.documents = _documents(groups, "retrieval.documents.")
    elif span.kind == "RERANKER":
        span.reranked = _documents(groups, "reranker.output_documents.")
    if span.kind in ("", "LLM"):  # a GenAI span has no OpenInference kind
        genai(span, attrs, groups, events)
    return span


_READ_KINDS = frozenset({"", "LLM", "RETRIEVER", "RERANKER"})
"""The spans whose messages or documents are read: OpenInference's LLM, RETRIEVER and
RERANKER, and spans without an OpenInference kind (the GenAI conventions')."""
