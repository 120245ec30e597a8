"""Importing 100,000 production traces (400,000 spans) of OTLP JSON (issue 37.6).

A trace is what an OpenInference-instrumented RAG pipeline writes: a CHAIN root
(question in, answer out), an EMBEDDING span, a RETRIEVER span with three documents
(id, score, text) and an LLM span (system prompt with the context, the user's
message, the reply); 25 traces per line, as a Collector's file exporter batches
them. Limits:

- ``ragproof import --from otel`` in a child process: at most 60 s of wall time and
  1 GB of peak RSS (``ru_maxrss`` of the child);
- the same import in this process against its floor: ``json.loads`` of every line
  and a walk of every span's attributes into a dict (what any OTLP JSON reader does
  before it can look at a span), plus loading the cases it wrote with
  ``load_dataset`` and writing their canonical texts (what any import into a
  validated dataset does): at most 2.0x, best of N each.

Exits 1 over either; ``--quick`` (2,000 traces, one round) checks only that it runs.

Run: python benchmarks/bench_traces.py [--traces N] [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Limits, add_quick, compare_best

WALL_LIMIT_S = 60.0
RSS_LIMIT_MB = 1024.0
FLOOR_LIMIT = 2.0
PER_LINE = 25
T0 = 1_764_000_000_000_000_000
WORDS = [
    "refund",
    "invoice",
    "password",
    "account",
    "export",
    "billing",
    "plan",
    "team",
    "api",
    "token",
    "limit",
]


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, v in values.items():
        value = {"doubleValue": v} if isinstance(v, float) else {"stringValue": v}
        out.append({"key": key, "value": value})
    return out


def _span(
    trace: str, n: int, parent: int | None, start: int, attrs: dict[str, Any]
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{trace[:8]}{n:08x}",
        "name": f"span {n}",
        "kind": 1,
        "startTimeUnixNano": str(start + n * 1000),
        "endTimeUnixNano": str(start + n * 1000 + 500),
        "attributes": _attrs(attrs),
        "status": {},
    }
    if parent is not None:
        span["parentSpanId"] = f"{trace[:8]}{parent:08x}"
    return span


def trace_spans(i: int, rng: random.Random) -> list[dict[str, Any]]:
    trace = f"{rng.getrandbits(128):032x}"
    question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + f" {i}?"
    answer = " ".join(rng.choice(WORDS) for _ in range(40))
    start = T0 + i * 1_000_000_000
    docs = [(f"docs/{rng.randrange(500)}.md#{rng.randrange(20)}", rng.random()) for _ in range(3)]
    retriever: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": question}
    context = []
    for k, (doc_id, score) in enumerate(docs):
        text = " ".join(rng.choice(WORDS) for _ in range(40))
        context.append(text)
        retriever[f"retrieval.documents.{k}.document.id"] = doc_id
        retriever[f"retrieval.documents.{k}.document.score"] = score
        retriever[f"retrieval.documents.{k}.document.content"] = text
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Answer from the context:\n" + "\n".join(context),
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": question,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
    }
    root = {"openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer}
    return [
        _span(trace, 1, None, start, root),
        _span(trace, 2, 1, start, {"openinference.span.kind": "EMBEDDING"}),
        _span(trace, 3, 1, start, retriever),
        _span(trace, 4, 1, start, llm),
    ]


def write_traces(path: Path, n: int) -> None:
    rng = random.Random(0)
    resource_ = {"attributes": _attrs({"service.name": "rag-api"})}
    with path.open("w", encoding="utf-8") as fh:
        for first in range(0, n, PER_LINE):
            spans = [s for i in range(first, min(n, first + PER_LINE)) for s in trace_spans(i, rng)]
            scope = {"scope": {"name": "openinference"}, "spans": spans}
            fh.write(
                json.dumps({"resourceSpans": [{"resource": resource_, "scopeSpans": [scope]}]})
            )
            fh.write("\n")


def floor(path: Path) -> int:
    """Parse every line and turn every span's attributes into a dict."""
    n = 0
    with path.open("rb") as fh:
        for line in fh:
            doc = json.loads(line)
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        attrs = {
                            a["key"]: next(iter(a["value"].values())) for a in span["attributes"]
                        }
                        n += len(attrs)
    return n


def dataset_floor(cases: Path, out: Path) -> None:
    """Validate the cases an import wrote and write their canonical texts."""
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.fileio import write_atomic

    dataset = load_dataset(cases)
    write_atomic(out, [text + "\n" for text in dataset.canonical_cases])


def in_process(path: Path, out: Path) -> None:
    from pytest_ragproof.cli import main

    out.unlink(missing_ok=True)
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["import", "--from", "otel", str(path), "-o", str(out)])
    if code != 0:
        raise SystemExit(f"the import failed with exit {code}")


def child(path: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MB) of the import in a child process, and its summary."""
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest_ragproof", "import", "--from", "otel"]
    start = time.perf_counter()
    ran = subprocess.run([*command, str(path), "-o", str(out)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if ran.returncode != 0:
        raise SystemExit(f"the import failed: {ran.stderr.strip()[:500]}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    summary = next(line for line in ran.stdout.splitlines() if line.startswith("traces: "))
    return wall, rss, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="N of best of N (floor ratio)")
    add_quick(parser)
    args = parser.parse_args()
    if args.quick:
        args.traces, args.rounds = 2000, 1
    limits = Limits(quick=args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "traces.jsonl", Path(tmp) / "cases.jsonl"
        write_traces(src, args.traces)
        print(f"{args.traces} traces, {4 * args.traces} spans, {src.stat().st_size / 1e6:.0f} MB")
        wall, rss, summary = child(src, out)
        print(summary)
        print(
            f"import in a child process: {wall:.1f} s (limit {WALL_LIMIT_S:.0f} s), "
            f"peak RSS {rss:.0f} MB (limit {RSS_LIMIT_MB:.0f} MB)"
        )
        if wall > WALL_LIMIT_S:
            limits.fail(f"import wall time {wall:.1f} s > {WALL_LIMIT_S:.0f} s")
        if rss > RSS_LIMIT_MB:
            limits.fail(f"import peak RSS {rss:.0f} MB > {RSS_LIMIT_MB:.0f} MB")
        cases, again = Path(tmp) / "written.jsonl", Path(tmp) / "again.jsonl"
        out.replace(cases)

        def baseline() -> None:
            floor(src)
            dataset_floor(cases, again)

        c = compare_best(baseline, lambda: in_process(src, out), rounds=args.rounds)
        limits.check("import vs parsing + validating the cases it writes", c, FLOOR_LIMIT)
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
