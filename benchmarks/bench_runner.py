"""The pytest runner's performance figures, as ratios measured in one run.

1. startup: `pytest --co` of a one-test project with the plugin installed and
   unused vs the same with `-p no:ragproof` (interleaved runs, medians; limit 1.10),
   and which heavy modules an in-process `pytest.main` imported (must be none).
2. overhead: 5,000 cases with an instant session-scoped pipeline vs a plain
   `@pytest.mark.parametrize` over 5,000 ids with an empty body (limit 1.5).
3. concurrency: 200 cases whose pipeline sleeps 100 ms, `--ragproof-concurrency=16`
   vs 1, for a sync and an async pipeline (limit 0.2).

Run: python benchmarks/bench_runner.py [--only startup,overhead,concurrency] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Comparison, compare, report

# Like a user's CI, let Python cache bytecode (this machine sets PYTHONDONTWRITEBYTECODE,
# which would make every run recompile and re-assertion-rewrite every plugin module).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONWARNINGS"] = "ignore"
ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="ragproof-bench-pycache-")
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio"]


def _time(cmd: list[str], cwd: Path, expect: str = "") -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")
    if expect and expect not in proc.stdout:
        # Both sides must run exactly what they claim to (e.g. not also collect the other).
        raise SystemExit(f"expected {expect!r} from {' '.join(cmd)}:\n{proc.stdout[-500:]}")
    return elapsed


def _interleaved(
    a: list[str], b: list[str], cwd: Path, runs: int, expect: tuple[str, str] = ("", "")
) -> Comparison:
    _time(a, cwd, expect[0]), _time(b, cwd, expect[1])  # warm-up: fill the bytecode cache
    return compare(lambda: _time(a, cwd, expect[0]), lambda: _time(b, cwd, expect[1]), rounds=runs)


def startup(tmp: Path, runs: int) -> None:
    proj = tmp / "startup"
    proj.mkdir()
    (proj / "test_one.py").write_text("def test_one():\n    pass\n")
    cmp = _interleaved([*BASE, "--co", "-p", "no:ragproof"], [*BASE, "--co"], proj, runs)
    print(report(f"startup pytest --co ({runs} interleaved runs each)", cmp, 1.10))
    code = (
        "import sys, pytest; pytest.main(['--co', '-q', '-p', 'no:cacheprovider']);"
        "print(sorted(m for m in ('litellm', 'pypdf', 'docx', 'pydantic') if m in sys.modules))"
    )
    out = (
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=proj,
            env=ENV,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    print(f"heavy modules imported by an in-process pytest.main with the plugin unused: {out}")


def overhead(tmp: Path, runs: int, n: int = 5000) -> None:
    from pytest_ragproof import freeze

    # Two sibling projects: a plain directory under the ragproof project would be
    # collected by the ragproof run too (no path argument means the rootdir).
    proj = tmp / "overhead"
    proj.mkdir()
    cases = [{"id": f"c{i:05d}", "kind": "unanswerable", "question": f"Q {i}?"} for i in range(n)]
    src = proj / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in cases))
    freeze(src)
    (proj / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef rag_pipeline():\n"
        '    return lambda q: "I don\'t know."\n'
    )
    plain = tmp / "overhead-plain"
    plain.mkdir()
    (plain / "test_plain.py").write_text(
        "import pytest\n\n"
        f"@pytest.mark.parametrize('i', [f'c{{i:05d}}' for i in range({n})])\n"
        "def test_case(i):\n    pass\n"
    )
    ragproof = ["--ragproof-dataset", str(proj / "cases.frozen.json")]
    ragproof += ["--ragproof-case-threshold", "none"]
    cmp = _interleaved(
        [*BASE, f"--rootdir={plain}", str(plain / "test_plain.py")],
        [*BASE, f"--rootdir={proj}", *ragproof],
        proj,
        runs,
        expect=(f"{n} passed", f"{n} passed"),
    )
    print(report(f"overhead {n} cases vs plain parametrize ({runs} runs)", cmp, 1.5))


def concurrency(tmp: Path, n: int = 200) -> None:
    proj = tmp / "concurrency"
    proj.mkdir()
    cases = [{"id": f"c{i:04d}", "kind": "unanswerable", "question": f"Q {i}?"} for i in range(n)]
    (proj / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (proj / "conftest.py").write_text(
        "import asyncio, os, time, pytest\n\n@pytest.fixture(scope='session')\n"
        "def rag_pipeline():\n"
        "    if os.environ.get('BENCH_ASYNC'):\n"
        "        async def pipe(q):\n            await asyncio.sleep(0.1)\n"
        '            return "I don\'t know."\n        return pipe\n'
        '    def pipe(q):\n        time.sleep(0.1)\n        return "I don\'t know."\n'
        "    return pipe\n"
    )
    args = [*BASE, "--ragproof-dataset=cases.jsonl"]
    for label, flag in (("sync", ""), ("async", "1")):
        os.environ["BENCH_ASYNC"] = flag
        ENV["BENCH_ASYNC"] = flag
        one = _time([*args, "--ragproof-concurrency=1"], proj)
        many = _time([*args, "--ragproof-concurrency=16"], proj)
        print(
            report(f"concurrency 16 vs 1, {n} cases x 100 ms, {label}", Comparison(one, many), 0.2)
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="startup,overhead,concurrency")
    parser.add_argument("--runs", type=int, default=20, help="interleaved runs for startup")
    args = parser.parse_args()
    chosen = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if "startup" in chosen:
            startup(Path(tmp), args.runs)
        if "overhead" in chosen:
            overhead(Path(tmp), max(3, args.runs // 6))
        if "concurrency" in chosen:
            concurrency(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
