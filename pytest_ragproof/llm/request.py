"""Exactly what the LLM layer sends, and the result types it returns.

Sent to the provider, and nothing else: the caller's messages; the parameters
``temperature``, ``seed`` when configured, ``max_tokens`` (configured, else a
per-step :func:`completion_budget` on structured calls), the config's
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
    #: Seconds lost to failed requests and backoff before the reply came.
    waited_s: float = 0.0


@dataclass(frozen=True)
class Reply:
    """One successful HTTP exchange (after retries): text, usage, cost, requests made.

    ``cut_at`` is set when the provider stopped the reply at its completion budget
    (``finish_reason: length``): the budget sent, else the tokens it wrote. ``waited_s``
    is the time lost to failed attempts and backoff before the one that answered.
    """

    text: str | None
    usage: Usage
    cost: float | None
    attempts: int
    cut_at: int | None = None
    waited_s: float = 0.0

    def then(self, later: Reply) -> Reply:
        """This exchange followed by ``later`` (a repair): ``later``'s text, summed costs."""
        return Reply(
            later.text,
            self.usage + later.usage,
            add_cost(self.cost, later.cost),
            self.attempts + later.attempts,
            later.cut_at,
            self.waited_s + later.waited_s,
        )


@dataclass(frozen=True)
class Request:
    """One logical call as built from the caller's arguments, and its cache key."""

    messages: list[dict[str, Any]]
    params: dict[str, Any]
    schema: type[BaseModel] | None
    model: str
    prompt_version: str
    #: ``user``: system messages are folded into the first user message when sent.
    instructions: str = "system"

    @property
    def schema_json(self) -> dict[str, Any] | None:
        return None if self.schema is None else schema_of(self.schema)

    @functools.cached_property
    def key(self) -> str:
        """The cache key, made when first asked for: a run without a cache never asks.

        The client asks before the request is sent, so the key covers the messages and
        parameters as :func:`build_request` prepared them.
        """
        return cache_key(
            model=self.model,
            prompt_version=self.prompt_version,
            messages=self.messages,
            params=self.params,
            schema=self.schema_json,
            schema_text=None if self.schema is None else schema_key_text(self.schema),
        )


def build_request(
    config: LLMConfig,
    messages: Sequence[Message],
    prompt_version: str,
    params: Mapping[str, Any],
    schema: type[BaseModel] | None = None,
    *,
    items: int = 1,
) -> Request:
    """The messages and parameters to send, and the key they are cached under.

    A structured call always carries a completion budget: the configured
    ``max_tokens``, the caller's, or :func:`completion_budget` for ``items`` items.
    """
    msgs, call_params = prepare(config, messages, params)
    if schema is not None and "max_tokens" not in call_params:
        call_params["max_tokens"] = completion_budget(msgs, items)
    return Request(msgs, call_params, schema, config.model, prompt_version, config.instructions)


#: The per-step completion budget: a base, a share per expected item, the input's size again.
BUDGET_BASE_TOKENS = 256
BUDGET_ITEM_TOKENS = 64
BUDGET_MAX_TOKENS = 8192


def completion_budget(messages: Sequence[Message], items: int = 1) -> int:
    """Tokens a structured reply of ``items`` items may take: the expected size with headroom.

    A judge's or generator's reply restates at most what it was given (the answer's
    claims, one short verdict per claim or context, questions about a passage), so
    the budget is :data:`BUDGET_BASE_TOKENS`, plus :data:`BUDGET_ITEM_TOKENS` per
    item, plus the input's own size (characters / 4), at most :data:`BUDGET_MAX_TOKENS`.
    A model that would otherwise write until its context is full stops there, and
    the reply is named as cut.
    """
    wanted = BUDGET_BASE_TOKENS + BUDGET_ITEM_TOKENS * max(items, 1) + estimate_tokens(messages)
    return min(wanted, BUDGET_MAX_TOKENS)


def structured_call(request: Request, mode: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What a structured request sends in response-format ``mode`` (resolved, not auto)."""
    schema = request.schema
    assert schema is not None
    send = request.messages
    params = dict(request.params)
    if mode == "json_schema":
        params["response_format"] = response_format(schema.__name__, schema_of(schema))
    else:
        # json_object still needs the schema in the prompt (and the word JSON).
        send = with_json_instruction(send, json_instruction(schema))
        if request.instructions == "user":
            send = in_first_user_message(send)
        if mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        elif mode == "json_object_schema":
            # llama-cpp-python's extension: JSON mode constrained by the schema.
            params["response_format"] = {"type": "json_object", "schema": schema_of(schema)}
    return send, params


def in_first_user_message(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every system message's text put before the first user message's, in order.

    For chat templates that drop system messages: the instructions then reach the
    model as part of the user's turn. Without a user message they become one.
    """
    system = [m for m in messages if m.get("role") == "system"]
    if not system:
        return messages
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    text = "\n\n".join(str(m.get("content") or "") for m in system)
    for message in rest:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] = f"{text}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": text}, *rest]


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
    if config.instructions == "user":
        msgs = in_first_user_message(msgs)
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


@functools.cache
def json_instruction(schema: type[BaseModel]) -> str:
    """:data:`JSON_INSTRUCTION` for ``schema``, made once per schema."""
    return JSON_INSTRUCTION.format(schema=json.dumps(schema_of(schema)))


def with_json_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Add ``instruction`` (:func:`json_instruction`) to the first system message or prepend one."""
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
