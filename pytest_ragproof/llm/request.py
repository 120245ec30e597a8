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
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from pytest_ragproof.errors import LLMConfigError
from pytest_ragproof.llm.config import LLMConfig
from pytest_ragproof.llm.stats import Usage

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
