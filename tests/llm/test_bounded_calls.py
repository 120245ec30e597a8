"""Issue 38: every call is bounded, a cut reply is named, failed calls are counted.

All through litellm's real call path against the scripted stub on 127.0.0.1.
"""

from __future__ import annotations

import asyncio

import pytest

from pytest_ragproof.errors import InvalidOutputError, LLMTimeoutError, ProviderError
from pytest_ragproof.llm.request import BUDGET_MAX_TOKENS, completion_budget
from tests.llm.conftest import MESSAGES, QA, QA_JSON, MakeClient
from tests.llm_stub import StubServer, cut, hang, reply, server_error


def test_a_structured_call_carries_a_budget_sized_for_its_items(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON), reply(QA_JSON))
    client = make_client(cache=False)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1", items=10))
    one, ten = (r["max_tokens"] for r in llm_stub.requests)
    assert one == completion_budget(MESSAGES, 1)
    assert ten == completion_budget(MESSAGES, 10) > one
    long = [{"role": "user", "content": "word " * 100_000}]
    assert completion_budget(long, 1) == BUDGET_MAX_TOKENS


def test_the_configured_budget_wins_over_the_steps(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON))
    client = make_client(cache=False, max_tokens=77)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1", items=10))
    assert llm_stub.requests[0]["max_tokens"] == 77


def test_a_cut_reply_is_repaired_once_without_its_fragment_then_kept(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    # The cut text happens to parse: it is still not used.
    llm_stub.script(cut(QA_JSON, completion_tokens=40), reply(QA_JSON))
    client = make_client(max_tokens=40)
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert (result.repaired, result.attempts) == (True, 2)
    repair = llm_stub.requests[1]["messages"]
    assert QA_JSON not in repair[-2]["content"]  # the fragment is not sent back
    assert "cut at 40 tokens" in repair[-1]["content"]
    assert client.stats.cut == 1


def test_a_reply_cut_twice_is_an_error_named_by_its_budget_and_never_cached(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    fragment = '{"question": "What is BM25?", "answer": "A ranking'
    llm_stub.script(cut(fragment), cut(fragment), reply(QA_JSON))
    client = make_client(max_tokens=64)
    with pytest.raises(InvalidOutputError) as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert info.value.kind == "cut at 64 tokens"
    assert info.value.attempts == 2
    assert "cut at 64 tokens (finish_reason: length)" in str(info.value)
    assert client.stats.failures == {"InvalidOutputError:cut": 1}
    # Not cached, not even for generation's replay of invalid replies: asked again.
    again = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1", replay_invalid=True))
    assert not again.cached and llm_stub.request_count == 3


def test_instructions_can_go_into_the_first_user_message(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON))
    client = make_client(cache=False, instructions="user")
    messages = [
        {"role": "system", "content": "You judge answers."},
        {"role": "user", "content": "Write one question."},
    ]
    asyncio.run(client.structured(messages, QA, prompt_version="t-v1"))
    sent = llm_stub.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert "You judge answers." in sent[0]["content"]
    assert '"question"' in sent[0]["content"]  # the schema instruction too
    assert sent[0]["content"].endswith("Write one question.")


def test_failed_calls_carry_their_attempts_kind_and_time(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(server_error(500), server_error(500), server_error(500))
    client = make_client(cache=False, max_retries=2)
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert (info.value.kind, info.value.attempts) == ("HTTP 500", 3)
    assert info.value.waited_s > 0
    assert client.stats.waited_s == pytest.approx(info.value.waited_s)

    llm_stub.script(hang(5.0))
    slow = make_client(cache=False, max_retries=0, timeout_s=0.2)
    with pytest.raises(LLMTimeoutError) as timed_out:
        asyncio.run(slow.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert timed_out.value.kind == "timeout"
    assert timed_out.value.waited_s >= 0.2


def test_an_endpoint_that_answers_nothing_is_given_up_on_once(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    """Timeouts in a row: the concurrency drops to 1, then the client stops calling."""
    from pytest_ragproof.errors import LLMUnresponsiveError
    from pytest_ragproof.llm.breaker import UNANSWERED_LIMIT

    llm_stub.set_handler(lambda body: hang(5.0))
    client = make_client(cache=False, max_retries=2, timeout_s=0.2, concurrency=4)
    jobs = [
        client.structured([{"role": "user", "content": f"q{i}"}], QA, prompt_version="t-v1")
        for i in range(40)
    ]
    with pytest.raises(LLMUnresponsiveError) as info:
        client.run_batch(jobs)
    message = str(info.value)
    assert llm_stub.url.removesuffix("/v1") in message
    assert "lowered to 1" in message and "timeout" in message
    assert client.stats.concurrency_lowered_to == 1
    # The first wave at concurrency 4 (and its retries in flight), then K at 1: never
    # 40 calls times 3 attempts.
    assert llm_stub.request_count <= 4 * 3 + UNANSWERED_LIMIT


def test_an_endpoint_that_answers_errors_is_alive(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    """HTTP errors are answers: each call fails on its own, nothing is given up on."""
    llm_stub.set_handler(lambda body: server_error(500))
    client = make_client(cache=False, max_retries=0, concurrency=2)
    jobs = [
        client.structured([{"role": "user", "content": f"q{i}"}], QA, prompt_version="t-v1")
        for i in range(12)
    ]
    results = client.run_batch(jobs)
    assert all(isinstance(r, ProviderError) for r in results)
    assert llm_stub.request_count == 12
