"""OTLP log records that carry a span's GenAI messages.

Some GenAI instrumentations send the message text as log records instead of on the
span: opentelemetry-instrumentation-openai-v2 with the v1.30 conventions and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` writes one record a
message (``gen_ai.system|user|assistant|tool.message`` with body ``{content}``,
``gen_ai.choice`` with body ``{index, finish_reason, message}``); with the latest
conventions and ``event_only``, one ``gen_ai.client.inference.operation.details``
record (``gen_ai.input.messages`` / ``gen_ai.output.messages`` as attributes).

A file of OTLP logs (``ExportLogsServiceRequest``: ``resourceLogs → scopeLogs →
logRecords``, as the SDK's and the Collector's file exporters write it) is read
beside the traces. A record's event name is its ``eventName`` (or its ``event.name``
attribute, older SDKs); records not named ``gen_ai.*`` and records outside a span
(no ``traceId``/``spanId``) are passed over. The records of one span are read as that
span's events (``otel_spans.genai``) and join its trace by the trace id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_ragproof.interop.otel_spans import (
    LATEST_NS,
    SpanInfo,
    SpanShapeError,
    _hex_id,
    any_value,
    attributes,
    genai,
)
from pytest_ragproof.interop.otlp import as_list, resource_service


@dataclass(slots=True)
class LoggedSpan:
    """The GenAI records of one span, with where its first one was read."""

    file: str
    line: int
    service: str | None
    start_ns: int
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)  # time first


def _time(record: Mapping[str, Any]) -> int:
    raw = record.get("timeUnixNano") or record.get("observedTimeUnixNano") or 0
    try:
        when = int(raw)
    except (TypeError, ValueError):
        raise SpanShapeError("a log record's timeUnixNano is not an integer") from None
    if not 0 <= when < LATEST_NS:
        raise SpanShapeError("a log record's time is not a time between 1970 and 9999")
    return when


EVENT_KEYS = (
    "content",
    "message",
    "gen_ai.event.content",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.prompt",
    "gen_ai.completion",
)
"""The members of a record (attributes, then its body's) that hold messages: only these
are kept until the files are read."""


def _event(record: Any) -> tuple[str, str, str, dict[str, Any]] | None:
    """(trace id, span id, event name, attributes and body members) of a GenAI record."""
    if not isinstance(record, Mapping):
        raise SpanShapeError("a log record is not an object")
    attrs = attributes(record.get("attributes"))
    name = record.get("eventName") or attrs.get("event.name")
    if not isinstance(name, str) or not name.startswith("gen_ai."):
        return None
    trace_id = _hex_id(record.get("traceId", record.get("trace_id")), "traceId", 16)
    span_id = _hex_id(record.get("spanId", record.get("span_id")), "spanId", 8)
    if not trace_id or not span_id:
        return None  # outside any span: no trace to join
    body = record.get("body")
    value = any_value(body) if body else None
    if isinstance(value, Mapping):
        attrs.update(value)
    elif isinstance(value, str):
        attrs.setdefault("content", value)
    return trace_id, span_id, name, {k: attrs[k] for k in EVENT_KEYS if k in attrs}


class LogRecords:
    """The GenAI log records of the files read, by span."""

    def __init__(self) -> None:
        self.spans: dict[tuple[str, str], LoggedSpan] = {}

    def add(self, doc: Mapping[str, Any], file: str, line: int) -> None:
        """The records of one ``ExportLogsServiceRequest``; SpanShapeError if it is none."""
        for rl in as_list(doc.get("resourceLogs", doc.get("resource_logs")), "resourceLogs"):
            if not isinstance(rl, Mapping):
                raise SpanShapeError("a resourceLogs entry is not an object")
            service = resource_service(rl)
            for scope in as_list(rl.get("scopeLogs", rl.get("scope_logs")), "scopeLogs"):
                if not isinstance(scope, Mapping):
                    raise SpanShapeError("a scopeLogs entry is not an object")
                records = scope.get("logRecords", scope.get("log_records"))
                for record in as_list(records, "logRecords"):
                    event = _event(record)
                    if event is None:
                        continue
                    trace_id, span_id, name, attrs = event
                    when = _time(record)
                    logged = self.spans.get((trace_id, span_id))
                    if logged is None:
                        logged = LoggedSpan(file, line, service, when)
                        self.spans[trace_id, span_id] = logged
                    logged.start_ns = min(logged.start_ns, when)
                    logged.events.append((when, name, attrs))

    def read(self) -> Iterator[tuple[SpanInfo, LoggedSpan]]:
        """Each span with a question or an answer in its records, as a GenAI LLM span."""
        for (trace_id, span_id), logged in self.spans.items():
            span = SpanInfo(trace_id, span_id, "", logged.start_ns)
            in_order = sorted(logged.events, key=lambda e: e[0])  # stable: file order for ties
            genai(span, {}, {}, [(name, attrs) for _, name, attrs in in_order])
            if span.messages or span.reply is not None:
                yield span, logged
