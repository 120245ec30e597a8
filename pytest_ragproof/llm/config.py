"""Model configuration for the LLM layer: which model, where, and how patiently.

API keys are deliberately absent: litellm reads them from its own environment
variables (``OPENAI_API_KEY``, ``AZURE_API_KEY``, ``OLLAMA_API_BASE``...). When a
server needs a key under another variable, ``api_key_env`` names that variable and
the key is read at call time, so no object of ours ever holds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pytest_ragproof import defaults
from pytest_ragproof.errors import LLMConfigError

Role = Literal["gen", "judge"]

#: Environment variable naming the model for each role.
MODEL_ENV: dict[Role, str] = {"gen": "RAGPROOF_GEN_MODEL", "judge": "RAGPROOF_JUDGE_MODEL"}

#: The command-line option that also sets the model, named in the error message.
_ROLE_OPTION: dict[Role, str | None] = {"gen": "--model", "judge": None}


@dataclass(frozen=True)
class LLMConfig:
    """Everything needed to call one model, minus secrets.

    ``timeout_s`` bounds one HTTP call; ``max_retries`` and ``max_total_s`` bound
    the retries of one logical call (429, 5xx, timeouts, connection errors).
    ``backoff_base_s`` is the first backoff delay, doubled per retry up to
    ``backoff_max_s`` with jitter; tests shrink it to stay fast.
    """

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    timeout_s: float = defaults.LLM_TIMEOUT_S
    max_retries: int = defaults.LLM_RETRIES
    max_total_s: float = 300.0
    concurrency: int = defaults.GENERATION_CONCURRENCY
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    #: How structured replies are asked for: ``auto`` (a JSON-schema response_format
    #: when litellm says the model supports one; for a model it does not know at an
    #: ``api_base``, the strictest form the server accepts and follows, asked once (see
    #: :mod:`llm.probe`); else the schema in the prompt), ``json_schema``,
    #: ``json_object_schema`` (llama-cpp-python's JSON mode with a schema, plus the schema
    #: in the prompt), ``json_object`` (OpenAI JSON mode plus the schema in the prompt) or
    #: ``prompt`` (the schema in the prompt only).
    response_format: str = defaults.RESPONSE_FORMAT
    #: Where instructions go: ``system`` (system messages, as written) or ``user`` (every
    #: system message folded into the first user message, for chat templates that drop
    #: system messages, e.g. llama-cpp-python's ``--chat_format gemma``).
    instructions: str = defaults.JUDGE_INSTRUCTIONS
    extra_params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        if not self.model or not self.model.strip():
            raise LLMConfigError(
                "empty model name; use a litellm model string such as 'openai/gpt-4o-mini'"
            )
        if self.concurrency < 1:
            raise LLMConfigError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise LLMConfigError(f"max_retries must be 0 or more, got {self.max_retries}")
        for name in ("timeout_s", "max_total_s"):
            if not getattr(self, name) > 0:
                raise LLMConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            raise LLMConfigError("backoff delays must not be negative")
        if self.response_format not in RESPONSE_FORMATS:
            raise LLMConfigError(
                f"response format must be one of {', '.join(RESPONSE_FORMATS)}; "
                f"got '{self.response_format}'"
            )
        if self.instructions not in INSTRUCTION_PLACES:
            raise LLMConfigError(
                f"instructions must be one of {', '.join(INSTRUCTION_PLACES)}; "
                f"got '{self.instructions}'"
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise LLMConfigError(f"max_tokens must be at least 1, got {self.max_tokens}")
        forbidden = _SECRET_PARAMS.intersection(self.extra_params)
        if forbidden:
            raise LLMConfigError(
                f"extra_params must not carry {sorted(forbidden)}; keys come from the environment"
            )

    def with_overrides(self, **changes: Any) -> LLMConfig:
        """A copy with some fields replaced (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def api_key(self) -> str | None:
        """The key from ``api_key_env`` at call time; None lets litellm find its own."""
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise LLMConfigError(f"environment variable {self.api_key_env} is not set")
        return value


RESPONSE_FORMATS = defaults.RESPONSE_FORMATS
INSTRUCTION_PLACES = defaults.INSTRUCTION_PLACES

#: Parameters that would put secrets into our objects, cache keys or logs.
_SECRET_PARAMS = frozenset({"api_key", "headers", "extra_headers", "azure_ad_token"})


def resolve_config(
    role: Role = "gen",
    model: str | None = None,
    *,
    option: str | None = None,
    **overrides: Any,
) -> LLMConfig:
    """Build the config for ``role``: ``model`` if given, else ``RAGPROOF_<ROLE>_MODEL``.

    Raises a one-line :class:`LLMConfigError` naming the variable and, when there
    is one, the command-line ``option`` (default ``--model`` for generation).
    """
    env = MODEL_ENV[role]
    chosen = (model or os.environ.get(env) or "").strip()
    if not chosen:
        flag = option or _ROLE_OPTION[role]
        raise LLMConfigError(
            f"no {'generation' if role == 'gen' else 'judge'} model configured: "
            f"set {env} (e.g. {env}=openai/gpt-4o-mini)" + (f" or pass {flag}" if flag else "")
        )
    return LLMConfig(model=chosen, **{k: v for k, v in overrides.items() if v is not None})


def gen_config(
    model: str | None = None, *, option: str | None = None, **overrides: Any
) -> LLMConfig:
    """Config for dataset generation (``RAGPROOF_GEN_MODEL``)."""
    return resolve_config("gen", model, option=option, **overrides)


def judge_config(
    model: str | None = None, *, option: str | None = None, **overrides: Any
) -> LLMConfig:
    """Config for LLM judges (``RAGPROOF_JUDGE_MODEL``); ``option`` names its flag."""
    return resolve_config("judge", model, option=option, **overrides)
