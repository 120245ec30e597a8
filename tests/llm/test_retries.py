"""Retries, timeouts and concurrency, through litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import time

import pytest

from pytest_ragproof.errors import (
    InvalidOutputError,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    LLMUnreachableError,
    ProviderError,
)
from tests.llm.conftest import MESSAGES, QA, QA_JSON, MakeClient
from tests.llm_stub import StubServer, closed_url, hang, rate_limited, reply, server_error


def test_429_waits_the_retry_after_then_succeeds(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(rate_limited(retry_after=0.6), reply(QA_JSON))
    client = make_client()  # backoff base 10 ms: only Retry-After explains a long wait
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert result.attempts == 2
    first, second = llm_stub.request_times
    assert second - first >= 0.6
    assert client.stats.retries == {"rate_limit": 1}


def test_429_without_retry_after_uses_backoff(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(rate_limited(), rate_limited(), reply(QA_JSON))
    client = make_client()
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert llm_stub.request_count == 3
    assert client.stats.retries == {"rate_limit": 2}
    assert llm_stub.request_times[-1] - llm_stub.request_times[0] < 1.0


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried_and_counted(
    llm_stub: StubServer, make_client: MakeClient, status: int
) -> None:
    llm_stub.script(server_error(status), server_error(status), reply(QA_JSON))
    client = make_client()
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert result.attempts == 3
    assert client.stats.retries == {"server_error": 2}
    assert client.stats.requests == 3


def test_a_hang_times_out_and_is_retried(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.script(hang(30), reply(QA_JSON))
    client = make_client(timeout_s=0.5)
    start = time.perf_counter()
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert time.perf_counter() - start < 3.0
    assert result.attempts == 2
    assert client.stats.retries == {"timeout": 1}


def test_a_persistent_hang_raises_llm_timeout_error(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.default = hang(30)
    client = make_client(timeout_s=0.4, max_retries=1)
    start = time.perf_counter()
    with pytest.raises(LLMTimeoutError) as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert time.perf_counter() - start < 3.0
    assert info.value.attempts == 2 and info.value.status is None
    assert llm_stub.request_count == 2
    assert client.stats.failures == {"LLMTimeoutError:Timeout": 1}


def test_retries_are_bounded_in_count(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.default = server_error(503)
    client = make_client(max_retries=2)
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert (info.value.status, info.value.attempts) == (503, 3)
    assert info.value.exc_type == "ServiceUnavailableError"
    assert llm_stub.request_count == 3
    assert client.stats.retries == {"server_error": 2}
    assert client.stats.failures == {"ProviderError:ServiceUnavailableError": 1}


def test_retries_are_bounded_in_total_time(llm_stub: StubServer, make_client: MakeClient) -> None:
    # A Retry-After longer than the whole budget: give up now rather than sleep.
    llm_stub.default = rate_limited(retry_after=30)
    client = make_client(max_total_s=2.0)
    start = time.perf_counter()
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="r-v1"))
    assert time.perf_counter() - start < 1.5
    assert (info.value.status, info.value.attempts) == (429, 1)


def test_client_errors_are_not_retried(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.default = server_error(400)
    client = make_client()
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.complete(MESSAGES, prompt_version="r-v1"))
    assert (info.value.status, info.value.attempts) == (400, 1)
    assert llm_stub.request_count == 1


def test_a_refused_connection_is_one_configuration_error_not_retried(
    make_client: MakeClient,
) -> None:
    # litellm wraps the refusal as InternalServerError (HTTP 500); nothing listens there,
    # so a retry cannot help and "server error" would point at the wrong place.
    address = closed_url()
    client = make_client(api_base=address + "/", max_retries=3)
    with pytest.raises(LLMUnreachableError) as info:
        asyncio.run(client.complete(MESSAGES, prompt_version="r-v1"))
    assert str(info.value).startswith(f"cannot reach {address} (connection refused)")
    assert isinstance(info.value, LLMConfigError)
    assert client.stats.requests == 1 and not client.stats.retries


def test_concurrency_is_bounded_and_batch_order_kept(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    def answer(body: dict[str, object]) -> object:
        text = body["messages"][-1]["content"]  # type: ignore[index]
        if text == "fail":
            return server_error(400)
        return reply(f'{{"question": "{text}", "answer": "a"}}', delay_s=0.15)

    llm_stub.set_handler(answer)  # type: ignore[arg-type]
    client = make_client(concurrency=3, cache=False)
    prompts = [f"q{i}" for i in range(8)] + ["fail"]
    jobs = [
        client.structured([{"role": "user", "content": p}], QA, prompt_version="b-v1")
        for p in prompts
    ]
    results = client.run_batch(jobs)
    assert llm_stub.max_in_flight == 3
    assert [r.value.question for r in results[:8] if not isinstance(r, LLMError)] == prompts[:8]
    assert isinstance(results[8], ProviderError)
    # A second batch runs on a new event loop with the same client.
    again = client.run_batch(
        [client.complete([{"role": "user", "content": "q9"}], prompt_version="b-v1")]
    )
    assert not isinstance(again[0], LLMError)
    assert client.stats.calls == 10


def test_structured_batch_answers_hits_first_and_keeps_order(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    def answer(body: dict[str, object]) -> object:
        # The first user message, so a repair request for "bad" fails again.
        users = [m for m in body["messages"] if m["role"] == "user"]  # type: ignore[attr-defined]
        text = users[0]["content"]
        if text == "bad":
            return reply("no json here")
        return reply(f'{{"question": "{text}", "answer": "a"}}', delay_s=0.05)

    llm_stub.set_handler(answer)  # type: ignore[arg-type]
    batch = [[{"role": "user", "content": p}] for p in ("a", "b", "bad", "c")]
    first = make_client().structured_batch(batch[:2], QA, prompt_version="sb-v1")
    assert [r.cached for r in first if not isinstance(r, LLMError)] == [False, False]
    client = make_client(concurrency=2)
    results = client.structured_batch(batch, QA, prompt_version="sb-v1")
    assert isinstance(results[2], InvalidOutputError)
    ok = [r for r in results if not isinstance(r, LLMError)]
    assert [(r.value.question, r.cached) for r in ok] == [("a", True), ("b", True), ("c", False)]
    # 2 first-run requests, then "bad" and its repair, then "c".
    assert llm_stub.request_count == 5
    assert client.stats.calls == 4 and client.stats.cache_hits == 2
