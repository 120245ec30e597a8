"""The LLM layer (extra ``llm``): every model call of generation and LLM judges.

Importing this package is cheap: litellm is imported only by
:mod:`pytest_ragproof.llm.provider`, and only when a request misses the cache.

Public API::

    config = gen_config(model=None, api_base=None, concurrency=8)   # or judge_config
    client = LLMClient(config, ResponseCache(cache_dir, enabled=True))

    # async
    result = await client.structured(messages, MySchema, prompt_version="qa-v1")
    result.value        # a validated MySchema
    result.usage        # Usage(prompt_tokens, completion_tokens)
    result.cost         # USD when litellm knows the price, else None; cached: 0.0 or None
    result.cached       # served from the cache: no request, litellm not imported
    result.attempts     # HTTP requests made (retries and the repair included)
    text = await client.complete(messages, prompt_version="x-v1")   # CompletionResult

    # sync: many calls at once, results in input order, LLMError in place of a result
    results = client.structured_batch(list_of_messages, MySchema, prompt_version="v1")
    results = client.run_batch([client.complete(m, prompt_version="v1"), ...])  # any mix

    client.stats.as_dict()   # calls, requests, cache hits, retries by reason, failures...

Errors (all :class:`pytest_ragproof.errors.LLMError`): ``LLMConfigError`` (no model
configured, bad settings; ``LLMUnreachableError``: the connection was refused),
``ProviderError`` / ``LLMTimeoutError`` (exception type
and HTTP status only, never the provider's message), ``InvalidOutputError``, and
``MissingExtraError`` when litellm is not installed.

``estimate_tokens(text_or_messages)`` is the characters / 4 estimate used for plans
and dry runs (litellm's tokenizers are never called: they may download).

CLIs add ``--cache-dir``/``--no-cache`` with :func:`add_cache_arguments` and build the
cache with :func:`cache_from_args`.
"""

from __future__ import annotations

from pytest_ragproof.llm.cache import (
    CachedResponse,
    ResponseCache,
    add_cache_arguments,
    cache_from_args,
    cache_key,
    resolve_cache_dir,
)
from pytest_ragproof.llm.client import LLMClient
from pytest_ragproof.llm.config import LLMConfig, gen_config, judge_config, resolve_config
from pytest_ragproof.llm.request import CompletionResult, StructuredResult, estimate_tokens
from pytest_ragproof.llm.stats import LLMStats, Usage

__all__ = [
    "CachedResponse",
    "CompletionResult",
    "LLMClient",
    "LLMConfig",
    "LLMStats",
    "ResponseCache",
    "StructuredResult",
    "Usage",
    "add_cache_arguments",
    "cache_from_args",
    "cache_key",
    "estimate_tokens",
    "gen_config",
    "judge_config",
    "resolve_cache_dir",
    "resolve_config",
]
