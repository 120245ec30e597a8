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
from pytest_ragproof.llm.cache import STORE_NAME, entry_checksum
from pytest_ragproof.llm.request import build_request
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


def test_key_is_the_hash_of_the_whole_request_as_canonical_json() -> None:
    # The key is written part by part; it must stay the hash of the whole object (the
    # format docs/llm.md describes), or every cache written before would miss.
    import json

    import xxhash

    from pytest_ragproof.llm.cache import canonical_json

    parts: dict[str, object] = {
        "model": "openai/m",
        "prompt_version": "judge.faithfulness.verdicts/3",
        "messages": [
            {"role": "system", "content": "Juge « strict »\n\tcontexte"},
            {"content": "où? 🙂", "role": "user"},
        ],
        "params": {"temperature": 0.0, "seed": 0, "extra": {"b": [1, 2], "a": None}},
        "schema": {"type": "object", "properties": {"z": {}, "a": {"type": "string"}}},
    }
    whole = json.dumps(
        parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    expected = xxhash.xxh3_128_hexdigest(b"ragproof.llm.key/1\x00" + whole.encode("utf-8"))
    assert cache_key(**parts) == expected  # type: ignore[arg-type]
    text = canonical_json(parts["schema"])
    assert cache_key(**parts, schema_text=text) == expected  # type: ignore[arg-type]
    assert _key(schema=None) == xxhash.xxh3_128_hexdigest(
        b"ragproof.llm.key/1\x00"
        + json.dumps(
            {**{k: v for k, v in parts.items() if k != "schema"}, "schema": None}
            | {
                "model": "openai/m",
                "prompt_version": "v1",
                "messages": [{"role": "user", "content": "hi"}],
                "params": {"temperature": 0},
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode("utf-8")
    )


def test_entries_round_trip_in_one_file(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    assert cache.get(_key()) is None
    assert not (tmp_path / "c").exists()  # nothing written until the first put
    key = _key()
    cache.put(key, CachedResponse("text ü", 3, 4, True))
    cache.put(_key(prompt_version="v2"), CachedResponse(None, 0, 0))
    assert cache.get(key) == CachedResponse("text ü", 3, 4, True)
    assert cache.get(_key(prompt_version="v2")) == CachedResponse(None, 0, 0)
    cache.close()
    # Closed, the store is one file: the WAL is folded back into it.
    assert [p.name for p in (tmp_path / "c").iterdir()] == [STORE_NAME]
    again = ResponseCache(tmp_path / "c")
    assert again.get(key) == CachedResponse("text ü", 3, 4, True)
    assert again.notes() == [] and again.corrupt_entries == 0


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


def _flip_inside(path: Path, needle: bytes) -> None:
    """Flip one bit of the stored value that holds ``needle`` (inside the SQLite file)."""
    data = bytearray(path.read_bytes())
    assert data.count(needle) == 1
    data[data.index(needle) + len(needle) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_flipped_byte_inside_an_entry_is_a_miss_and_is_rewritten(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON), reply("plain"))
    llm_stub.default = reply(QA_JSON)
    first = make_client()
    asyncio.run(first.structured(MESSAGES, QA, prompt_version="k-v1"))
    asyncio.run(first.complete(MESSAGES, prompt_version="other-v1"))
    first.cache.close()
    _flip_inside(first.cache.path, b"A ranking function.")
    second = make_client()
    result = asyncio.run(second.structured(MESSAGES, QA, prompt_version="k-v1"))
    assert result.cached is False and llm_stub.request_count == 3
    assert second.cache.corrupt_entries == 1
    assert "1 damaged entry was not served" in second.cache.notes()[0]
    # The other entry is whole and still served.
    assert asyncio.run(second.complete(MESSAGES, prompt_version="other-v1")).cached
    second.cache.close()
    third = make_client()
    assert asyncio.run(third.structured(MESSAGES, QA, prompt_version="k-v1")).cached
    assert llm_stub.request_count == 3 and third.cache.notes() == []


def test_a_value_that_matches_its_checksum_but_is_no_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put(_key(), CachedResponse("x"))
    assert cache._conn is not None
    for bad in (b"{not json", b"[1, 2]", b'["x", 1, 2, "yes"]', b'["x", 1.5, 2, null]'):
        cache._conn.execute(
            "UPDATE entries SET value = ?, checksum = ? WHERE key = ?",
            (bad, entry_checksum(_key(), bad), _key()),
        )
        assert cache.get(_key()) is None
    assert cache.corrupt_entries == 4


@pytest.mark.parametrize("keep", [0.5, 0.02, 0.0])
def test_a_truncated_store_is_set_aside_never_served(tmp_path: Path, keep: float) -> None:
    cache = ResponseCache(tmp_path)
    keys = [_key(prompt_version=f"t-{i}") for i in range(200)]
    for key in keys:
        cache.put(key, CachedResponse(f"answer {key}", 1, 1))
    cache.close()
    size = cache.path.stat().st_size
    with cache.path.open("r+b") as fh:
        fh.truncate(int(size * keep))
    again = ResponseCache(tmp_path)
    got = [again.get(key) for key in keys]
    # Whatever SQLite can still read must be whole and right; nothing else is served.
    assert all(g is None or g.text == f"answer {k}" for g, k in zip(got, keys, strict=True))
    again.put(keys[0], CachedResponse("fresh", 1, 1))
    assert again.get(keys[0]) == CachedResponse("fresh", 1, 1)
    notes = again.notes()
    if keep == 0.0:  # an empty file is an empty database to SQLite: nothing to serve
        assert got == [None] * len(keys) and notes == []
        return
    assert notes and (
        "set aside as llm-cache.sqlite3.corrupt" in notes[0] or "damaged entr" in notes[0]
    )
    again.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert STORE_NAME in names


def test_a_file_that_is_no_database_is_set_aside_and_replaced(tmp_path: Path) -> None:
    (tmp_path / STORE_NAME).write_bytes(b"not a database at all\n" * 50)
    cache = ResponseCache(tmp_path)
    assert cache.get(_key()) is None
    cache.put(_key(), CachedResponse("x"))
    assert cache.get(_key()) == CachedResponse("x")
    [note] = cache.notes()
    assert "was not a usable database" in note and f"{STORE_NAME}.corrupt" in note
    assert (tmp_path / f"{STORE_NAME}.corrupt").read_bytes().startswith(b"not a database")


def test_a_sqlite_file_that_is_not_ours_is_never_touched(tmp_path: Path) -> None:
    import sqlite3

    theirs = tmp_path / STORE_NAME
    conn = sqlite3.connect(theirs)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    before = theirs.read_bytes()
    cache = ResponseCache(tmp_path)
    cache.put(_key(), CachedResponse("x"))
    assert cache.get(_key()) is None
    [note] = cache.notes()
    assert "not a ragproof" in note and "left untouched" in note
    cache.close()
    assert theirs.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [STORE_NAME]


def _old_layout_entry(root: Path, key: str, text: str | None, priced: bool | None) -> Path:
    """An entry file exactly as the folder cache of earlier versions wrote it."""
    target = root / key[0:2] / key[2:4] / f"{key}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(
        {
            "format": "ragproof.llmcache/1",
            "key": key,
            "priced": priced,
            "text": text,
            "usage": {"prompt_tokens": 5, "completion_tokens": 7},
        },
        ensure_ascii=False,
        sort_keys=True,
    )
    target.write_bytes(data.encode("utf-8"))
    return target


def test_a_folder_cache_is_migrated_once_and_foreign_files_are_left(
    llm_stub: StubServer, make_client: MakeClient, cache_dir: Path
) -> None:
    llm_stub.default = reply(QA_JSON)
    # The key a structured call makes, found by making it once against a scratch cache.
    scratch = make_client(cache=False)
    key = build_request(scratch.config, MESSAGES, "m-v1", {}, QA).key
    old = [
        _old_layout_entry(cache_dir, key, QA_JSON, True),
        _old_layout_entry(cache_dir, _key(prompt_version="x"), "plain ü", None),
    ]
    broken = cache_dir / key[0:2] / key[2:4] / ("f" * 32 + ".json")  # wrong shard: not ours
    broken.write_text("{}", "utf-8")
    leftover = old[1].parent / ".tmp-123-0011223344556677.json"  # an old write cut short
    leftover.write_text("{", "utf-8")
    unreadable = _old_layout_entry(cache_dir, _key(prompt_version="y"), "z", None)
    unreadable.write_text("{truncated", "utf-8")
    mine = cache_dir / "README.txt"
    mine.write_text("keep me", "utf-8")

    client = make_client()
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="m-v1"))
    assert result.cached and result.cost == 0.0 and llm_stub.request_count == 0
    assert client.cache.get(_key(prompt_version="x")) == CachedResponse("plain ü", 5, 7, None)
    assert client.cache.migrated_entries == 2
    [note] = client.cache.notes()
    assert "2 entries of the folder cache" in note and "1 unreadable" in note
    client.cache.close()
    assert not any(p.exists() for p in [*old, leftover, unreadable])
    assert broken.read_text("utf-8") == "{}" and mine.read_text("utf-8") == "keep me"
    left = sorted(str(p.relative_to(cache_dir)) for p in cache_dir.rglob("*") if p.is_file())
    assert left == sorted([STORE_NAME, "README.txt", str(broken.relative_to(cache_dir))])
    # Once: a second client finds nothing more to import.
    again = make_client()
    assert asyncio.run(again.structured(MESSAGES, QA, prompt_version="m-v1")).cached
    assert again.cache.migrated_entries == 0 and again.cache.notes() == []


def _writer(root: str, worker: int, n_own: int, n_shared: int, start: Any) -> None:
    cache = ResponseCache(root)
    start.wait(30)  # both processes write at the same time, not one after the other
    for i in range(n_shared):
        cache.put(_key(prompt_version=f"shared-{i}"), CachedResponse(f"shared {i}", 1, 1))
        cache.put(_key(prompt_version=f"w{worker}-{i}"), CachedResponse(f"own {worker} {i}", 1, 2))
    for i in range(n_shared, n_own):
        cache.put(_key(prompt_version=f"w{worker}-{i}"), CachedResponse(f"own {worker} {i}", 1, 2))
    assert cache.dropped_writes == 0, cache.notes()
    cache.close()


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
    assert cache._conn is not None
    [(count,)] = cache._conn.execute("SELECT count(*) FROM entries").fetchall()
    assert count == 2 * n_own + n_shared
    assert cache.corrupt_entries == 0 and cache.dropped_writes == 0
    cache.close()
    assert [p.name for p in Path(root).iterdir()] == [STORE_NAME]


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
    # The two calls run concurrently and may arrive in either order: each is answered
    # by what it asks for (the structured one carries a schema), not by arrival order.
    llm_stub.set_handler(
        lambda body: reply(QA_JSON if "response_format" in body or "JSON" in str(body) else "plain")
    )
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
