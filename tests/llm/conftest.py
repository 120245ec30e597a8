"""Fixtures for the LLM layer tests: a client wired to the stub server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from tests.llm_stub import StubServer

SECRET = "sk-test-SECRET123"
#: litellm knows no price and no response-schema support for this name: prompt fallback.
PLAIN_MODEL = "openai/stub-model"
#: litellm knows this one supports response schemas and has a price for it.
SCHEMA_MODEL = "openai/gpt-4o-mini"

MakeClient = Callable[..., LLMClient]


class QA(BaseModel):
    question: str
    answer: str


QA_JSON = '{"question": "What is BM25?", "answer": "A ranking function."}'
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Write one question."}]


@pytest.fixture(autouse=True)
def _planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every LLM test runs with a recognisable key that must never leak."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def make_client(llm_stub: StubServer, cache_dir: Path) -> MakeClient:
    """Build a client for the stub with tiny backoffs; keyword overrides go to LLMConfig."""

    def make(*, cache: bool = True, **overrides: Any) -> LLMClient:
        settings: dict[str, Any] = {
            "model": PLAIN_MODEL,
            "api_base": llm_stub.url,
            "timeout_s": 5.0,
            "max_retries": 3,
            "max_total_s": 20.0,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
        }
        settings.update(overrides)
        return LLMClient(LLMConfig(**settings), ResponseCache(cache_dir, enabled=cache))

    return make
