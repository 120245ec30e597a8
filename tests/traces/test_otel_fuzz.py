"""Mutated and generated OTLP JSON into ``ragproof import --from otel``: exit 0 with a valid
dataset, or exit 1 with one error naming the file (and its line, for a line's error);
never a traceback, never another exit code. Derandomized: the same files each run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_ragproof import load_dataset
from tests.interop.test_fuzz import FUZZ, run_cli
from tests.traces.otlp import rag_trace, request

NOTHING = "no trace could be imported"  # the summary above it names every trace


def check(path: Path) -> int:
    out = path.with_name("imported.jsonl")
    out.unlink(missing_ok=True)
    code, stdout, stderr = run_cli("import", "--from", "otel", path, "-o", out)
    assert "Traceback" not in stdout + stderr
    assert code in (0, 1), stderr
    if code == 1:
        [error] = [line for line in stderr.splitlines() if "ragproof import: error:" in line]
        assert str(path) in error
        assert re.search(r"\bline \d+", error) or NOTHING in error, stderr
        assert not out.exists()
    else:
        assert len(load_dataset(out)) >= 1
    return code


LINES = [json.dumps(request(rag_trace(i + 1, f"Question {i}?", start=i))) for i in range(3)]
TEXT = "\n".join(LINES) + "\n"


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(TEXT)),
            st.integers(0, 40),
            st.sampled_from(['"', "{", "}", "[", "]", ",", ":", "\n", "0", "x", "\\", "\x00", ""]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_files(tmp_path_factory: Any, edits: list[tuple[int, int, str]]) -> None:
    text = TEXT
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut :]
    path = tmp_path_factory.mktemp("fuzz") / "traces.jsonl"
    path.write_text(text, encoding="utf-8")
    check(path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
ANY_VALUE_KEYS = st.sampled_from(
    ["stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue", "x"]
)
FIELDS = st.sampled_from(
    [
        "openinference.span.kind",
        "input.value",
        "input.mime_type",
        "output.value",
        "retrieval.documents.0.document.id",
        "retrieval.documents.0.document.score",
        "llm.input_messages.0.message.role",
        "llm.input_messages.0.message.content",
        "gen_ai.input.messages",
        "gen_ai.prompt.0.content",
    ]
)
SPAN_FIELDS = st.sampled_from(
    ["traceId", "spanId", "parentSpanId", "startTimeUnixNano", "attributes", "events"]
)


@FUZZ
@given(
    st.lists(st.tuples(FIELDS, ANY_VALUE_KEYS, JSON), max_size=5),
    st.lists(st.tuples(SPAN_FIELDS, JSON), max_size=2),
)
def test_generated_attribute_values_and_span_fields(
    tmp_path_factory: Any,
    attributes: list[tuple[str, str, Any]],
    fields: list[tuple[str, Any]],
) -> None:
    spans = rag_trace(1, "Question?")
    for key, kind, value in attributes:
        spans[0]["attributes"].append({"key": key, "value": {kind: value}})
    for name, value in fields:
        spans[1][name] = value
    path = tmp_path_factory.mktemp("fuzz") / "traces.jsonl"
    path.write_text(json.dumps(request(spans)) + "\n", encoding="utf-8")
    check(path)
