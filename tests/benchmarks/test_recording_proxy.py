"""bench_local_judge's recording proxy tells first replies, retries and repairs apart.

ragproof's real client calls the stub through the proxy, so the requests are the
ones a judge run sends: a 5xx retried with the same body, an invalid reply repaired
with an assistant turn, a reply cut at its budget twice, and the three calls
interleaved even with one request in flight (as judge-check's items are), after the
response-format probes of ``auto``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchmarks._recording_proxy import RecordingProxy, group_calls
from pytest_ragproof.errors import InvalidOutputError
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from tests.llm.conftest import PLAIN_MODEL, QA, QA_JSON
from tests.llm_stub import Action, StubServer, cut, reply, server_error

FIRST, SECOND, THIRD = "Write one question.", "Write another question.", "Write a third question."


class Server:
    """call 1: HTTP 503, then not JSON, then repaired; call 2: valid; call 3: cut twice."""

    def __init__(self) -> None:
        self.failed_once = False

    def __call__(self, body: dict[str, Any]) -> Action:
        messages = body["messages"]
        text = " ".join(str(m["content"]) for m in messages)
        repair = any(m["role"] == "assistant" for m in messages)
        if THIRD in text:
            return cut('{"question": "Wh', completion_tokens=9)
        if SECOND in text or repair:
            return reply(QA_JSON, delay_s=0.05)
        if not self.failed_once:
            self.failed_once = True
            return server_error(503)
        return reply("not json")


def test_retries_and_repairs_stay_in_their_call(
    llm_stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_stub.set_handler(Server())
    proxy = RecordingProxy(llm_stub.url.removesuffix("/v1")).start()
    config = LLMConfig(
        model=PLAIN_MODEL,
        api_base=proxy.url,
        timeout_s=5.0,
        max_retries=2,
        backoff_base_s=0.01,
        backoff_max_s=0.02,
        concurrency=1,
        instructions="user",
    )
    client = LLMClient(config, ResponseCache(tmp_path / "cache", enabled=False))

    async def three() -> list[Any]:
        asks = [
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": t}]
            for t in (FIRST, SECOND, THIRD)
        ]
        calls = (client.structured(m, QA, prompt_version="t-v1") for m in asks)
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        first, second, third = asyncio.run(three())
    finally:
        proxy.stop()
    assert first.repaired and not second.repaired
    assert isinstance(third, InvalidOutputError) and third.kind.startswith("cut at ")
    # auto: the stub refuses both probes (the prompt form is used); they are no call.
    probes = [e for e in proxy.since(0) if e.probe]
    assert len(probes) == 2 and len(llm_stub.probes) == 2
    exchanges = [e for e in proxy.since(0) if not e.probe]
    assert len(exchanges) == 6 and all(e.delivered for e in exchanges)
    calls = group_calls(proxy.since(0))
    shapes = [[(e.status, e.retry, e.repair) for e in c.requests] for c in calls]
    assert sorted(shapes) == sorted(
        [
            [(503, False, False), (200, True, False), (200, False, True)],
            [(200, False, False)],
            [(200, False, False), (200, False, True)],
        ]
    )
    outcomes = {
        c.requests[0].status: (c.first_answered, c.repaired, c.repair_answered)
        for c in calls
        if len(c.requests) != 2
    }
    assert outcomes == {503: (True, True, True), 200: (True, False, False)}
    cut_call = next(c for c in calls if len(c.requests) == 2)
    assert all(e.finish_reason == "length" and e.completion_tokens == 9 for e in cut_call.requests)
    # The requests of different calls came interleaved: the proxy saw them out of call order.
    order = [next(i for i, c in enumerate(calls) if e in c.requests) for e in exchanges]
    assert order != sorted(order)
