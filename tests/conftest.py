"""Shared test fixtures. The LLM stub server lives in tests/llm_stub.py."""

from __future__ import annotations

pytest_plugins = ["tests.llm_stub"]
