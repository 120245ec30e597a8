"""bench_local_judge's recording proxy tells first replies, retries and repairs apart.

ragproof's real client calls the scripted stub through the proxy, so the requests are
the ones a judge run sends: a 5xx retried with the same body, an invalid reply
repaired with an assistant turn, then a new call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks._recording_proxy import RecordingProxy, group_calls
from pytest_ragproof.errors import InvalidOutputError
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from tests.llm.conftest import MESSAGES, PLAIN_MODEL, QA, QA_JSON
from tests.llm_stub import StubServer, cut, reply, server_error


def _client(url: str, tmp_path: Path) -> LLMClient:
    config = LLMConfig(
        model=PLAIN_MODEL,
        api_base=url,
        timeout_s=5.0,
        max_retries=2,
        backoff_base_s=0.01,
        backoff_max_s=0.02,
    )
    return LLMClient(config, ResponseCache(tmp_path / "cache", enabled=False))


def test_retries_and_repairs_stay_in_their_call(
    llm_stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_stub.script(
        server_error(503),  # call 1: retried with the same body,
        reply("not json"),  # answered invalid,
        reply(QA_JSON),  # repaired
        reply(QA_JSON),  # call 2: valid first time
        cut('{"question": "Wh', completion_tokens=9),  # call 3: cut, repaired, cut again
        cut('{"question": "Wh', completion_tokens=9),
    )
    proxy = RecordingProxy(llm_stub.url.removesuffix("/v1")).start()
    try:
        client = _client(proxy.url, tmp_path)
        first = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
        other = [{"role": "user", "content": "Write another question."}]
        second = asyncio.run(client.structured(other, QA, prompt_version="t-v1"))
        third = [{"role": "user", "content": "Write a third question."}]
        try:
            asyncio.run(client.structured(third, QA, prompt_version="t-v1"))
            failed = None
        except InvalidOutputError as exc:
            failed = exc
    finally:
        proxy.stop()
    assert first.repaired and not second.repaired
    assert failed is not None and failed.kind.startswith("cut at ")
    exchanges = proxy.since(0)
    assert [(e.status, e.retry, e.repair) for e in exchanges] == [
        (503, False, False),
        (200, True, False),
        (200, False, True),
        (200, False, False),
        (200, False, False),
        (200, False, True),
    ]
    assert exchanges[-1].finish_reason == "length" and exchanges[-1].completion_tokens == 9
    calls = group_calls(exchanges)
    assert [len(c.requests) for c in calls] == [3, 1, 2]
    assert [(c.first_answered, c.repaired, c.repair_answered) for c in calls] == [
        (True, True, True),
        (True, False, False),
        (True, True, True),
    ]
    assert all(e.delivered for e in exchanges)
