"""After kill -9: our stale temporary files are removed at the next write, and a run's
outputs carry one run id so a reader can tell they belong together (issue 30, item 8)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ragproof.fileio import write_atomic
from tests.pytester_projects import load_json, run
from tests.runner.shard_project import shard_project

__all__ = ["shard_project"]  # the fixture, imported for the tests below

ROOT = Path(__file__).resolve().parents[2]

# A writer that stops inside write_atomic: killed (SIGKILL, no cleanup runs), or holding
# its temporary file until the test writes a line to its stdin.
WRITER = """
import os, signal, sys
from pathlib import Path
from pytest_ragproof.fileio import write_atomic

target, how = Path(sys.argv[1]), sys.argv[2]

def parts():
    yield "first part\\n"
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    print("writing", flush=True)
    sys.stdin.readline()
    yield "second part\\n"

write_atomic(target, parts())
"""


def _writer(target: Path, how: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def _temps(folder: Path, name: str) -> list[str]:
    pattern = re.compile(rf"\.{re.escape(name)}\.[0-9a-f]{{12}}\.tmp")
    return sorted(p.name for p in folder.iterdir() if pattern.fullmatch(p.name))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")
def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old run\n", encoding="utf-8")
    # A live writer of the same target holds its temporary file: it is left alone.
    live = _writer(target, "hold")
    try:
        assert live.stdout is not None and live.stdin is not None
        assert live.stdout.readline() == "writing\n"
        (held,) = _temps(tmp_path, "report.html")
        killed = _writer(target, "kill")
        assert killed.wait() == -signal.SIGKILL
        older = tmp_path / ".report.html.00112233aabb.tmp"  # a 0-byte one, as issue 30 saw
        older.write_text("", encoding="utf-8")
        assert len(_temps(tmp_path, "report.html")) == 3  # what kill -9 leaves, and the live one
        assert target.read_text(encoding="utf-8") == "old run\n"
        # Files that only look alike, or belong to another target, are not ours to remove.
        foreign = [".report.html.mine.tmp", ".report.html.0123456789ab.tmp.bak", "report.html.tmp"]
        for name in foreign:
            (tmp_path / name).write_text("keep", encoding="utf-8")
        (tmp_path / ".results.json.0123456789ab.tmp").write_text("", encoding="utf-8")
        write_atomic(target, "new run\n")
        assert _temps(tmp_path, "report.html") == [held]  # only the live writer's file is left
        live.stdin.write("go\n")
        live.stdin.flush()
        assert live.wait() == 0
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
    assert _temps(tmp_path, "report.html") == []
    assert target.read_text(encoding="utf-8") == "first part\nsecond part\n"
    for name in foreign:
        assert (tmp_path / name).read_text(encoding="utf-8") == "keep"
    assert (tmp_path / ".results.json.0123456789ab.tmp").exists()  # another target's
    write_atomic(tmp_path / "results.json", "{}\n")
    assert not (tmp_path / ".results.json.0123456789ab.tmp").exists()


def test_a_runs_outputs_carry_one_run_id(shard_project: pytest.Pytester) -> None:
    result = run(
        shard_project,
        [],
        "--ragproof-report=results.json",
        "--ragproof-markdown=report.md",
        "--ragproof-html=report.html",
    )
    assert result.ret == 0, result.stdout.str()
    run_id = load_json(shard_project.path / "results.json")["run_id"]
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", run_id)
    assert f"· run `{run_id}`" in (shard_project.path / "report.md").read_text(encoding="utf-8")
    html = (shard_project.path / "report.html").read_text(encoding="utf-8")
    assert f'run <code class="run-id">{run_id}</code>' in html
    # The next run has another id: a report.html left from it would not match.
    run(shard_project, [], "--ragproof-report=results.json")
    assert load_json(shard_project.path / "results.json")["run_id"] != run_id
