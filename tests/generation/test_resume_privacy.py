"""Interrupted runs resume from the cache; keys and provider messages never leak; a dry
run and a fully cached run never import litellm and make no request."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.generation import GenerationSettings, RequestOutcome, generate
from pytest_ragproof.llm.cache import STORE_NAME
from tests.generation.conftest import MODEL, MakeClient, write_text_corpus
from tests.generation.fake_model import SECRET, FakeModel
from tests.llm_stub import Action, StubServer, hang

REPO = Path(__file__).resolve().parents[2]


class Interrupted(Exception):
    """Stands for Ctrl-C or a crash in the middle of a run."""


def _cache_entries(root: Path) -> int:
    """Entries in the cache's one SQLite file (read beside the writer's own connection)."""
    store = root / STORE_NAME
    if not store.exists():
        return 0
    conn = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
    try:
        # A child process may have created the file but not yet its table.
        schema = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'entries'"
        if not conn.execute(schema).fetchone()[0]:
            return 0
        return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])
    finally:
        conn.close()


# Cancelling in-flight requests leaves an un-awaited coroutine inside litellm.
@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_an_interrupted_run_resumes_from_the_cache_without_losing_finished_work(
    text_corpus: Path,
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    make_client: MakeClient,
) -> None:
    settings = GenerationSettings(qa=6, unanswerable=2, injection=2, seed=2, items_per_request=1)
    reference = generate(text_corpus, settings, client=make_client(cache=tmp_path / "ref"))
    reference.write(tmp_path / "reference.jsonl")
    total = llm_stub.request_count
    assert total == _cache_entries(tmp_path / "ref")  # no retries, no repairs here

    finished: list[RequestOutcome] = []

    def crash_after_three(outcome: RequestOutcome) -> None:
        finished.append(outcome)
        if len(finished) == 3:
            raise Interrupted

    resume_cache = tmp_path / "resume"
    with pytest.raises(Interrupted):
        generate(
            text_corpus,
            settings,
            client=make_client(cache=resume_cache, concurrency=1),
            on_outcome=crash_after_three,
        )
    kept = _cache_entries(resume_cache)
    # Three whole chains (generation + verification) at least were cached as they ended.
    assert kept >= 3 * 2
    assert kept < total

    before = llm_stub.request_count
    resumed = generate(text_corpus, settings, client=make_client(cache=resume_cache))
    assert llm_stub.request_count - before == total - kept
    assert resumed.summary["llm"]["cache_hits"] == kept
    resumed.write(tmp_path / "resumed.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()


def test_the_api_key_and_provider_messages_appear_in_no_output_or_file(
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus = write_text_corpus(
        tmp_path / "corpus",
        {
            "a.txt": "FAULT_401 Refunds are processed within fourteen days.",
            "b.txt": "FAULT_401 Invoices are issued monthly for each customer.",
        },
    )
    out = tmp_path / "out.jsonl"
    args = ["generate", "--corpus", str(corpus), "--out", str(out), "--qa", "2"]
    args += ["--model", MODEL, "--api-base", llm_stub.url, "--cache-dir", str(tmp_path / "c")]
    # Every call is refused (401, not retried): the run says so and exits 1.
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "every model call failed" in captured.err
    assert "AuthenticationError" in captured.err  # the exception type is kept...
    shown = captured.out + captured.err
    assert SECRET not in shown and "invalid api key" not in shown  # ...its message is not

    # A successful run too: nothing written anywhere holds the key.
    (corpus / "a.txt").write_text("Refunds are processed within fourteen days.", "utf-8")
    (corpus / "b.txt").write_text("Invoices are issued monthly for each customer.", "utf-8")
    assert main([*args, "--overwrite"]) == 0
    shown += "".join(capsys.readouterr())
    assert SECRET not in shown
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 4  # output, summary, cache entries, corpus
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    # The key did reach the provider, in the header litellm sets.
    assert any(SECRET in h.get("authorization", "") for h in llm_stub.request_headers)


class AnswerThenHang:
    """Answers the first ``allowed`` requests with the fake model, then hangs."""

    def __init__(self, model: FakeModel, allowed: int) -> None:
        self.model = model
        self.allowed = allowed
        self.seen = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Action:
        with self._lock:
            self.seen += 1
            answer = self.seen <= self.allowed
        return self.model(body) if answer else hang(60)


def test_a_killed_process_resumes_from_the_cache(
    text_corpus: Path,
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    make_client: MakeClient,
) -> None:
    settings = GenerationSettings(qa=6, unanswerable=2, seed=4, items_per_request=1)
    reference = generate(text_corpus, settings, client=make_client(cache=tmp_path / "ref"))
    reference.write(tmp_path / "reference.jsonl")
    total = llm_stub.request_count

    answered = 5
    llm_stub.set_handler(AnswerThenHang(fake, answered))
    cache = tmp_path / "killed"
    args = ["generate", "--corpus", str(text_corpus), "--out", str(tmp_path / "never.jsonl")]
    args += ["--qa", "6", "--unanswerable", "2", "--seed", "4", "--items-per-request", "1"]
    args += ["--model", MODEL, "--api-base", llm_stub.url, "--cache-dir", str(cache)]
    proc = _spawn(*args, "--concurrency", "1", "-q")
    try:
        deadline = time.monotonic() + 120
        while _cache_entries(cache) < answered or llm_stub.request_count <= total + answered:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the child never got that far"
            time.sleep(0.05)
    finally:
        proc.kill()  # SIGKILL: no cleanup, no chance to write anything more
        proc.communicate()
    assert not (tmp_path / "never.jsonl").exists()
    assert _cache_entries(cache) == answered

    llm_stub.set_handler(fake)
    before = llm_stub.request_count
    resumed = generate(text_corpus, settings, client=make_client(cache=cache))
    assert llm_stub.request_count - before == total - answered
    resumed.write(tmp_path / "resumed.jsonl")
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()


_CHILD = r"""
import json, sys
from pytest_ragproof.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "litellm": any(m.split(".")[0] == "litellm" for m in sys.modules)}))
"""


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO)
    return env


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
        cwd=REPO,
    )


def _child(*args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True,
        text=True,
        env=_child_env(),
        cwd=REPO,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stdout"] = proc.stdout
    result["stderr"] = proc.stderr
    return result


def test_dry_run_and_fully_cached_run_call_nothing_and_never_import_litellm(
    text_corpus: Path,
    tmp_path: Path,
    llm_stub: StubServer,
    fake: FakeModel,
    make_client: MakeClient,
) -> None:
    common = ["--corpus", str(text_corpus), "--qa", "6", "--unanswerable", "2", "--seed", "1"]
    common += ["--injection", "2", "--model", MODEL, "--api-base", llm_stub.url]
    dry = _child("generate", *common, "--dry-run")
    assert dry["rc"] == 0 and dry["litellm"] is False
    assert llm_stub.request_count == 0
    # 6 qa + 2 unanswerable + 1 injection request (two items); 7 qa checks + 2 scope checks.
    assert "estimated calls: 18 (9 generation, 9 verification)" in str(dry["stdout"])
    assert "language: en (detected)" in str(dry["stdout"])

    cache = tmp_path / "cache"
    args = [*common, "--cache-dir", str(cache), "-q"]
    assert main(["generate", *args, "--out", str(tmp_path / "first.jsonl")]) == 0
    sent = llm_stub.request_count
    assert sent == 18  # the estimate was exact: no retries or repairs in this run
    cached = _child("generate", *args, "--out", str(tmp_path / "second.jsonl"))
    assert cached["rc"] == 0 and cached["litellm"] is False
    assert llm_stub.request_count == sent
    first = (tmp_path / "first.jsonl").read_bytes()
    assert (tmp_path / "second.jsonl").read_bytes() == first
