"""Fixtures for generation tests: the fake model on the stub server, clients, corpora."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.llm import LLMClient, LLMConfig, ResponseCache
from tests.generation.fake_model import SECRET, FakeModel
from tests.llm_stub import StubServer

#: litellm knows no price and no schema support for this name: the prompt fallback path.
MODEL = "openai/fake-gen"

MakeClient = Callable[..., LLMClient]

TOPICS = {
    "billing.md": "# Billing\n\n## Refunds\n\nRefunds are processed within fourteen days "
    "of the request. Customers receive an email confirmation.\n\n## Invoices\n\n"
    "Invoices are issued monthly and list every subscription separately.",
    "shipping.txt": "Parcels travel with regional carriers. Delivery usually takes three "
    "working days inside the country and ten days abroad. Tracking numbers arrive by "
    "message once the parcel leaves the warehouse.",
    "guide/setup.md": "# Setup\n\nConnect the router to the modem with the yellow cable, then "
    "hold the reset button for five seconds until the light blinks green.",
}


@pytest.fixture(autouse=True)
def _planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every generation test runs with a recognisable key that must never leak."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("RAGPROOF_GEN_MODEL", raising=False)
    monkeypatch.delenv("RAGPROOF_CACHE_DIR", raising=False)


@pytest.fixture
def fake(llm_stub: StubServer) -> FakeModel:
    """The fake generator/verifier answering every request of the stub."""
    model = FakeModel()
    llm_stub.set_handler(model)
    return model


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def make_client(llm_stub: StubServer, cache_dir: Path) -> MakeClient:
    """A client for the stub with tiny backoffs; keyword overrides go to LLMConfig."""

    def make(*, cache: Path | None = None, enabled: bool = True, **overrides: Any) -> LLMClient:
        settings: dict[str, Any] = {
            "model": MODEL,
            "api_base": llm_stub.url,
            "timeout_s": 5.0,
            "max_retries": 2,
            "max_total_s": 20.0,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "concurrency": 4,
        }
        settings.update(overrides)
        store = ResponseCache(cache if cache is not None else cache_dir, enabled=enabled)
        return LLMClient(LLMConfig(**settings), store)

    return make


def write_text_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write ``files`` (default :data:`TOPICS`) under ``root`` and return it."""
    for name, text in (files or TOPICS).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def text_corpus(tmp_path: Path) -> Path:
    """Three small documents (two Markdown, one text) in a folder."""
    return write_text_corpus(tmp_path / "corpus")
