"""``auto`` on an OpenAI-compatible server: ask it once which structured form it takes.

litellm's model table does not know a local ``openai/<name>`` model, so ``auto`` cannot
read the answer there. Instead, before the first structured request of a run (a fully
cached run makes none), the provider sends one tiny request per form, strictest first,
and keeps the first form the server both accepts and follows:

1. ``json_schema``: an OpenAI ``response_format`` of type ``json_schema`` (llama.cpp's
   ``llama-server``, vLLM, Ollama, LM Studio);
2. ``json_object_schema``: ``{"type": "json_object", "schema": ...}``, llama-cpp-python's
   extension (its server answers ``json_schema`` with HTTP 500);
3. else ``prompt``: the schema in the prompt only.

"Follows" means the reply is exactly the probe's JSON object although the message asks
for something else (a greeting): only a server that enforces the schema (a grammar)
writes it. One that accepts the parameter but ignores it (Ollama Cloud, some proxies)
would leave the real calls without the schema (``json_schema`` mode does not repeat it
in the prompt), so it gets the prompt form. Each probe is one attempt with a
small completion budget; a refusal or a reply that does not follow moves on to the next
form, a timeout stops probing (the server is slow: ``prompt`` is kept). A connection
refused is the usual configuration error. The choice holds for the process (each xdist
worker asks once) and is said in the run's summary.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pytest_ragproof.errors import LLMConfigError, LLMError, LLMTimeoutError, ProviderError

__all__ = ["PROBE_MARKER", "FormatChoice", "probe_formats"]

#: In the probe's message: how a server log (or a test's stub) tells a probe apart.
PROBE_MARKER = "ragproof response-format probe"

#: What each probe asks for, and the only reply that counts as following it.
_EXPECTED = {"probe": "ok"}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"probe": {"type": "string", "enum": ["ok"]}},
    "required": ["probe"],
    "additionalProperties": False,
}
_MESSAGES = [
    {
        "role": "user",
        # Not the object the schema asks for: only a server that enforces the schema
        # makes the model write it (one that ignores the format gets a greeting).
        "content": f"{PROBE_MARKER}: say hello.",
    }
]
#: Enough for the object and a little whitespace a grammar allows.
_PROBE_MAX_TOKENS = 48

#: The forms probed, strictest first, and how each is described.
_FORMS: dict[str, dict[str, Any]] = {
    "json_schema": {
        "type": "json_schema",
        "json_schema": {"name": "RagproofProbe", "schema": _SCHEMA, "strict": True},
    },
    "json_object_schema": {"type": "json_object", "schema": _SCHEMA},
}
DESCRIBED = {
    "json_schema": "json_schema",
    "json_object_schema": "json_object with its schema",
    "prompt": "the schema in the prompt",
}

SendOnce = Callable[[list[dict[str, Any]], dict[str, Any]], Awaitable[str | None]]


@dataclass(frozen=True)
class FormatChoice:
    """The form ``auto`` chose for one endpoint, and what each probe found."""

    mode: str
    tried: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        """For summaries: ``json_object with its schema (auto: json_schema refused, HTTP 500)``."""
        found = [f"{mode} {outcome}" for mode, outcome in self.tried if mode != self.mode]
        return f"{DESCRIBED[self.mode]} (auto" + (f": {'; '.join(found)})" if found else ")")


def followed(text: str | None) -> bool:
    """Is ``text`` exactly the probe's object (whitespace and a code fence aside)?"""
    if text is None:
        return False
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        return bool(json.loads(body) == _EXPECTED)
    except ValueError:
        return False


async def probe_formats(send_once: SendOnce) -> FormatChoice:
    """Probe each form with ``send_once(messages, params)`` (one attempt, its reply text)."""
    tried: list[tuple[str, str]] = []
    for mode, response_format in _FORMS.items():
        params = {"response_format": response_format, "max_tokens": _PROBE_MAX_TOKENS}
        try:
            text = await send_once(list(_MESSAGES), params)
        except LLMConfigError:
            raise
        except LLMTimeoutError:
            tried.append((mode, "got no answer (timeout)"))
            break
        except ProviderError as exc:
            tried.append((mode, f"refused, {exc.kind}"))
            continue
        except LLMError as exc:
            tried.append((mode, f"failed, {exc.kind}"))
            continue
        if followed(text):
            tried.append((mode, "followed"))
            return FormatChoice(mode, tuple(tried))
        tried.append((mode, "accepted but not followed"))
    return FormatChoice("prompt", tuple(tried))
