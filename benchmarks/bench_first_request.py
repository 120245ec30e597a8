"""How long a judged run waits before its first judge request (issue 39.3).

    python benchmarks/bench_first_request.py [--rounds N] [--quick]

Three kinds of child process, interleaved each round, on 60 qa cases with contexts
(benchmarks/bench_judges.py's project) and a pipeline that answers in 200 ms, as a
RAG system calling its own model would:

- ``import``: ragproof's import of litellm alone (``load_litellm()``), timed inside;
- ``plain``: ``evaluate()`` with the deterministic metrics only: the time from the
  process's start to its first pipeline answer;
- ``judged``: the same ``evaluate()`` with every judge, ``cache=False``, against the
  stub answering in 200 ms: the time from the process's start to the first judge
  request reaching the stub, the call's wall time and its judge phase (first judge
  request to last reply).

The figure: judged's wait minus (plain's wait + the import), median over the rounds;
limit 1.0 s (the judged run adds at most a second beyond importing litellm). Where
the import overlaps with the pipeline's first calls, the figure goes below 0. The
wall time over the judge phase of the judged call is printed beside it.

Exits 1 over the limit; ``--quick`` (10 cases, one round) checks only that it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from benchmarks._common import Limits, add_quick  # noqa: E402
from benchmarks.bench_judges import project  # noqa: E402
from tests.judge_stub import ScriptedJudge  # noqa: E402
from tests.llm_stub import StubServer  # noqa: E402

GAP_LIMIT_S = 1.0
LATENCY_S = 0.2

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update(OPENAI_API_KEY="sk-bench", PYTHONWARNINGS="ignore")
ENV["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "ragproof-bench-first-pycache")
for _name in ("RAGPROOF_JUDGE_MODEL", "RAGPROOF_CACHE_DIR"):
    ENV.pop(_name, None)

IMPORT_SCRIPT = r"""
import time
t = time.perf_counter()
from pytest_ragproof.llm.client import load_litellm
load_litellm()
print("RAGPROOF-BENCH", time.perf_counter() - t)
"""

EVALUATE_SCRIPT = r"""
import json, pathlib, sys, time
from pytest_ragproof import evaluate

url, judged, LATENCY = sys.argv[1], sys.argv[2] == "judged", float(sys.argv[3])
outputs = json.loads(pathlib.Path("outputs.json").read_text())
first = []

def pipeline(question):
    time.sleep(LATENCY)  # the RAG system's own model
    if not first:
        first.append(time.perf_counter())
    return outputs[question]

judging = dict(judges=["all"], judge_model="openai/stub-judge", judge_api_base=url)
options = judging if judged else {}
started = time.perf_counter()
results = evaluate("cases.frozen.json", pipeline, cache=False, **options)
assert results.passed, "every case must pass"
print("RAGPROOF-BENCH", json.dumps({"first_output": first[0], "started": started,
                                    "ended": time.perf_counter()}))
"""


def _child(proj: Path, script: str, *args: str) -> tuple[float, str]:
    """Spawn a child; returns the spawn time (perf_counter, the same clock in every
    process on Linux) and the payload of its RAGPROOF-BENCH line."""
    spawned = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=proj,
        env=ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RAGPROOF-BENCH ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(
            f"child failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        )
    return spawned, lines[-1].removeprefix("RAGPROOF-BENCH ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    add_quick(parser)
    args = parser.parse_args()
    quick = bool(args.quick)
    n, rounds = (10, 1) if quick else (60, args.rounds)
    limits = Limits(quick=quick)
    server = StubServer().start()
    server.set_handler(ScriptedJudge(delay_s=LATENCY_S))
    gaps: list[float] = []
    walls: list[float] = []
    phases: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            proj = project(Path(tmp), "first", n)
            # Warm the bytecode caches so that no round pays for compiling.
            _child(proj, IMPORT_SCRIPT)
            for r in range(rounds):
                _, out = _child(proj, IMPORT_SCRIPT)
                imported = float(out)
                spawned, out = _child(proj, EVALUATE_SCRIPT, server.url, "plain", str(LATENCY_S))
                plain = json.loads(out)["first_output"] - spawned
                server.reset_counters()
                spawned, out = _child(proj, EVALUATE_SCRIPT, server.url, "judged", str(LATENCY_S))
                doc = json.loads(out)
                assert server.first_request_at is not None and server.last_response_at
                waited = server.first_request_at - spawned
                phase = server.last_response_at - server.first_request_at
                wall = doc["ended"] - doc["started"]
                gap = waited - (plain + imported)
                gaps.append(gap)
                walls.append(wall)
                phases.append(phase)
                print(
                    f"  round {r + 1}: litellm import {imported:.2f} s; plain run's first "
                    f"answer at {plain:.2f} s; judged run's first judge request at "
                    f"{waited:.2f} s (gap {gap:+.2f} s); evaluate() {wall:.1f} s wall, "
                    f"judge phase {phase:.1f} s",
                    flush=True,
                )
    finally:
        server.stop()
    gap = statistics.median(gaps)
    name = (
        f"wait before the first judge request beyond the plain run's and litellm's import, "
        f"{n} qa cases, pipeline and judge at {LATENCY_S * 1000:.0f} ms"
    )
    verdict = "OK" if gap <= GAP_LIMIT_S else "OVER LIMIT"
    print(f"{name}: {gap:+.2f} s (limit {GAP_LIMIT_S:.1f} s) {verdict}")
    wall, phase = statistics.median(walls), statistics.median(phases)
    print(f"evaluate() of {n} judged cases: {wall:.1f} s wall for a {phase:.1f} s judge phase")
    if gap > GAP_LIMIT_S:
        limits.over.append(f"{name}: {gap:.2f} s > {GAP_LIMIT_S} s")
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
