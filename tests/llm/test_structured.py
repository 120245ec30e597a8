"""Structured output through litellm's real call path against the stub."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_ragproof.errors import InvalidOutputError
from pytest_ragproof.llm import CachedResponse
from pytest_ragproof.llm.request import build_request
from tests.llm.conftest import MESSAGES, PLAIN_MODEL, QA, QA_JSON, SCHEMA_MODEL, MakeClient
from tests.llm_stub import StubServer, reply


def test_structured_reply_is_validated_with_prompt_fallback(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON))
    client = make_client(cache=False)
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.value == QA(question="What is BM25?", answer="A ranking function.")
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (11, 7)
    assert (result.cached, result.attempts, result.repaired) == (False, 1, False)
    assert result.cost is None  # litellm has no price for this model name
    body = llm_stub.requests[0]
    assert "response_format" not in body
    assert body["messages"][0]["role"] == "system"
    assert '"question"' in body["messages"][0]["content"]  # the schema is in the prompt
    assert body["messages"][1:] == MESSAGES
    assert body["temperature"] == 0
    assert client.stats.as_dict()["requests"] == 1


def test_models_with_schema_support_get_a_json_schema_response_format(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON))
    client = make_client(model=SCHEMA_MODEL, cache=False, seed=7)
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    body = llm_stub.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["question", "answer"]
    assert body["messages"] == MESSAGES
    assert body["seed"] == 7
    assert result.cost is not None and result.cost > 0
    assert client.stats.cost_usd == pytest.approx(result.cost)


def test_json_inside_prose_and_fences_is_extracted(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(f"Sure! Here it is:\n```json\n{QA_JSON}\n```\nAnything else?"))
    result = asyncio.run(make_client().structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.value.answer == "A ranking function."
    assert llm_stub.request_count == 1


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("this is not json at all", id="no-json"),
        pytest.param('{"question": "What is BM25?", "answer": "A rank', id="truncated"),
        pytest.param("", id="empty"),
        pytest.param(None, id="null-content"),
        pytest.param('{"question": "q", "answer": 42}', id="wrong-type"),
    ],
)
def test_invalid_output_is_repaired_once(
    llm_stub: StubServer, make_client: MakeClient, bad: str | None
) -> None:
    llm_stub.script(reply(bad), reply(QA_JSON, prompt_tokens=20, completion_tokens=9))
    client = make_client()
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.value.question == "What is BM25?"
    assert (result.attempts, result.repaired) == (2, True)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (31, 16)
    assert client.stats.repairs == 1
    repair = llm_stub.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": bad or ""}
    assert repair[-1]["role"] == "user"
    assert "could not be used" in repair[-1]["content"]
    if bad is not None and "42" in bad:
        # The summary names where the error is, not the rejected value.
        assert "answer" in repair[-1]["content"] and "42" not in repair[-1]["content"]


def test_output_still_invalid_after_repair_raises_and_is_not_cached(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    # Issue 30 item 1 changes this: an invalid reply used to be cached and served
    # again; now the next run asks the model again, and a clean reply is then kept.
    llm_stub.script(reply("{not json"), reply('{"question": "only half'))
    client = make_client()
    with pytest.raises(InvalidOutputError, match=r"did not match QA after one repair") as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert "\n" not in str(info.value)
    assert llm_stub.request_count == 2
    assert client.stats.failures["InvalidOutputError"] == 1
    assert not client.cache.root.exists()  # nothing was cached
    llm_stub.script(reply(QA_JSON))
    again = make_client()
    result = asyncio.run(again.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert (result.cached, result.value.answer) == (False, "A ranking function.")
    assert llm_stub.request_count == 3 and again.stats.cache_hits == 0
    third = make_client()
    assert asyncio.run(third.structured(MESSAGES, QA, prompt_version="t-v1")).cached
    assert llm_stub.request_count == 3


def test_an_invalid_reply_already_in_the_cache_is_asked_again(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    # A cache written by an earlier version holds the bad reply a faulty model gave.
    llm_stub.script(reply(QA_JSON))
    first = make_client()
    asyncio.run(first.structured(MESSAGES, QA, prompt_version="t-v1"))
    key = build_request(first.config, MESSAGES, "t-v1", {}, QA).key
    stored = first.cache.get(key)
    assert stored is not None
    bad = "Sure! Here is the JSON you asked for: {question: ..."
    first.cache.put(key, CachedResponse(bad, stored.prompt_tokens, stored.completion_tokens))
    first.cache.close()
    llm_stub.script(reply(QA_JSON))
    clean = make_client()
    [result] = clean.structured_batch([MESSAGES], QA, prompt_version="t-v1")
    assert not isinstance(result, Exception)
    assert (result.cached, result.value.question) == (False, "What is BM25?")
    assert (clean.stats.cache_hits, llm_stub.request_count) == (0, 2)
    [again] = make_client().structured_batch([MESSAGES], QA, prompt_version="t-v1")
    assert not isinstance(again, Exception) and again.cached
    assert llm_stub.request_count == 2


def test_replay_invalid_reproduces_the_discard_without_a_call(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply("{not json"), reply('{"question": "only half'))
    with pytest.raises(InvalidOutputError):
        asyncio.run(
            make_client().structured(MESSAGES, QA, prompt_version="t-v1", replay_invalid=True)
        )
    again = make_client()
    with pytest.raises(InvalidOutputError, match=r"after one repair"):
        asyncio.run(again.structured(MESSAGES, QA, prompt_version="t-v1", replay_invalid=True))
    assert llm_stub.request_count == 2
    assert again.stats.cache_hits == 1


@pytest.mark.parametrize(("model", "priced"), [(PLAIN_MODEL, False), (SCHEMA_MODEL, True)])
def test_a_cached_answer_reports_cost_as_the_call_that_made_it(
    llm_stub: StubServer, make_client: MakeClient, model: str, priced: bool
) -> None:
    llm_stub.script(reply(QA_JSON), reply("plain"))
    first = make_client(model=model)
    made = asyncio.run(first.structured(MESSAGES, QA, prompt_version="t-v1"))
    text = asyncio.run(first.complete(MESSAGES, prompt_version="c-v1"))
    assert (made.cost is not None, text.cost is not None) == (priced, priced)
    cached = make_client(model=model)
    hit = asyncio.run(cached.structured(MESSAGES, QA, prompt_version="t-v1"))
    text_hit = asyncio.run(cached.complete(MESSAGES, prompt_version="c-v1"))
    assert hit.cached and text_hit.cached and llm_stub.request_count == 2
    expected = 0.0 if priced else None  # free today; unknown stays unknown
    assert (hit.cost, text_hit.cost, cached.stats.cost_usd) == (expected, expected, expected)


def test_plain_completion_and_cache_hit(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.script(reply("plain words"))
    first = asyncio.run(make_client().complete(MESSAGES, prompt_version="c-v1"))
    second = asyncio.run(make_client().complete(MESSAGES, prompt_version="c-v1"))
    assert first.text == second.text == "plain words"
    assert (first.cached, second.cached, second.attempts) == (False, True, 0)
    assert second.usage == first.usage
    assert llm_stub.request_count == 1
    assert json.dumps(llm_stub.requests[0]["messages"]) == json.dumps(MESSAGES)


def test_a_different_prompt_version_misses_the_cache(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.script(reply(QA_JSON), reply(QA_JSON))
    asyncio.run(make_client().structured(MESSAGES, QA, prompt_version="t-v1"))
    asyncio.run(make_client().structured(MESSAGES, QA, prompt_version="t-v2"))
    assert llm_stub.request_count == 2


def test_without_a_cache_no_cache_key_is_made(
    llm_stub: StubServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key (a canonical dump and hash of the whole request) is wasted work with no cache."""
    from pytest_ragproof.llm import request as request_module

    def refuse(**_: object) -> str:
        raise AssertionError("a cache key was made for a run without a cache")

    monkeypatch.setattr(request_module, "cache_key", refuse)
    llm_stub.script(reply(QA_JSON), reply("plain"))
    client = make_client(cache=False)
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.value.answer == "A ranking function."
    assert asyncio.run(client.complete(MESSAGES, prompt_version="t-v1")).text == "plain"
    with pytest.raises(AssertionError, match="cache key"):
        make_client().cache.get(build_request(client.config, MESSAGES, "t-v1", {}, QA).key)
