"""Freezing and loading 100,000 cases, as ratios against a floor measured in the same run.

Floors (issue 39.1), run in this process, interleaved with ragproof:
- freeze: ``json.loads`` per line + canonical ``json.dumps`` of the list + sha256
  + writing that text to a file; limit 1.5x.
- load a frozen file: ``json.load`` + canonical dumps + sha256; limit 2.0x.
Each figure is the best of N runs of ragproof over the best of N of its floor.
Peak memory of loading is measured in a child process (ru_maxrss).
Exits 1 when a figure is over its limit; ``--quick`` (2,000 cases, one round)
checks only that the script runs.

Run: python benchmarks/bench_dataset.py [--cases N] [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Limits, add_quick, compare_best
from pytest_ragproof.dataset.freeze import freeze
from pytest_ragproof.dataset.io import load_dataset
from pytest_ragproof.fileio import paused_gc

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "retrieval",
    "answer",
    "corpus",
    "index",
    "chunk",
    "token",
    "vector",
]


def make_cases(n: int, seed: int = 0) -> list[dict[str, object]]:
    rng = random.Random(seed)

    def text(chars: int) -> str:
        out: list[str] = []
        size = 0
        while size < chars:
            word = rng.choice(WORDS)
            out.append(word)
            size += len(word) + 1
        return " ".join(out)

    return [
        {
            "id": f"case-{i:06d}",
            "kind": "qa",
            "question": text(100) + "?",
            "expected_answer": text(200),
            "expected_source_ids": [f"docs/file{i % 97}.md", f"docs/file{i % 89}.md#3"],
            "metadata": {"topic": rng.choice(WORDS), "difficulty": rng.randint(1, 5), "w": 0.5},
        }
        for i in range(n)
    ]


FREEZE_LIMIT = 1.5
LOAD_LIMIT = 2.0


def floor_freeze(path: Path, out: Path) -> None:
    """Parse each line, dump the list canonically, hash it and write it to ``out``."""
    with path.open(encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    blob = json.dumps(cases, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    hashlib.sha256(blob.encode("utf-8")).hexdigest()
    with out.open("w", encoding="utf-8") as fh:
        fh.write(blob)


def floor_load(path: Path) -> None:
    with path.open(encoding="utf-8") as fh:
        doc = json.load(fh)
    blob = json.dumps(doc["cases"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    hashlib.sha256(blob.encode("utf-8")).hexdigest()


def paused(floor: Callable[[], None]) -> None:
    with paused_gc():
        floor()


def peak_rss_mb(frozen: Path) -> float:
    code = (
        "import resource,sys;from pytest_ragproof.dataset.io import load_dataset;"
        f"load_dataset({str(frozen)!r});"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5, help="N of best of N")
    add_quick(parser)
    args = parser.parse_args()
    if args.quick:
        args.cases, args.rounds = 2000, 1
    limits = Limits(quick=args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "cases.jsonl"
        with src.open("w", encoding="utf-8") as fh:
            for case in make_cases(args.cases):
                fh.write(json.dumps(case) + "\n")
        out = Path(tmp) / "cases.frozen.json"
        floor_out = Path(tmp) / "floor.json"
        size_mb = src.stat().st_size / 1e6
        print(f"{args.cases} cases, {size_mb:.1f} MB JSONL; best of {args.rounds}")

        def floor() -> None:
            floor_freeze(src, floor_out)

        c = compare_best(floor, lambda: freeze(src, out), rounds=args.rounds)
        limits.check("freeze", c, FREEZE_LIMIT)
        c = compare_best(lambda: floor_load(out), lambda: load_dataset(out), rounds=args.rounds)
        limits.check("load frozen", c, LOAD_LIMIT)
        # ragproof pauses the cyclic collector while it loads; for the record, the
        # same floors with the collector paused too (not a limit of the issue).
        for name, paused_floor, candidate in (
            ("freeze", lambda: paused(floor), lambda: freeze(src, out)),
            ("load", lambda: paused(lambda: floor_load(out)), lambda: load_dataset(out)),
        ):
            c = compare_best(paused_floor, candidate, rounds=1)
            print(f"{name} vs a floor with the collector paused: ratio {c.ratio:.2f} (no limit)")
        base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"peak RSS loading the frozen file (child process): {peak_rss_mb(out):.0f} MB "
            f"(frozen file {out.stat().st_size / 1e6:.1f} MB; this process {base_rss:.0f} MB)"
        )
    return limits.exit_status()


if __name__ == "__main__":
    raise SystemExit(main())
