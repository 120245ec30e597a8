"""Exactly what the LLM layer sends, and the result types it returns.

Sent to the provider, and nothing else: the caller's messages; the parameters
``temperature``, ``seed`` and ``max_tokens`` when configured, the config's
``extra_params`` and the caller's own; for structured calls either a JSON-schema
``response_format`` (models litellm says support it) or :data:`JSON_INSTRUCTION`
added to the system message; and for a repair, the rejected reply plus
:data:`REPAIR_INSTRUCTION`. Secrets and transport settings cannot be passed
per call (:data:`RESERVED_PARAMS`): keys come from the environment only.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import LLMConfigError
from pytest_ragproof.llm.cache import cache_key, canonical_json
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.stats import Usage, add_cost

T = TypeVar("T", bound=BaseModel)
Message = Mapping[str, Any]

#: Parameters a caller may not pass: they carry secrets or would undo our retry control.
RESERVED_PARAMS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "headers",
        "extra_headers",
        "timeout",
        "num_retries",
        "max_retries",
        "messages",
        "model",
        "response_format",
        "stream",
    }
)

JSON_INSTRUCTION = (
    "Reply with only a JSON value that matches this JSON Schema, "
    "with no prose and no Markdown fences:\n{schema}"
)
REPAIR_INSTRUCTION = (
    "Your previous reply could not be used: {summary}. "
    "Reply again with only the corrected JSON value."
)


@dataclass(frozen=True)
class CompletionResult:
    """One logical text completion. ``attempts`` counts HTTP requests (0 if cached)."""

    text: str | None
    usage: Usage
    cost: float | None
    cached: bool
    attempts: int


@dataclass(frozen=True)
class StructuredResult(Generic[T]):
    """A validated structured reply, with what it took to get it."""

    value: T
    usage: Usage
    cost: float | None
    cached: bool
    attempts: int
    repaired: bool = False


@dataclass(frozen=True)
class Reply:
    """One successful HTTP exchange (after retries): text, usage, cost, requests made."""

    text: str | None
    usage: Usage
    cost: float | None
    attempts: int

    def then(self, later: Reply) -> Reply:
        """This exchange followed by ``later`` (a repair): ``later``'s text, summed costs."""
        return Reply(
            later.text,
            self.usage + later.usage,
            add_cost(self.cost, later.cost),
            self.attempts + later.attempts,
        )


@dataclass(frozen=True)
class Request:
    """One logical call as built from the caller's arguments, and its cache key."""

    key: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    schema_json: dict[str, Any] | None


def build_request(
    config: LLMConfig,
    messages: Sequence[Message],
    prompt_version: str,
    params: Mapping[str, Any],
    schema: type[BaseModel] | None = None,
) -> Request:
    """The messages and parameters to send, and the key they are cached under."""
    msgs, call_params = prepare(config, messages, params)
    schema_json = schema_of(schema) if schema is not None else None
    key = cache_key(
        model=config.model,
        prompt_version=prompt_version,
        messages=msgs,
        params=call_params,
        schema=schema_json,
        schema_text=schema_key_text(schema) if schema is not None else None,
    )
    return Request(key, msgs, call_params, schema_json)


def structured_call(
    request: Request, schema_name: str, mode: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What a structured request sends in response-format ``mode`` (resolved, not auto)."""
    assert request.schema_json is not None
    send = request.messages
    params = dict(request.params)
    if mode == "json_schema":
        params["response_format"] = response_format(schema_name, request.schema_json)
    else:
        # json_object still needs the schema in the prompt (and the word JSON).
        send = with_json_instruction(send, request.schema_json)
        if mode == "json_object":
            params["response_format"] = {"type": "json_object"}
    return send, params


@functools.cache
def schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema``, made once (it costs more than a cache hit)."""
    return schema.model_json_schema()


@functools.cache
def schema_key_text(schema: type[BaseModel]) -> str:
    """The canonical text of ``schema_of(schema)`` in cache keys, made once."""
    return canonical_json(schema_of(schema))


def estimate_tokens(content: str | Sequence[Message]) -> int:
    """A rough token count without a tokenizer: characters / 4, rounded up.

    litellm's tokenizers may download vocabularies, so dry runs and plans use this.
    Message lists count their string contents only.
    """
    if isinstance(content, str):
        chars = len(content)
    else:
        chars = sum(len(m["content"]) for m in content if isinstance(m.get("content"), str))
    return -(-chars // 4)


def prepare(
    config: LLMConfig, messages: Sequence[Message], params: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Copy the messages and assemble the call parameters; refuse reserved ones."""
    reserved = RESERVED_PARAMS.intersection(params)
    if reserved:
        raise LLMConfigError(
            f"parameters {sorted(reserved)} are set by the LLM layer or the environment, "
            "not per call"
        )
    msgs = [dict(m) for m in messages]
    if not msgs:
        raise LLMConfigError("no messages to send")
    call_params: dict[str, Any] = {"temperature": config.temperature}
    if config.seed is not None:
        call_params["seed"] = config.seed
    if config.max_tokens is not None:
        call_params["max_tokens"] = config.max_tokens
    call_params.update(config.extra_params)
    call_params.update(params)
    return msgs, call_params


def response_format(name: str, schema_json: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI-style JSON-schema ``response_format`` litellm translates per provider."""
    # A copy: provider adapters may edit the schema they are given.
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": copy.deepcopy(schema_json)},
    }


def with_json_instruction(
    messages: list[dict[str, Any]], schema_json: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Add the JSON instruction to the first system message, or prepend one."""
    instruction = JSON_INSTRUCTION.format(schema=json.dumps(schema_json))
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            message["content"] = f"{message['content']}\n\n{instruction}"
            return out
    return [{"role": "system", "content": instruction}, *out]


def repair_messages(
    sent: list[dict[str, Any]], rejected: str | None, summary: str
) -> list[dict[str, Any]]:
    """The conversation so far plus the rejected reply and what was wrong with it."""
    return [
        *sent,
        {"role": "assistant", "content": rejected or ""},
        {"role": "user", "content": REPAIR_INSTRUCTION.format(summary=summary)},
    ]
