"""Benchmark of the LLM layer against the stub server at 200 ms per answer.

    python benchmarks/bench_llm.py [--quick]

Measures, for 40 structured calls:
- concurrency 8 vs concurrency 1 (limit 0.25x), wall time of the batch;
- the client's CPU time per call (process CPU over the concurrency-1 run / 40);
- a fully cached re-run as a whole new process, interpreter start-up included,
  vs the uncached concurrency-1 run (limit 0.05x).

The stub runs in its own process so its CPU time is not counted as the client's.
litellm is imported (and one call made) before any timing starts.
Exits 1 when a figure is over its limit; ``--quick`` (8 calls at 20 ms) checks
only that the script runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache  # noqa: E402

if TYPE_CHECKING:
    import subprocess

# The cached re-run process measures the product's imports, not this script's:
# modules only the driver needs are imported inside main().

N_CALLS = 40
LATENCY_S = 0.2
MODEL = "openai/bench-model"


class Answer(BaseModel):
    answer: str


# What any process that validates with a pydantic model pays before our code runs.
_FLOOR = "from pydantic import BaseModel\nclass Answer(BaseModel):\n    answer: str\n"


def _client(api_base: str, cache: ResponseCache, concurrency: int) -> LLMClient:
    config = LLMConfig(model=MODEL, api_base=api_base, concurrency=concurrency, timeout_s=10)
    return LLMClient(config, cache)


def _run(client: LLMClient, version: str, n: int = N_CALLS) -> float:
    """Wall time of ``n`` structured calls in one batch; every call must succeed."""
    batch = [[{"role": "user", "content": f"question {i}"}] for i in range(n)]
    start = time.perf_counter()
    results = client.structured_batch(batch, Answer, prompt_version=version)
    elapsed = time.perf_counter() - start
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, first: {failed[0]!r}")
    return elapsed


def cached_run_main(api_base: str, cache_dir: str, n: int) -> None:
    """The body of the cached re-run subprocess: must make no request."""
    client = _client(api_base, ResponseCache(cache_dir), concurrency=1)
    _run(client, "bench-v1", n)
    if client.stats.requests or "litellm" in sys.modules or client.stats.cache_hits != n:
        raise SystemExit("cached re-run made a request or imported litellm")


def _start_stub(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "llm_stub.py"), "--latency", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> int:
    import argparse
    import os
    import statistics
    import subprocess
    import tempfile

    from benchmarks._common import Comparison, Limits, add_quick, timed

    parser = argparse.ArgumentParser(description=__doc__)
    add_quick(parser)
    args = parser.parse_args()
    n, latency_s, rounds = (8, 0.02, 1) if args.quick else (N_CALLS, LATENCY_S, 5)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")
    stub, api_base = _start_stub(latency_s)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache_dir = str(Path(tmp) / "cache")
            warm = _client(api_base, ResponseCache(enabled=False), 1)
            warm.run_batch(
                [warm.complete([{"role": "user", "content": "warm"}], prompt_version="w")]
            )

            serial = _client(api_base, ResponseCache(cache_dir), concurrency=1)
            cpu0 = time.process_time()
            serial_s = _run(serial, "bench-v1", n)  # fills the cache for the re-run below
            cpu_ms = (time.process_time() - cpu0) / n * 1000

            parallel_runs = []
            for round_no in range(min(rounds, 3)):
                parallel = _client(api_base, ResponseCache(enabled=False), concurrency=8)
                parallel_runs.append(_run(parallel, f"bench-v1-{round_no}", n))

            # An installed package has compiled bytecode; this environment may set
            # PYTHONDONTWRITEBYTECODE, which would charge source compilation to the
            # cached run. Bytecode goes to a temporary prefix, not the repository.
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
            cached_cmd = [sys.executable, __file__, "--cached-run", api_base, cache_dir, str(n)]
            floor_cmd = [sys.executable, "-c", _FLOOR]
            subprocess.run(cached_cmd, check=True, cwd=REPO, env=env)  # writes bytecode
            cached_runs, floor_runs = [], []
            for _ in range(rounds):
                cached_runs.append(timed(lambda: subprocess.run(cached_cmd, check=True, env=env)))
                floor_runs.append(timed(lambda: subprocess.run(floor_cmd, check=True, env=env)))
    finally:
        stub.terminate()
        stub.wait(10)

    print(f"{n} structured calls, stub latency {latency_s * 1000:.0f} ms")
    limits = Limits(quick=args.quick)
    limits.check("concurrency 8 vs 1", Comparison(serial_s, statistics.median(parallel_runs)), 0.25)
    print(f"client CPU per call (concurrency 1, uncached): {cpu_ms:.2f} ms")
    limits.check(
        "cached re-run (new process) vs uncached concurrency 1",
        Comparison(serial_s, statistics.median(cached_runs)),
        0.05,
    )
    floor_ms = statistics.median(floor_runs) * 1000
    ours_ms = statistics.median(cached_runs) * 1000 - floor_ms
    print(
        f"  floor (interpreter + pydantic + one model, no ragproof): "
        f"{floor_ms:.1f} ms = {floor_ms / 1000 / serial_s:.3f}x; "
        f"ragproof's share: {ours_ms:.1f} ms = {ours_ms / 1000 / serial_s:.3f}x"
    )
    return limits.exit_status()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--cached-run":
        cached_run_main(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(main())
