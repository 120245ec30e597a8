"""Shared test fixtures: the LLM stub server (tests/llm_stub.py) and the ``mode`` of
pytester runs, serial or ``-n 2`` (tests/pytester_projects.py)."""

from __future__ import annotations

pytest_plugins = ["tests.llm_stub", "tests.pytester_projects"]
