"""Ragas is imported once per test process, never inside an in-process pytester run (see
tests/judges/conftest.py: a run's imports are dropped afterwards)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import ragas  # noqa: F401

from pytest_ragproof.llm.client import load_litellm
from tests.ragas_stub import ragas_metrics

load_litellm()
# What building the metrics imports (Ragas 0.4: instructor, whose registries must not be
# imported twice), imported here once too.
_key = os.environ.setdefault("OPENAI_API_KEY", "sk-import-only")
ragas_metrics("http://127.0.0.1:9/v1")
if _key == "sk-import-only":
    del os.environ["OPENAI_API_KEY"]

SECRET = "sk-ragas-SECRET77"


@pytest.fixture(autouse=True)
def _planted_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
