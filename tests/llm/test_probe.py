"""``auto`` at a local OpenAI-compatible server: the server is asked once which structured
form it takes (llm.probe), through litellm's real call path against the stub."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_ragproof.llm.client import LLMClient
from tests.llm.conftest import MESSAGES, QA, QA_JSON, MakeClient
from tests.llm_stub import StubServer, accept_probes, hang, reply


def _ask_twice(client: LLMClient) -> None:
    """Two different calls at once: the first to miss the cache asks the server."""
    again = [*MESSAGES, {"role": "user", "content": "again"}]

    async def both() -> None:
        await asyncio.gather(
            client.structured(MESSAGES, QA, prompt_version="t-v1"),
            client.structured(again, QA, prompt_version="t-v1"),
        )

    asyncio.run(both())


def test_a_server_that_follows_json_schema_gets_it_after_one_probe(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.probe_handler = accept_probes("json_schema")  # llama.cpp's llama-server
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client(cache=False)
    _ask_twice(client)
    # Two concurrent calls, one probe: the first form was taken.
    assert len(llm_stub.probes) == 1
    [probe] = llm_stub.probes
    assert probe["response_format"]["type"] == "json_schema" and probe["max_tokens"] == 48
    assert len(llm_stub.requests) == 2
    for body in llm_stub.requests:
        assert body["response_format"]["type"] == "json_schema"
        schema = body["response_format"]["json_schema"]["schema"]
        assert set(schema["properties"]) == {"question", "answer"}
        # The grammar carries the schema: the messages go as written.
        assert body["messages"][: len(MESSAGES)] == MESSAGES
    stats = client.stats.as_dict()
    assert stats["requests"] == 2 and stats["probe_requests"] == 1
    assert stats["response_format"] == "json_schema (auto)"
    assert stats["failures"] == {}


def test_llama_cpp_pythons_server_gets_json_object_with_its_schema(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    # llama-cpp-python answers json_schema with HTTP 500 and takes its own extension.
    llm_stub.probe_handler = accept_probes("json_object_schema")
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client(cache=False)
    result = asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.value.answer == "A ranking function."
    # One attempt per form: the 500 of a probe is an answer, not retried.
    assert [p["response_format"]["type"] for p in llm_stub.probes] == [
        "json_schema",
        "json_object",
    ]
    [body] = llm_stub.requests
    fmt = body["response_format"]
    assert fmt["type"] == "json_object"
    assert set(fmt["schema"]["properties"]) == {"question", "answer"}
    assert '"question"' in body["messages"][0]["content"]  # and the schema in the prompt
    stats = client.stats.as_dict()
    assert stats["response_format"] == (
        "json_object with its schema (auto: json_schema refused, HTTP 500)"
    )
    assert stats["failures"] == {} and stats["retries"] == {} and stats["waited_s"] == 0


def test_a_server_that_accepts_but_ignores_the_format_keeps_the_schema_in_the_prompt(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.probe_handler = lambda body: reply("Sure! Here is some JSON: {probe: ok}")
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client(cache=False)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert len(llm_stub.probes) == 2
    [body] = llm_stub.requests
    assert "response_format" not in body
    assert '"question"' in body["messages"][0]["content"]
    assert client.stats.as_dict()["response_format"] == (
        "the schema in the prompt (auto: json_schema accepted but not followed; "
        "json_object_schema accepted but not followed)"
    )


def test_a_probe_that_times_out_stops_probing_and_keeps_the_prompt(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    llm_stub.probe_handler = lambda body: hang(3.0)
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client(cache=False, timeout_s=0.3)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert len(llm_stub.probes) == 1  # a slow server is not asked again per form
    [body] = llm_stub.requests
    assert "response_format" not in body
    stats = client.stats.as_dict()
    assert stats["response_format"] == (
        "the schema in the prompt (auto: json_schema got no answer (timeout))"
    )
    assert stats["failures"] == {}  # the probe's timeout is not a failed call


@pytest.mark.parametrize("fmt", ["prompt", "json_schema", "json_object", "json_object_schema"])
def test_a_format_given_explicitly_is_used_without_a_probe(
    llm_stub: StubServer, make_client: MakeClient, fmt: str
) -> None:
    llm_stub.probe_handler = accept_probes("json_schema", "json_object_schema")
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client(cache=False, response_format=fmt)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert llm_stub.probes == []
    [body] = llm_stub.requests
    sent = body.get("response_format")
    expected = {
        "prompt": None,
        "json_schema": "json_schema",
        "json_object": "json_object",
        "json_object_schema": "json_object",
    }[fmt]
    assert (sent or {}).get("type") == expected
    assert ("schema" in (sent or {})) == (fmt == "json_object_schema")
    assert "response_format" not in client.stats.as_dict()


def test_a_cached_call_makes_no_probe(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.probe_handler = accept_probes("json_schema")
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    asyncio.run(make_client().structured(MESSAGES, QA, prompt_version="t-v1"))
    assert len(llm_stub.probes) == 1
    again = make_client()
    result = asyncio.run(again.structured(MESSAGES, QA, prompt_version="t-v1"))
    assert result.cached and len(llm_stub.probes) == 1
    assert "probe_requests" not in again.stats.as_dict()


def test_a_model_without_an_api_base_is_never_probed() -> None:
    # A hosted model litellm does not list as schema-capable: the prompt, no request.
    import random

    from pytest_ragproof.llm.config import LLMConfig
    from pytest_ragproof.llm.provider import Provider
    from pytest_ragproof.llm.stats import LLMStats

    provider = Provider(LLMConfig(model="openai/no-such-model"), LLMStats(), random.Random(0))
    assert asyncio.run(provider.structured_mode()) == "prompt"
    assert provider.format_choice is None


def test_the_probe_reply_must_be_exactly_the_probe_object() -> None:
    from pytest_ragproof.llm.probe import followed

    assert followed('{"probe": "ok"}') and followed('  {"probe":"ok"}\n\n  ')
    assert followed('```json\n{"probe": "ok"}\n```')
    assert not followed('{"probe": "ok", "x": 1}') and not followed('{"probe": "ok"')
    assert not followed(None) and not followed("") and not followed(json.dumps(["ok"]))
