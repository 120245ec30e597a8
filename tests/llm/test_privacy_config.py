"""Keys and provider messages never leak; configuration errors are one clear line."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof.errors import LLMConfigError, LLMError, MissingExtraError, ProviderError
from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache, gen_config, judge_config
from pytest_ragproof.llm import loader as loader_module
from pytest_ragproof.llm import provider as provider_module
from tests.llm.conftest import MESSAGES, QA, QA_JSON, SECRET, MakeClient
from tests.llm_stub import StubServer, rate_limited, reply, server_error

ECHO = f"provider says: your key {SECRET} was rejected"


def _all_text_of(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + str(exc)


def test_key_and_echoed_error_bodies_never_surface(
    llm_stub: StubServer,
    make_client: MakeClient,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    llm_stub.script(
        rate_limited(echo=ECHO),
        server_error(500, echo=ECHO),
        server_error(503, echo=ECHO),
        server_error(500, echo=ECHO),
        reply(QA_JSON),
        reply("not json"),  # repaired below: the repair message is ours
        reply(QA_JSON),
        server_error(401, echo=ECHO),
    )
    client = make_client(max_retries=2)
    errors: list[BaseException] = []
    for version in ("p-1", "p-2", "p-3", "p-4"):
        try:
            asyncio.run(client.structured(MESSAGES, QA, prompt_version=version))
        except LLMError as exc:
            errors.append(exc)
    assert [type(e) for e in errors] == [ProviderError, ProviderError]
    assert [e.status for e in errors if isinstance(e, ProviderError)] == [503, 401]
    # The key really went to the server, so its absence below means something.
    assert all(h["authorization"] == f"Bearer {SECRET}" for h in llm_stub.request_headers)
    surfaces = [_all_text_of(e) for e in errors]
    out, err = capfd.readouterr()  # fd-level: catches prints from any library too
    surfaces += [
        out,
        err,
        caplog.text,
        repr(client),
        repr(client.config),
        repr(client.stats.as_dict()),
    ]
    client.cache.close()  # the store is one file again: every byte of it is read below
    files = [f for f in client.cache.root.rglob("*") if f.is_file()]
    assert [f.name for f in files] == [client.cache.path.name]
    surfaces += [f.read_bytes().decode("utf-8", "replace") for f in files]
    surfaces += [str(body) for body in llm_stub.requests]
    conn = sqlite3.connect(client.cache.path)
    assert conn.execute("SELECT count(*) FROM entries").fetchone() == (2,)
    conn.close()
    for text in surfaces:
        assert SECRET not in text
        assert "provider says" not in text
    # No exception keeps a reference to the provider's exception either.
    for error in errors:
        assert error.__cause__ is None and error.__context__ is None


def test_api_key_env_is_read_at_call_time_and_never_stored(
    llm_stub: StubServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_VLLM_KEY", "sk-other-SECRET456")
    llm_stub.script(reply(QA_JSON))
    client = make_client(api_key_env="MY_VLLM_KEY")
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="p-1"))
    assert llm_stub.request_headers[0]["authorization"] == "Bearer sk-other-SECRET456"
    assert "SECRET456" not in repr(client) + repr(client.config) + repr(vars(client.config))
    monkeypatch.delenv("MY_VLLM_KEY")
    with pytest.raises(LLMConfigError, match="MY_VLLM_KEY is not set"):
        asyncio.run(client.complete(MESSAGES, prompt_version="p-2"))
    # A batch stops on configuration errors instead of filing one per item.
    with pytest.raises(LLMConfigError, match="MY_VLLM_KEY is not set"):
        client.structured_batch([MESSAGES], QA, prompt_version="p-3")


def test_per_call_secrets_and_retry_settings_are_refused(make_client: MakeClient) -> None:
    client = make_client()
    for param in ("api_key", "extra_headers", "num_retries", "timeout"):
        with pytest.raises(LLMConfigError, match=param):
            asyncio.run(client.complete(MESSAGES, prompt_version="v", **{param: "x"}))
    with pytest.raises(LLMConfigError, match="keys come from the environment"):
        LLMConfig(model="openai/m", extra_params={"api_key": "sk-x"})


@pytest.mark.parametrize(
    ("build", "env", "option"),
    [
        (gen_config, "RAGPROOF_GEN_MODEL", "--model"),
        (judge_config, "RAGPROOF_JUDGE_MODEL", None),
    ],
)
def test_missing_model_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, build: Callable[..., LLMConfig], env: str, option: str | None
) -> None:
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(LLMConfigError) as info:
        build()
    message = str(info.value)
    assert "\n" not in message and env in message
    assert (" or pass " in message) == (option is not None)
    if option is not None:
        assert message.endswith(f"or pass {option}")
    with pytest.raises(LLMConfigError, match=r"or pass --ragproof-judge-model$"):
        build(option="--ragproof-judge-model")
    monkeypatch.setenv(env, " ollama/llama3 ")
    assert build().model == "ollama/llama3"
    assert build("openai/x", concurrency=2).concurrency == 2


@pytest.mark.parametrize(
    "bad",
    [{"model": " "}, {"concurrency": 0}, {"max_retries": -1}, {"timeout_s": 0}],
)
def test_unusable_settings_are_refused(bad: dict[str, object]) -> None:
    settings: dict[str, object] = {"model": "openai/m", **bad}
    with pytest.raises(LLMConfigError):
        LLMConfig(**settings)  # type: ignore[arg-type]


def test_missing_litellm_gives_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # makes `import litellm` fail
    monkeypatch.setattr(loader_module, "_litellm_module", None)
    client = LLMClient(LLMConfig(model="openai/m"), ResponseCache(tmp_path))
    with pytest.raises(MissingExtraError) as info:
        asyncio.run(client.complete(MESSAGES, prompt_version="v"))
    assert "\n" not in str(info.value)
    assert "pip install 'pytest-ragproof[llm]'" in str(info.value)


def test_missing_api_key_is_one_configuration_error_and_is_not_retried(
    llm_stub: StubServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # litellm reports the OpenAI SDK's refusal as a synthesized HTTP 500; it is not one.
    monkeypatch.delenv("OPENAI_API_KEY")
    llm_stub.script(reply(QA_JSON))
    client = make_client(max_retries=3)
    with pytest.raises(LLMConfigError, match="no API key is set") as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="p-1"))
    assert "OPENAI_API_KEY" in str(info.value)
    assert llm_stub.requests == []  # nothing left the machine
    # Issue 29 item 9: the key is checked before the first request (it was refused
    # by the provider's SDK as request 1 before).
    assert client.stats.requests == 0
    assert sum(client.stats.retries.values()) == 0


@pytest.mark.parametrize(
    ("model", "variable"),
    [("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"), ("openai/x", "OPENAI_API_KEY")],
)
def test_a_missing_key_is_named_before_any_request(
    llm_stub: StubServer,
    make_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    variable: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    llm_stub.script(reply(QA_JSON))
    client = make_client(model=model, max_retries=3)
    with pytest.raises(LLMConfigError) as info:
        client.structured_batch([MESSAGES], QA, prompt_version="p-1")
    message = str(info.value)
    assert f"needs {variable}" in message and "\n" not in message
    assert (client.stats.requests, llm_stub.request_count) == (0, 0)
    # A server that takes no key works without one (hosted_vllm: an OpenAI-compatible server).
    llm_stub.script(reply(QA_JSON))
    local = make_client(model="hosted_vllm/served-model")
    assert asyncio.run(local.structured(MESSAGES, QA, prompt_version="p-1")).value.answer


def test_a_rejected_key_names_the_fix(llm_stub: StubServer, make_client: MakeClient) -> None:
    llm_stub.script(server_error(401, echo=ECHO))
    client = make_client(max_retries=3)
    with pytest.raises(ProviderError, match=r"HTTP 401.*check the provider's API key") as info:
        asyncio.run(client.structured(MESSAGES, QA, prompt_version="p-1"))
    assert len(llm_stub.requests) == 1  # a 401 is not retried
    assert SECRET not in _all_text_of(info.value)


def test_litellm_redacts_our_messages_exactly_while_a_callback_could_log_them(
    llm_stub: StubServer, make_client: MakeClient
) -> None:
    # litellm's redaction deep-copies every request and reply, so it is on only while
    # some logging callback is registered (the user's own code may add one).
    litellm = loader_module.load_litellm()
    llm_stub.set_handler(lambda body: reply(QA_JSON))
    client = make_client()
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="plain"))
    assert litellm.turn_off_message_logging is False  # nothing can log: nothing to redact
    lists = provider_module._CALLBACK_LISTS
    for name in ("callbacks", "success_callback", "_async_success_callback"):
        # litellm copies a registered callback into its other lists: all are restored.
        saved = {n: list(getattr(litellm, n, [])) for n in lists}
        setattr(litellm, name, [lambda *args, **kwargs: None])
        try:
            asyncio.run(client.structured(MESSAGES, QA, prompt_version=f"logged-{name}"))
            assert litellm.turn_off_message_logging is True, name
        finally:
            for n, value in saved.items():
                setattr(litellm, n, value)
    asyncio.run(client.structured(MESSAGES, QA, prompt_version="plain-again"))
    assert litellm.turn_off_message_logging is False
