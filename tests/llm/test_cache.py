"""The on-disk response cache: keys, layout, corruption, concurrency, no litellm on hits."""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.llm import (
    CachedResponse,
    ResponseCache,
    add_cache_arguments,
    cache_from_args,
    cache_key,
    resolve_cache_dir,
)
from tests.llm.conftest import MESSAGES, QA, QA_JSON, MakeClient
from tests.llm_stub import StubServer, reply

REPO = Path(__file__).resolve().parents[2]


def _key(**changes: object) -> str:
    parts: dict[str, object] = {
        "model": "openai/m",
        "prompt_version": "v1",
        "messages": [{"role": "user", "content": "hi"}],
        "params": {"temperature": 0},
        "schema": {"type": "object"},
    }
    parts.update(changes)
    return cache_key(**parts)  # type: ignore[arg-type]


def test_key_is_stable_and_covers_every_input() -> None:
    base = _key()
    assert len(base) == 32 and int(base, 16) >= 0
    assert base == _key(params={"temperature": 0})
    variants = [
        _key(model="openai/n"),
        _key(prompt_version="v2"),
        _key(messages=[{"role": "user", "content": "hi!"}]),
        _key(params={"temperature": 0.5}),
        _key(schema={"type": "array"}),
        _key(schema=None),
    ]
    assert len({base, *variants}) == 1 + len(variants)


def test_entries_fan_out_and_round_trip(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    assert not (tmp_path / "c").exists()  # nothing written until the first put
    key = _key()
    assert cache.get(key) is None
    cache.put(key, CachedResponse("text ü", 3, 4))
    assert cache.path_for(key) == tmp_path / "c" / key[:2] / key[2:4] / f"{key}.json"
    assert cache.get(key) == CachedResponse("text ü", 3, 4)
    assert [p.name for p in cache.path_for(key).parent.iterdir()] == [f"{key}.json"]


def test_disabled_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    ResponseCache(tmp_path).put(_key(), CachedResponse("x"))
    off = ResponseCache(tmp_path / "other", enabled=False)
    off.put(_key(), CachedResponse("x"))
    assert off.get(_key()) is None
    assert not (tmp_path / "other").exists()
    assert ResponseCache(tmp_path, enabled=False).get(_key()) is None


def test_location_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGPROOF_CACHE_DIR", raising=False)
    assert resolve_cache_dir() == tmp_path / ".ragproof_cache"
    monkeypatch.setenv("RAGPROOF_CACHE_DIR", str(tmp_path / "env"))
    assert resolve_cache_dir() == tmp_path / "env"
    assert resolve_cache_dir(tmp_path / "arg") == tmp_path / "arg"


def test_cli_options(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_cache_arguments(parser)
    on = cache_from_args(parser.parse_args(["--cache-dir", str(tmp_path)]))
    assert (on.root, on.enabled) == (tmp_path, True)
    assert cache_from_args(parser.parse_args(["--no-cache"])).enabled is False


@pytest.mark.parametrize(
    "garbage",
    [b"", b"{not json", b'{"format": "other"}', b"[1, 2]", b'{"format": "ragproof.llmcache/1"}'],
)
def test_corrupt_entry_is_ignored_and_rewritten(
    llm_stub: StubServer, make_client: MakeClient, garbage: bytes
) -> None:
    llm_stub.default = reply(QA_JSON)
    first = make_client()
    asyncio.run(first.structured(MESSAGES, QA, prompt_version="k-v1"))
    [entry] = list(first.cache.root.rglob("*.json"))
    entry.write_bytes(garbage)
    second = make_client()
    result = asyncio.run(second.structured(MESSAGES, QA, prompt_version="k-v1"))
    assert result.cached is False and llm_stub.request_count == 2
    assert second.cache.corrupt_entries == 1
    assert json.loads(entry.read_bytes())["text"] == QA_JSON  # rewritten
    third = make_client()
    assert asyncio.run(third.structured(MESSAGES, QA, prompt_version="k-v1")).cached
    assert llm_stub.request_count == 2


def _writer(root: str, worker: int, n_own: int, n_shared: int, start: Any) -> None:
    cache = ResponseCache(root)
    start.wait(30)  # both processes write at the same time, not one after the other
    for i in range(n_shared):
        cache.put(_key(prompt_version=f"shared-{i}"), CachedResponse(f"shared {i}", 1, 1))
        cache.put(_key(prompt_version=f"w{worker}-{i}"), CachedResponse(f"own {worker} {i}", 1, 2))
    for i in range(n_shared, n_own):
        cache.put(_key(prompt_version=f"w{worker}-{i}"), CachedResponse(f"own {worker} {i}", 1, 2))


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    root = str(tmp_path / "shared")
    n_own, n_shared = 300, 100
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(root, w, n_own, n_shared, start)) for w in (0, 1)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    cache = ResponseCache(root)
    for worker in (0, 1):
        for i in range(n_own):
            got = cache.get(_key(prompt_version=f"w{worker}-{i}"))
            assert got == CachedResponse(f"own {worker} {i}", 1, 2)
    for i in range(n_shared):
        assert cache.get(_key(prompt_version=f"shared-{i}")) == CachedResponse(f"shared {i}", 1, 1)
    files = list(Path(root).rglob("*"))
    assert not [f for f in files if f.name.startswith(".tmp-")]
    assert len([f for f in files if f.is_file()]) == 2 * n_own + n_shared
    assert cache.corrupt_entries == 0


CACHED_RUN = textwrap.dedent(
    """
    import json, sys
    from pydantic import BaseModel
    from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache

    class QA(BaseModel):
        question: str
        answer: str

    api_base, cache_dir, messages = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    client = LLMClient(LLMConfig(model="openai/stub-model", api_base=api_base),
                       ResponseCache(cache_dir))
    results = client.run_batch([
        client.structured(messages, QA, prompt_version="s-v1"),
        client.complete(messages, prompt_version="c-v1"),
    ])
    [batched] = client.structured_batch([messages], QA, prompt_version="s-v1")
    assert batched.value == results[0].value, batched
    print(json.dumps({
        "litellm_imported": any(m.split(".")[0] == "litellm" for m in sys.modules),
        "answer": results[0].value.answer,
        "text": results[1].text,
        "cached": [r.cached for r in results],
        "stats": client.stats.as_dict(),
    }))
    """
)


def test_cached_rerun_makes_no_request_and_never_imports_litellm(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON), reply("plain"))
    client = make_client()
    client.run_batch(
        [
            client.structured(MESSAGES, QA, prompt_version="s-v1"),
            client.complete(MESSAGES, prompt_version="c-v1"),
        ]
    )
    assert llm_stub.request_count == 2
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CACHED_RUN,
            llm_stub.url,
            str(client.cache.root),
            json.dumps(MESSAGES),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["litellm_imported"] is False
    assert (out["answer"], out["text"], out["cached"]) == (
        "A ranking function.",
        "plain",
        [True, True],
    )
    assert out["stats"]["cache_hits"] == 3 and out["stats"]["requests"] == 0
    assert llm_stub.request_count == 2
