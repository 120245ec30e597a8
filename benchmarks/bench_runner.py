"""The pytest runner's performance figures, as ratios measured in one run.

1. startup: `pytest --co` of a one-test project with the plugin installed and
   unused vs the same with `-p no:ragproof` (interleaved runs, CPU time; limit 1.10),
   and which heavy modules an in-process `pytest.main` imported beyond the same run
   with `-p no:ragproof` (must be none: other installed plugins may import some).
2. overhead, the realistic case: 5,000 qa cases with an expected answer and
   expected source ids, and a session-scoped pipeline returning an answer and five
   contexts (ids and text), so every retrieval metric (k 1,3,5,10), every answer
   metric and `abstained` is computed and the default case threshold applies;
   vs a plain `@pytest.mark.parametrize` over as many ids whose body does what
   a hand-written test does before its own checks: look the question up and call
   the same pipeline fixture (same outputs). The plain side scores nothing, so the
   ratio is what ragproof adds (limit 1.5, on the child processes' CPU time: wall
   time on a shared machine measures the neighbours too; it is printed beside).
   Then the per-case split: wall and CPU time per case of each side, and
   ragproof's own per-case work timed in-process (load, record, pipeline call,
   scoring, report round trip, end of run); the rest of the difference is
   pytest's work for ragproof's items.
3. concurrency: 200 cases whose pipeline sleeps 100 ms, `--ragproof-concurrency=16`
   vs 1, for a sync and an async pipeline (limit 0.2).
4. repeat: 100 cases, `--ragproof-repeat=5`, a pipeline sleeping 100 ms,
   `--ragproof-concurrency=16` vs 1 (five sequential calls per case: 500 calls one
   after another), for a sync and an async pipeline (limit 0.25).

Exits 1 when a figure is over its limit; `--quick` runs small sizes and checks
only that the script runs (see `_common`). Longer than most modules: four
benchmarks, each with the project it builds.

Run: python benchmarks/bench_runner.py [--only startup,overhead,concurrency,repeat]
     [--runs N] [--rounds N] [--cases N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Comparison, Limits, add_quick, compare, report

# Like a user's CI, let Python cache bytecode (this machine sets PYTHONDONTWRITEBYTECODE,
# which would make every run recompile and re-assertion-rewrite every plugin module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONWARNINGS"] = "ignore"
ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="ragproof-bench-pycache-")
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"]


@dataclass
class Runs:
    """Wall and CPU seconds (user + system) of each run of one command."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(cmd: list[str], cwd: Path, expect: str = "", runs: Runs | None = None) -> float:
    """Wall seconds of one run of ``cmd``; its wall and CPU seconds go to ``runs``."""
    cpu = _cpu_of_children()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if runs is not None:
        runs.wall.append(elapsed)
        runs.cpu.append(_cpu_of_children() - cpu)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")
    if expect and expect not in proc.stdout:
        # Both sides must run exactly what they claim to (e.g. not also collect the other).
        raise SystemExit(f"expected {expect!r} from {' '.join(cmd)}:\n{proc.stdout[-500:]}")
    return elapsed


def _interleaved(
    a: list[str], b: list[str], cwd: Path, runs: int, expect: tuple[str, str] = ("", "")
) -> tuple[Comparison, Comparison]:
    """Wall-time and CPU-time comparisons of ``a`` (baseline) and ``b``, run alternately."""
    if runs > 1:  # warm-up: fill the bytecode cache (not worth it for a quick single run)
        _time(a, cwd, expect[0]), _time(b, cwd, expect[1])
    base, cand = Runs(), Runs()
    wall = compare(
        lambda: _time(a, cwd, expect[0], base), lambda: _time(b, cwd, expect[1], cand), rounds=runs
    )
    pairs = zip(base.cpu, cand.cpu, strict=True)
    cpu = Comparison(
        statistics.median(base.cpu),
        statistics.median(cand.cpu),
        tuple(c / b for b, c in pairs if b > 0),
    )
    return wall, cpu


def startup(tmp: Path, runs: int, limits: Limits) -> None:
    proj = tmp / "startup"
    proj.mkdir()
    (proj / "test_one.py").write_text("def test_one():\n    pass\n")
    wall, cpu = _interleaved([*BASE, "--co", "-p", "no:ragproof"], [*BASE, "--co"], proj, runs)
    print(report(f"startup pytest --co, wall time ({runs} interleaved runs each)", wall, 1.10))
    limits.check(f"startup pytest --co, CPU time ({runs} interleaved runs each)", cpu, 1.10)
    # Other installed plugins may import some of them (langsmith's imports pydantic): what
    # counts is what ragproof adds to the same run with it left out.
    heavy: dict[str, list[str]] = {}
    for label, extra in (("with ragproof", ""), ("without it", ", '-p', 'no:ragproof'")):
        code = (
            f"import sys, pytest; pytest.main(['--co', '-q', '-p', 'no:cacheprovider'{extra}]);"
            "print('HEAVY', *(m for m in ('litellm', 'pypdf', 'docx', 'pydantic')"
            " if m in sys.modules))"
        )
        run = subprocess.run(
            [sys.executable, "-c", code],
            cwd=proj,
            env=ENV,
            capture_output=True,
            text=True,
            check=True,
        )
        [line] = [x for x in run.stdout.splitlines() if x.startswith("HEAVY")]
        heavy[label] = line.split()[1:]
    added = sorted(set(heavy["with ragproof"]) - set(heavy["without it"]))
    print(
        "heavy modules imported by an in-process pytest.main with the plugin unused: "
        f"{heavy['with ragproof']} ({heavy['without it']} without ragproof: other plugins')"
    )
    if added:
        limits.fail(f"heavy modules ragproof imports while unused: {added} (must be none)")


TOPICS = ("refunds", "shipping", "routers", "modems", "invoices", "warranty", "accounts")
WORDS = (
    "the",
    "order",
    "is",
    "refunded",
    "within",
    "days",
    "after",
    "a",
    "request",
    "customer",
    "must",
    "keep",
    "receipt",
    "support",
    "ticket",
    "team",
    "reply",
    "business",
    "policy",
)


def realistic_project(root: Path, n: int) -> tuple[Path, Path]:
    """A ragproof project and a plain parametrized one over the same ``n`` qa cases.

    Each case has an expected answer and expected source ids; the pipeline (a
    lookup in a table written beside the projects) returns an answer and five
    contexts with ids and text, one of them relevant, so every retrieval metric
    (k 1,3,5,10), every answer metric and ``abstained`` is computed for every
    case and the default case threshold ``qa:hit@5>=1`` passes.
    """
    import random

    rng = random.Random(0)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    cases: list[dict[str, object]] = []
    outputs: dict[str, object] = {}
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        question = f"What does rule {i} say about {topic}?"
        relevant = [f"{topic}.md#{i % 11}", f"{topic}.md#{(i + 3) % 11}"][: 1 + i % 2]
        expected = f"Rule {i}: {text(24)}."
        cases.append(
            {
                "id": f"c{i:05d}",
                "kind": "qa",
                "question": question,
                "expected_answer": expected,
                "expected_source_ids": relevant,
            }
        )
        ids = [f"{TOPICS[(i + j) % len(TOPICS)]}.md#{(i * 7 + j) % 13}" for j in range(1, 5)]
        ids.insert(i % 5, relevant[0])
        answer = f"Rule {i}: " + " ".join(expected.split()[2 : 2 + 12 + i % 10]) + f" {text(6)}."
        outputs[question] = {
            "answer": answer,
            "contexts": [{"id": cid, "text": text(60)} for cid in ids],
        }
    table = root / "pipeline_outputs.json"
    table.write_text(json.dumps(outputs))
    fixture = (
        "import json, pytest\n\n"
        f"OUTPUTS = json.loads(open({str(table)!r}).read())\n\n\n"
        "@pytest.fixture(scope='session')\ndef rag_pipeline():\n"
        "    def pipeline(question):\n        return OUTPUTS[question]\n\n"
        "    return pipeline\n"
    )
    proj = root / "overhead"
    proj.mkdir()
    src = proj / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in cases))
    from pytest_ragproof import freeze

    freeze(src)
    (proj / "conftest.py").write_text(fixture)
    # A sibling, not a subdirectory: a plain directory under the ragproof project
    # would be collected by the ragproof run too (no path argument means the rootdir).
    plain = root / "overhead-plain"
    plain.mkdir()
    (plain / "conftest.py").write_text(fixture)
    questions = {c["id"]: c["question"] for c in cases}
    (plain / "questions.json").write_text(json.dumps(questions))
    (plain / "test_plain.py").write_text(
        "import json, pathlib, pytest\n\n"
        "QUESTIONS = json.loads((pathlib.Path(__file__).parent / 'questions.json').read_text())\n"
        "\n\n@pytest.mark.parametrize('case_id', list(QUESTIONS))\n"
        "def test_case(case_id, rag_pipeline):\n"
        "    rag_pipeline(QUESTIONS[case_id])\n"
    )
    return proj, plain


def ragproof_work(frozen: Path, table: Path) -> dict[str, float]:
    """Seconds per case of ragproof's own work on these cases, in this process.

    The same functions a pytest run calls once per run before the cases (load
    and verify the frozen file, select the cases), per case (a fresh record, the
    timed pipeline call, normalize + score + case thresholds, the record's round
    trip through the test report) and once per run after them (gates, results
    document, summary lines), timed with perf_counter without pytest around them.
    """
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.execution.call import LoopOwner
    from pytest_ragproof.execution.case_path import CasePath
    from pytest_ragproof.execution.execute import call_case
    from pytest_ragproof.reporting.components import format_components
    from pytest_ragproof.verdict.config import make_config
    from pytest_ragproof.verdict.gates import (
        all_aggregates,
        evaluate_aggregates,
        summarize_case_thresholds,
    )
    from pytest_ragproof.verdict.record import CaseRecord
    from pytest_ragproof.verdict.results import build_results, dataset_entry
    from pytest_ragproof.verdict.summary import latency_line, threshold_table, worst_cases

    clock = time.perf_counter
    outputs = json.loads(table.read_text())

    def pipeline(question: str) -> object:
        return outputs[question]

    t: dict[str, float] = dict.fromkeys(("load", "record", "call", "score", "report", "end"), 0.0)
    t0 = clock()
    ds = load_dataset(frozen)
    cfg = make_config()
    cases = sorted(cfg.population(ds.cases), key=lambda c: c.id)
    t["load"] = clock() - t0
    loops = LoopOwner()
    path = CasePath(cfg, loops)  # the per-case path, its concluding step timed as "score"
    records = []
    for case in cases:
        t0 = clock()
        record = CaseRecord.for_case(
            case, dataset="cases.frozen.json", nodeid=case.id, pipeline="rag_pipeline"
        )
        t1 = clock()
        outcome = call_case(pipeline, case, cfg, loops)
        t2 = clock()
        path.conclude(record, case, case.id, [outcome])
        t3 = clock()
        records.append(CaseRecord.from_dict(record.to_dict()))
        t4 = clock()
        t["record"] += t1 - t0
        t["call"] += t2 - t1
        t["score"] += t3 - t2
        t["report"] += t4 - t3
    loops.close()
    if any(r.status != "passed" for r in records):
        raise SystemExit("a realistic case did not pass: the benchmark's data is wrong")
    t0 = clock()
    records.sort(key=lambda r: (r.pipeline, r.nodeid))
    aggregate_results = evaluate_aggregates(records, cfg.aggregate_thresholds, gated=True)
    verdicts = [*summarize_case_thresholds(records, cfg.case_thresholds), *aggregate_results]
    doc = build_results(
        passed=True,
        datasets=[dataset_entry("cases.frozen.json", ds, len(cases))],
        records=records,
        aggregates=all_aggregates(records, [*cfg.case_thresholds, *cfg.aggregate_thresholds]),
        thresholds=verdicts,
        settings=cfg.settings(),
        redact=False,
    )
    threshold_table(verdicts, records)
    worst_cases(records, cfg.worst)
    latency_line(records)
    format_components(doc["components"])
    t["end"] = clock() - t0
    return {name: value / len(cases) for name, value in t.items()}


def overhead(tmp: Path, rounds: int, limits: Limits, n: int = 5000) -> None:
    proj, plain = realistic_project(tmp, n)
    wall, cpu = _interleaved(
        [*BASE, f"--rootdir={plain}", str(plain / "test_plain.py")],
        [*BASE, f"--rootdir={proj}", "--ragproof-dataset", str(proj / "cases.frozen.json")],
        proj,
        rounds,
        expect=(f"{n} passed", f"{n} passed"),
    )
    name = f"overhead {n} qa cases (answer + 5 contexts) vs plain parametrize ({rounds} rounds)"
    print(report(f"{name}, wall time", wall, 1.5))
    limits.check(f"{name}, CPU time", cpu, 1.5)
    # Best of three in-process passes: the least disturbed by the machine's other load.
    frozen, table = proj / "cases.frozen.json", tmp / "pipeline_outputs.json"
    passes = [ragproof_work(frozen, table) for _ in range(1 if rounds == 1 else 3)]
    work = {stage: min(p[stage] for p in passes) for stage in passes[0]}
    own = sum(work.values()) * 1e6
    us = {
        side: value / n * 1e6
        for side, value in (
            ("plain wall", wall.baseline_s),
            ("ragproof wall", wall.candidate_s),
            ("plain cpu", cpu.baseline_s),
            ("ragproof cpu", cpu.candidate_s),
        )
    }
    extra = us["ragproof cpu"] - us["plain cpu"]
    print(
        f"  per case (medians / {n}, interpreter start and collection included): "
        f"wall plain {us['plain wall']:.0f} us, ragproof {us['ragproof wall']:.0f} us; "
        f"CPU plain {us['plain cpu']:.0f} us, ragproof {us['ragproof cpu']:.0f} us, "
        f"difference {extra:.0f} us"
    )
    parts = ", ".join(f"{k} {v * 1e6:.1f}" for k, v in work.items())
    print(
        f"  ragproof's own work per case, in-process: {own:.0f} us ({parts} us); "
        f"the rest of the CPU difference, {extra - own:.0f} us, is pytest's work for "
        "ragproof's items, hooks and reports"
    )


def _sleeping_project(tmp: Path, name: str, n: int, sleep_s: float) -> Path:
    """``n`` unanswerable cases and a pipeline that sleeps ``sleep_s`` (async with
    BENCH_ASYNC set)."""
    proj = tmp / name
    proj.mkdir()
    cases = [{"id": f"c{i:04d}", "kind": "unanswerable", "question": f"Q {i}?"} for i in range(n)]
    (proj / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (proj / "conftest.py").write_text(
        f"import asyncio, os, time, pytest\n\nSLEEP = {sleep_s!r}\n\n"
        "@pytest.fixture(scope='session')\n"
        "def rag_pipeline():\n"
        "    if os.environ.get('BENCH_ASYNC'):\n"
        "        async def pipe(q):\n            await asyncio.sleep(SLEEP)\n"
        '            return "I don\'t know."\n        return pipe\n'
        '    def pipe(q):\n        time.sleep(SLEEP)\n        return "I don\'t know."\n'
        "    return pipe\n"
    )
    return proj


def concurrency(tmp: Path, limits: Limits, n: int = 200, sleep_s: float = 0.1) -> None:
    proj = _sleeping_project(tmp, "concurrency", n, sleep_s)
    args = [*BASE, "--ragproof-dataset=cases.jsonl"]
    for label, flag in (("sync", ""), ("async", "1")):
        os.environ["BENCH_ASYNC"] = flag
        ENV["BENCH_ASYNC"] = flag
        one = _time([*args, "--ragproof-concurrency=1"], proj)
        many = _time([*args, "--ragproof-concurrency=16"], proj)
        name = f"concurrency 16 vs 1, {n} cases x {sleep_s * 1000:.0f} ms, {label}"
        limits.check(name, Comparison(one, many), 0.2)


def repeat(tmp: Path, limits: Limits, n: int = 100, sleep_s: float = 0.1) -> None:
    """The concurrency project, each case called 5 times: repeats are separate
    submissions, so the 16 calls in flight include a case's own repeats."""
    proj = _sleeping_project(tmp, "repeat", n, sleep_s)
    args = [*BASE, "--ragproof-dataset=cases.jsonl", "--ragproof-repeat=5"]
    _time([*args, "-k", "c0000"], proj, expect="1 passed")  # warm-up: the bytecode cache
    for label, flag in (("sync", ""), ("async", "1")):
        ENV["BENCH_ASYNC"] = flag
        one = _time([*args, "--ragproof-concurrency=1"], proj, expect=f"{n} passed")
        many = _time([*args, "--ragproof-concurrency=16"], proj, expect=f"{n} passed")
        name = f"repeat 5, concurrency 16 vs 1, {n} cases x {sleep_s * 1000:.0f} ms, {label}"
        limits.check(name, Comparison(one, many), 0.25)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="startup,overhead,concurrency,repeat")
    parser.add_argument("--runs", type=int, default=20, help="interleaved runs for startup")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds for overhead")
    parser.add_argument("--cases", type=int, default=5000, help="cases for overhead")
    add_quick(parser)
    args = parser.parse_args()
    chosen = set(args.only.split(","))
    limits = Limits(quick=args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        if "startup" in chosen:
            startup(Path(tmp), 1 if args.quick else args.runs, limits)
        if "overhead" in chosen:
            if args.quick:
                overhead(Path(tmp), 1, limits, n=200)
            else:
                overhead(Path(tmp), args.rounds, limits, n=args.cases)
        if "concurrency" in chosen:
            if args.quick:
                concurrency(Path(tmp), limits, n=32, sleep_s=0.02)
            else:
                concurrency(Path(tmp), limits)
        if "repeat" in chosen:
            if args.quick:
                repeat(Path(tmp), limits, n=8, sleep_s=0.02)
            else:
                repeat(Path(tmp), limits)
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
