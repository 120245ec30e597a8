"""The stub server itself: routing, unscripted requests, prompt shutdown during a hang."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

from pytest_ragproof.llm import estimate_tokens
from tests.llm_stub import StubServer, hang, reply_json


def _post(server: StubServer, path: str, body: object, timeout: float = 5.0) -> tuple[int, str]:
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_routes_script_and_records(llm_stub: StubServer) -> None:
    llm_stub.script(reply_json({"a": 1}))
    status, text = _post(llm_stub, "/v1/chat/completions", {"model": "m", "messages": []})
    assert status == 200
    assert json.loads(json.loads(text)["choices"][0]["message"]["content"]) == {"a": 1}
    status, _ = _post(llm_stub, "/chat/completions", {"model": "m"})
    assert status == 400  # script exhausted: a non-retryable answer, not a hang
    status, _ = _post(llm_stub, "/v1/embeddings", {})
    assert status == 404
    assert llm_stub.request_count == 2
    assert llm_stub.requests[0] == {"model": "m", "messages": []}


def test_stop_does_not_wait_for_a_hanging_request() -> None:
    server = StubServer().start()
    server.script(hang(60))
    outcome: list[str] = []

    def call() -> None:
        try:
            _post(server, "/v1/chat/completions", {}, timeout=30)
            outcome.append("answered")
        except (OSError, http.client.HTTPException) as exc:
            outcome.append(type(exc).__name__)  # the server closed the connection

    client = threading.Thread(target=call, daemon=True)
    client.start()
    deadline = time.monotonic() + 5
    while server.request_count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.perf_counter()
    server.stop()
    assert time.perf_counter() - start < 2.0
    client.join(5)
    assert not client.is_alive()
    assert outcome and outcome != ["answered"]


def test_estimate_tokens_is_characters_over_four() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "abcd" * 3},
        {"role": "user", "content": None},
    ]
    assert estimate_tokens(messages) == 3
