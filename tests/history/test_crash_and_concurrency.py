"""A SQLite store survives a writer killed with ``kill -9`` mid-add, and two processes
writing at once both get their runs in (WAL, busy timeout, BEGIN IMMEDIATE)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.history.queries import list_runs, run_cases
from pytest_ragproof.history.store import open_store
from pytest_ragproof.history.target import resolve_target
from tests.history.runs import document

ROOT = Path(__file__).resolve().parents[2]

# Adds the same large run again and again under new run ids (each a new run), printing
# after each add, until killed.
WRITER = """
import copy, json, sys
from pathlib import Path
from pytest_ragproof.history.store import open_store
from pytest_ragproof.history.target import resolve_target

doc = json.loads(Path(sys.argv[2]).read_text())
tag = sys.argv[3]
count = int(sys.argv[4])
with open_store(resolve_target(sys.argv[1], Path.cwd())) as store:
    n = 0
    while count < 0 or n < count:
        n += 1
        run = copy.deepcopy(doc)
        run["run_id"] = f"{doc['run_id']}-{tag}{n:05d}"
        store.add(run, f"{tag}{n}")
        print(n, flush=True)
"""


def _writer(store: Path, doc: Path, tag: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store), str(doc), tag, str(count)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.fixture(scope="module")
def big_doc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results document of 400 qa cases (an add takes long enough to be caught in it)."""
    path = tmp_path_factory.mktemp("doc") / "results.json"
    path.write_text(json.dumps(document(qa=400)), encoding="utf-8")
    return path


def _check_complete(store_path: Path) -> list[Any]:
    """Every run in the store has all its cases: nothing half-written is visible."""
    import sqlite3

    with sqlite3.connect(store_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with open_store(resolve_target(str(store_path), Path.cwd())) as store:
        runs = list_runs(store)
        for run in runs:
            assert len(run_cases(store, run.run_id).cases) == run.n_cases == 403
    return runs


def _kill_while_writing(proc: subprocess.Popen[str], store: Path) -> None:
    """SIGKILL the writer at a moment it holds the write lock: in the middle of an add."""
    import sqlite3

    probe = sqlite3.connect(store, timeout=0, isolation_level=None)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                probe.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:  # locked: the writer is inside its transaction
                os.kill(proc.pid, signal.SIGKILL)
                return
            probe.execute("ROLLBACK")
        raise AssertionError("the writer never held the write lock")
    finally:
        probe.close()


def test_a_writer_killed_mid_add_leaves_a_readable_store(tmp_path: Path, big_doc: Path) -> None:
    store = tmp_path / "history.sqlite"
    added = 0
    for attempt in range(3):
        proc = _writer(store, big_doc, f"k{attempt}-", -1)
        assert proc.stdout is not None
        added += int(proc.stdout.readline())  # one run fully added; the next is under way
        _kill_while_writing(proc, store)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        runs = _check_complete(store)
        # The killed add is not in the store, and each finished one is.
        assert len(runs) >= added
    # The store still takes new runs after the kills.
    with open_store(resolve_target(str(store), Path.cwd())) as s:
        doc = json.loads(big_doc.read_text())
        assert s.add({**doc, "run_id": doc["run_id"] + "-after"}, "after").new


def test_two_processes_adding_at_once_both_get_their_runs_in(tmp_path: Path, big_doc: Path) -> None:
    store = tmp_path / "history.sqlite"
    procs = [_writer(store, big_doc, tag, 5) for tag in ("a", "b")]
    for p in procs:
        p.communicate(timeout=120)
        assert p.returncode == 0
    runs = _check_complete(store)
    assert sorted(r.source for r in runs) == sorted(f"{t}{n}" for t in "ab" for n in range(1, 6))
