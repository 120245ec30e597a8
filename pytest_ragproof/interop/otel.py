"""``ragproof import --from otel TRACES...``: OTLP JSON traces as draft cases.

Reads what the OpenTelemetry Collector's file exporter and the SDK's OTLP JSON
exporters write: one ``ExportTraceServiceRequest`` (``resourceSpans → scopeSpans →
spans``) per line, or one per file (pretty-printed), plain or gzip. Files are read
line by line; each span is reduced at once to what a case needs (``otel_spans.py``)
and spans are grouped by trace id, so a large file never sits in memory whole.

One trace is one draft: the question is the root span's input (``input.value``),
else the last user message of the trace's first LLM span; the user and assistant
messages before that one are the ``conversation_history``. What production did
(its answer, the retrieved and reranked document ids with rank and score, trace and
span ids, start time, service) goes into ``metadata.trace``, never into the expected
answer or sources: the case is ``review_status: pending`` until a reviewer says what
the right answer and sources are. A trace with no recognisable question is skipped
and named by its trace id. Choosing which traces to keep is ``otel_select.py``; GenAI
messages sent as OTLP log records (a logs file given beside) join their span's trace
(``otel_logs.py``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pytest_ragproof.errors import DatasetError
from pytest_ragproof.interop.otel_spans import MAX_TEXT, Doc, SpanInfo, SpanShapeError, span_of
from pytest_ragproof.interop.otlp import as_list, member, resource_service

QUESTION_KEYS = ("question", "query", "query_str", "input", "user_input", "prompt", "message")
"""Members of a JSON ``input.value`` object read as the question, in this order."""

ANSWER_KEYS = ("answer", "output", "response", "result", "text", "content")
"""Members of a JSON ``output.value`` object read as the answer, in this order."""

HINT_OTLP = (
    "give an OTLP JSON trace export: one ExportTraceServiceRequest "
    '({"resourceSpans": [...]}) per line, as the Collector\'s file exporter writes'
)


Key = tuple[int, str]
"""A span's place in its trace: start time (Unix ns), then span id."""


@dataclass(slots=True)
class Trace:
    """What the spans of one trace read so far say, with where its first span was read.

    Spans are reduced as they arrive, so a trace keeps only what its case needs: the
    root (the earliest span without a parent) whole, the place of the earliest span
    (the root of a trace exported without one), the input messages of the earliest
    LLM span that has them, the latest reply, the documents of retriever and
    reranker spans and the ids of those and of LLM spans.
    """

    trace_id: str
    file: str
    line: int
    root: SpanInfo | None = None
    root_service: str | None = None
    first: Key | None = None
    first_service: str | None = None
    any_service: str | None = None
    chat: tuple[Key, list[tuple[str, str]]] | None = None
    reply: tuple[Key, str] | None = None
    documents: list[tuple[Key, str, list[Doc]]] = field(default_factory=list)  # key, kind, docs
    llm: list[Key] = field(default_factory=list)

    def add(self, span: SpanInfo, service: str | None, logged: bool = False) -> None:
        """Add a span read, or (``logged``) the messages its log records carry (otel_logs.py)."""
        key = (span.start_ns, span.span_id)
        if not (span.parent_id or logged) and (
            self.root is None or key < (self.root.start_ns, self.root.span_id)
        ):
            self.root, self.root_service = span, service
        if self.first is None or key < self.first:
            self.first, self.first_service = key, service
        self.any_service = self.any_service or service
        if span.kind == "RETRIEVER":
            self.documents.append((key, span.kind, span.documents))
        elif span.kind == "RERANKER":
            self.documents.append((key, span.kind, span.reranked))
        elif span.kind == "LLM" and not (logged and any(span.span_id == s for _, s in self.llm)):
            self.llm.append(key)
        if span.messages and (self.chat is None or key < self.chat[0]):
            self.chat = (key, span.messages)
        if span.reply is not None and (self.reply is None or key > self.reply[0]):
            self.reply = (key, span.reply)
        if self.root is not None and self.root.output is not None:
            self.reply = None  # the root's output is the answer: no second copy kept


@dataclass(slots=True)
class Candidate:
    """A trace with a recognisable question: the draft case before selection."""

    trace_id: str
    file: str
    line: int
    start_ns: int
    service: str | None
    question: str
    question_from: str
    history: list[dict[str, str]]
    answer: str | None
    retrieved: list[dict[str, Any]]
    reranked: list[dict[str, Any]]
    span_ids: dict[str, Any]

    @property
    def timestamp(self) -> str:
        when = datetime.fromtimestamp(self.start_ns / 1e9, tz=UTC)
        return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _open(path: Path) -> IO[bytes]:
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise DatasetError(
            f"cannot be read ({exc.strerror or type(exc).__name__})",
            source=str(path),
            hint="check the path and its permissions",
        ) from None
    if raw.read(2) == b"\x1f\x8b":
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    raw.seek(0)
    return raw


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of ``path`` (gunzipped), decoded, with their 1-based numbers."""
    lineno = 0
    try:
        with _open(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise DatasetError(
                        "is not UTF-8 text",
                        source=str(path),
                        line=lineno,
                        hint="give the OTLP JSON export as the exporter wrote it",
                    ) from None
                if lineno == 1:
                    text = text.removeprefix("\ufeff")
                if text.strip():
                    yield lineno, text
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DatasetError(
            f"the gzip data is damaged or cut short ({type(exc).__name__})",
            source=str(path),
            line=lineno + 1,
            hint="re-copy the export, or gunzip it to see how much of it is readable",
        ) from None


def _json_error(path: Path, line: int, exc: json.JSONDecodeError, text: str) -> DatasetError:
    """The error of ``exc`` in the JSON ``text`` (a line, or the whole file)."""
    # at the end of the text, or in a string that runs to the end of it
    cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    reason = (
        "the JSON is cut short (was the export still being written?)"
        if cut
        else f"invalid JSON: {exc.msg} (column {exc.colno})"
    )
    hint = "remove or complete that line" if cut else "fix the JSON syntax there"
    return DatasetError(reason, source=str(path), line=line, hint=hint)


def _parse(path: Path, line: int, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, line, exc, text) from None
    except (ValueError, RecursionError):
        raise DatasetError(
            "holds a value too deeply nested or an integer too long to read",
            source=str(path),
            line=line,
            hint="remove that line",
        ) from None


def requests(path: Path) -> Iterator[tuple[int, Any]]:
    """Each JSON document of ``path`` with its first line: JSONL, or one whole-file JSON."""
    lines = _lines(path)
    first = next(lines, None)
    if first is None:
        return
    lineno, text = first
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        yield lineno, _whole(path, lineno, text)
        return
    yield lineno, value
    for lineno, text in lines:
        yield lineno, _parse(path, lineno, text)


def _whole(path: Path, first_line: int, first_text: str) -> Any:
    """The file as one JSON document (a pretty-printed export); if it is not one, the
    error of its first line as JSONL (unless that line only opens a document)."""
    with _open(path) as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        return json.loads(text)
    except UnicodeDecodeError:
        raise DatasetError("is not UTF-8 text", source=str(path), hint=HINT_OTLP) from None
    except json.JSONDecodeError as exc:
        if first_text.strip() in ("{", "["):
            raise _json_error(path, exc.lineno, exc, text) from None
    except (ValueError, RecursionError):
        pass
    return _parse(path, first_line, first_text)  # raises the first line's own error


def _spans(doc: Any) -> Iterator[tuple[str | None, Any]]:
    """(service.name, raw span) of one request; SpanShapeError where it is no OTLP traces."""

    if not isinstance(doc, Mapping):
        raise SpanShapeError(f"a JSON {type(doc).__name__}, not an OTLP request object")
    resource_spans = member(doc, "resourceSpans", "resource_spans")
    if resource_spans is None:
        raise SpanShapeError(
            "OTLP metrics, not traces"
            if "resourceMetrics" in doc
            else "not an OTLP trace export (no resourceSpans)"
        )
    for rs in as_list(resource_spans, "resourceSpans"):
        if not isinstance(rs, Mapping):
            raise SpanShapeError("a resourceSpans entry is not an object")
        service = resource_service(rs)
        scopes = member(rs, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")
        for scope in as_list(scopes, "scopeSpans"):
            if not isinstance(scope, Mapping):
                raise SpanShapeError("a scopeSpans entry is not an object")
            for raw in as_list(scope.get("spans"), "spans"):
                yield service, raw


def read_traces(paths: list[Path]) -> tuple[dict[str, Trace], int]:
    """Every trace of ``paths`` (spans of one trace may be spread over lines and files)
    and the number of spans read."""
    from pytest_ragproof.interop.otel_logs import LogRecords

    traces: dict[str, Trace] = {}
    logs = LogRecords()
    n_spans = 0
    for path in paths:
        for lineno, doc in requests(path):
            try:
                if isinstance(doc, Mapping) and ("resourceLogs" in doc or "resource_logs" in doc):
                    logs.add(doc, str(path), lineno)
                    continue
                for service, raw in _spans(doc):
                    span = span_of(raw)
                    trace = traces.get(span.trace_id)
                    if trace is None:
                        trace = traces[span.trace_id] = Trace(span.trace_id, str(path), lineno)
                    trace.add(span, service)
                    n_spans += 1
            except SpanShapeError as exc:
                source = str(path)
                raise DatasetError(str(exc), source=source, line=lineno, hint=HINT_OTLP) from None
    for span, logged in logs.read():
        trace = traces.get(span.trace_id)
        if trace is None:
            trace = traces[span.trace_id] = Trace(span.trace_id, logged.file, logged.line)
        trace.add(span, logged.service, logged=True)
    return traces, n_spans


def _decoded(text: str, is_json: bool) -> Any:
    if not is_json and not text.lstrip().startswith(("{", '"')):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None if is_json else text


def _from_input(text: str, is_json: bool) -> str | None:
    from pytest_ragproof.interop.otel_spans import json_messages

    value = _decoded(text, is_json)
    if isinstance(value, str):
        return value if value.strip() else None
    if not isinstance(value, Mapping):
        return None
    for key in QUESTION_KEYS:
        if isinstance(value.get(key), str) and value[key].strip():
            return str(value[key])
    users = [c for r, c in json_messages(value.get("messages")) if r == "user"]
    return users[-1] if users else None


def _from_output(text: str, is_json: bool) -> str | None:
    value = _decoded(text, is_json)
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, Mapping):
        for key in ANSWER_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key])
    return None


def _docs(docs: list[Doc]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rank, (doc_id, score, id_from) in enumerate(docs, start=1):
        entry: dict[str, Any] = {"id": doc_id, "rank": rank}
        if score is not None:
            entry["score"] = score
        if id_from is not None:
            entry["id_from"] = id_from
        out.append(entry)
    return out


def assemble(trace: Trace) -> Candidate | str:
    """The candidate case of ``trace``, or why it has none."""
    root = trace.root
    if root is not None:
        start_ns, root_id, service = root.start_ns, root.span_id, trace.root_service
    else:
        assert trace.first is not None  # a trace exists once a span of it was read
        (start_ns, root_id), service = trace.first, trace.first_service
    question, origin = None, ""
    if root is not None and root.input is not None:
        question, origin = _from_input(root.input, root.input_json), "root span input.value"
    history: list[dict[str, str]] = []
    if trace.chat is not None:
        messages = trace.chat[1]
        last_user = max((i for i, (r, _) in enumerate(messages) if r == "user"), default=-1)
        if question is None and last_user >= 0:
            question = messages[last_user][1]
            origin = "last user message of the first LLM span"
        earlier = messages[:last_user] if last_user >= 0 else []
        history = [{"role": r, "content": c} for r, c in earlier]
    if question is None:
        return "no recognisable question"
    answer = None
    if root is not None and root.output is not None:
        answer = _from_output(root.output, root.output_json)
    if answer is None and trace.reply is not None:
        answer = trace.reply[1]
    texts = [question, answer or "", *(m["content"] for m in history)]
    if any(len(t) > MAX_TEXT for t in texts):
        return f"a question, answer or message over {MAX_TEXT:,} characters"
    documents = sorted(trace.documents, key=lambda d: d[0])
    span_ids: dict[str, Any] = {"root": root_id}
    for name, keys in (
        ("retriever", [k for k, kind, _ in documents if kind == "RETRIEVER"]),
        ("reranker", [k for k, kind, _ in documents if kind == "RERANKER"]),
        ("llm", sorted(trace.llm)),
    ):
        if keys:
            span_ids[name] = [span_id for _, span_id in keys]
    return Candidate(
        trace_id=trace.trace_id,
        file=trace.file,
        line=trace.line,
        start_ns=start_ns,
        service=service or trace.any_service,
        question=question,
        question_from=origin,
        history=history,
        answer=answer,
        retrieved=_docs([d for _, kind, docs in documents if kind == "RETRIEVER" for d in docs]),
        reranked=_docs([d for _, kind, docs in documents if kind == "RERANKER" for d in docs]),
        span_ids=span_ids,
    )
