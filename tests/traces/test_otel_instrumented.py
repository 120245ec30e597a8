"""Traces written by real instrumentation, imported field by field.

The pipelines of ``pipelines.py`` (LlamaIndex and LangChain under OpenInference, the
openai SDK under openai-v2's GenAI conventions) run once per test session, each in a
subprocess of its own (instrumentors patch libraries globally), all at once, against
the OpenAI-compatible stub on 127.0.0.1. Under xdist the first worker runs them and
the others read what it wrote. Each imported case is compared with what the library
itself returned (answer, source nodes or documents) and what the SDK ended (ids,
start times), not with the exported file.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import load_dataset
from tests.interop.conftest import Ran
from tests.llm_stub import Action, StubServer, reply
from tests.traces import pipelines
from tests.traces.otlp import read_jsonl

Cli = Callable[..., Ran]

NAMES = ("llama_index", "langchain", "genai-span", "genai-event", "genai-legacy")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Pipeline:
    """One pipeline's run: its folder, exit code, output and run.json."""

    folder: Path
    code: int
    output: str
    report: dict[str, Any]

    @property
    def traces(self) -> Path:
        return self.folder / "traces.jsonl"


def _answer(body: dict[str, Any]) -> Action:
    content = body["messages"][-1]["content"]
    if not isinstance(content, str):  # content parts
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return reply(pipelines.stub_answer(content))


def _run_all(base: Path) -> dict[str, dict[str, Any]]:
    stub = StubServer().start()
    stub.set_handler(_answer)
    started: dict[str, subprocess.Popen[str]] = {}
    try:
        for name in NAMES:
            folder = base / name
            folder.mkdir()
            started[name] = subprocess.Popen(
                [sys.executable, "-m", "tests.traces.pipelines", name, stub.url, str(folder)],
                cwd=ROOT,
                env=pipelines.environment(stub.url, name),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        done = {}
        for name, proc in started.items():
            output, _ = proc.communicate(timeout=600)
            done[name] = {"code": proc.returncode, "output": output[-4000:]}
        return done
    finally:
        for proc in started.values():
            if proc.poll() is None:
                proc.kill()
        stub.stop()


@pytest.fixture(scope="session")
def instrumented(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pipeline]:
    """Every pipeline, run once per session (across xdist workers: a file lock)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the workers' base folders are siblings
    base = shared / "instrumented-pipelines"
    base.mkdir(exist_ok=True)
    with (base / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "done.json").exists():
            (base / "done.json").write_text(json.dumps(_run_all(base)), encoding="utf-8")
    done = json.loads((base / "done.json").read_text(encoding="utf-8"))
    runs = {}
    for name, result in done.items():
        report_file = base / name / "run.json"
        report = json.loads(report_file.read_text()) if report_file.exists() else {}
        runs[name] = Pipeline(base / name, result["code"], result["output"], report)
    return runs


def _ran(instrumented: dict[str, Pipeline], name: str) -> Pipeline:
    run = instrumented[name]
    assert run.code == 0, f"{name} exited {run.code}:\n{run.output}"
    assert run.report["refused"] == [], f"{name} tried to leave the machine"
    return run


def _imported(cli: Cli, tmp_path: Path, run: Pipeline) -> tuple[Ran, list[dict[str, Any]]]:
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", run.traces, "-o", out)
    assert ran.code == 0, ran.err
    assert cli("validate", out).code == 0
    return ran, read_jsonl(out)


def _when(ns: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ns / 1000)


def _expected_docs(retrieved: list[list[Any]], id_from: str | None) -> list[dict[str, Any]]:
    out = []
    for rank, (doc_id, score) in enumerate(retrieved, start=1):
        entry: dict[str, Any] = {"id": doc_id, "rank": rank}
        if score is not None:
            entry["score"] = score
        if id_from is not None:
            entry["id_from"] = id_from
        out.append(entry)
    return out


def _check(case: dict[str, Any], turn: dict[str, Any], run: Pipeline, service: str) -> None:
    """``case`` is what ``turn`` asked and got, with the ids and start the SDK ended."""
    spans = [s for s in run.report["spans"] if s["trace_id"] == turn["trace_id"]]
    [root] = [s for s in spans if s["parent"] is None]
    assert case["id"] == f"otel-{turn['trace_id']}"
    assert case["question"] == turn["question"]
    assert case["review_status"] == "pending"
    assert "expected_answer" not in case and "expected_source_ids" not in case
    if turn["history"]:
        assert case["question_type"] == "conversational"
        assert case["conversation_history"] == [
            {"role": role, "content": content} for role, content in turn["history"]
        ]
    else:
        assert "conversation_history" not in case
    assert case["metadata"]["imported_from"] == "otel"
    trace = case["metadata"]["trace"]
    assert trace["trace_id"] == turn["trace_id"]
    assert trace["service"] == service
    assert trace["answer"] == turn["answer"]
    ended = abs(datetime.fromisoformat(trace["timestamp"]) - _when(root["start_ns"]))
    assert trace["timestamp"].endswith("Z") and ended <= timedelta(microseconds=1)

    def of_kind(kind: str) -> list[str]:
        in_order = sorted(spans, key=lambda s: (s["start_ns"], s["span_id"]))
        return [s["span_id"] for s in in_order if s["kind"] == kind]

    expected_ids: dict[str, Any] = {"root": root["span_id"]}
    for name, kind in (("retriever", "RETRIEVER"), ("llm", "LLM")):
        if of_kind(kind):
            expected_ids[name] = of_kind(kind)
    assert trace["span_ids"] == expected_ids


def test_llama_index_under_openinference(
    instrumented: dict[str, Pipeline], cli: Cli, tmp_path: Path
) -> None:
    run = _ran(instrumented, "llama_index")
    ran, cases = _imported(cli, tmp_path, run)
    assert "traces: 3 read" in ran.out and "3 kept, 0 skipped" in ran.out
    assert len(cases) == len(run.report["turns"]) == 3
    for case, turn in zip(cases, run.report["turns"], strict=True):
        _check(case, turn, run, pipelines.SERVICE["llama_index"])
        # the source nodes LlamaIndex answered with: node ids, BM25 scores, in rank order
        assert case["metadata"]["trace"]["retrieved"] == _expected_docs(turn["retrieved"], None)
    # the condense step's rewrite is neither the question nor the answer of the follow-up
    assert pipelines.STANDALONE not in json.dumps(cases[2])
    assert load_dataset(tmp_path / "cases.jsonl").n_pending == 3


def test_langchain_under_openinference(
    instrumented: dict[str, Pipeline], cli: Cli, tmp_path: Path
) -> None:
    run = _ran(instrumented, "langchain")
    _, cases = _imported(cli, tmp_path, run)
    assert len(cases) == len(run.report["turns"]) == 3
    for case, turn in zip(cases, run.report["turns"], strict=True):
        _check(case, turn, run, pipelines.SERVICE["langchain"])
        # no document.id and no score on LangChain's retriever spans: the loaders' source
        retrieved = case["metadata"]["trace"]["retrieved"]
        assert retrieved == _expected_docs(turn["retrieved"], "metadata.source")
    assert cases[2]["metadata"]["trace"]["retrieved"][0]["id"] == "billing.md"


def test_openai_sdk_under_genai_conventions_content_on_the_span(
    instrumented: dict[str, Pipeline], cli: Cli, tmp_path: Path
) -> None:
    run = _ran(instrumented, "genai-span")
    ran, cases = _imported(cli, tmp_path, run)
    assert len(cases) == len(run.report["turns"]) == 3
    for case, turn in zip(cases, run.report["turns"], strict=True):
        _check(case, turn, run, pipelines.SERVICE["genai"])
        assert case["metadata"]["trace"]["retrieved"] == []
    # the first question ran inside an application span without attributes: the root
    assert (
        cases[0]["metadata"]["trace"]["span_ids"]["root"]
        not in (cases[0]["metadata"]["trace"]["span_ids"]["llm"])
    )
    assert "last user message of the first LLM span -> question: 3" in " ".join(ran.out.split())


@pytest.mark.parametrize(
    ("name", "event"),
    [
        ("genai-event", "gen_ai.client.inference.operation.details"),
        ("genai-legacy", "gen_ai.user.message"),
    ],
)
def test_openai_sdk_content_in_log_records(
    instrumented: dict[str, Pipeline], cli: Cli, tmp_path: Path, name: str, event: str
) -> None:
    run = _ran(instrumented, name)
    logs = run.folder / "logs.jsonl"
    # the messages went to log records on the chat span's ids, not on the span
    records = [
        r
        for line in read_jsonl(logs)
        for rl in line["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert event in {r.get("eventName") for r in records}
    assert {r["traceId"] for r in records} == {t["trace_id"] for t in run.report["turns"]}
    # the traces alone hold no question: every trace is skipped and named, nothing written
    out = tmp_path / "alone.jsonl"
    ran = cli("import", "--from", "otel", run.traces, "-o", out)
    assert ran.code == 1 and not out.exists()
    said = " ".join((ran.out + ran.err).split())
    assert "3 read (4 span(s) in 1 file(s)), 0 kept, 3 skipped" in said
    assert "no recognisable question" in said
    assert all(t["trace_id"] in said for t in run.report["turns"])
    assert "Traceback" not in said
    # with the log records beside them (either order), the same cases as on the span
    for files in ((run.traces, logs), (logs, run.traces)):
        out = tmp_path / "cases.jsonl"
        out.unlink(missing_ok=True)
        ran = cli("import", "--from", "otel", *files, "-o", out)
        assert ran.code == 0, ran.err
        assert "3 read (4 span(s) in 2 file(s)), 3 kept, 0 skipped" in " ".join(ran.out.split())
        cases = read_jsonl(out)
        for case, turn in zip(cases, run.report["turns"], strict=True):
            _check(case, turn, run, pipelines.SERVICE["genai"])


def test_the_guard_refuses_addresses_outside_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    attempted: list[Any] = []

    def connect(self: socket.socket, address: Any) -> None:
        attempted.append(address)  # stands in for the real connect: nothing is sent

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, address: connect(self, address))
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: attempted.append(host))
    refused: list[str] = []
    pipelines.install_guard(refused)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.connect(("127.0.0.1", 9))
        sock.connect(("localhost", 9))
        for address in (("192.0.2.1", 443), ("10.0.0.1", 80), ("example.org", 443)):
            with pytest.raises(OSError, match="network guard"):
                sock.connect(address)
        with pytest.raises(OSError, match="network guard"):
            sock.connect_ex(("8.8.8.8", 53))
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock6:
        sock6.connect(("::1", 9, 0, 0))
    socket.getaddrinfo("127.0.0.1", 80)
    with pytest.raises(OSError, match="network guard"):
        socket.getaddrinfo("files.pythonhosted.org", 443)
    assert attempted == [("127.0.0.1", 9), ("localhost", 9), ("::1", 9, 0, 0), "127.0.0.1"]
    assert len(refused) == 5


def test_the_stub_answers_each_turn_as_the_pipelines_expect() -> None:
    assert (
        pipelines.stub_answer(f"Context: ...\nQuestion: {pipelines.FIRST}")
        == (pipelines.ANSWERS[pipelines.FIRST])
    )
    history = f"user: {pipelines.FIRST}\nFollow up: {pipelines.FOLLOW_UP}"
    assert pipelines.stub_answer("Please rephrase this. " + history) == pipelines.STANDALONE
    assert pipelines.stub_answer(pipelines.STANDALONE) == pipelines.ANSWERS[pipelines.FOLLOW_UP]
    assert pipelines.stub_answer(history) == pipelines.ANSWERS[pipelines.FOLLOW_UP]
    assert pipelines.stub_answer("Something else?") == "I do not know."
