"""Shared test fixtures: the LLM stub server (tests/llm_stub.py), the ``mode`` of
pytester runs, serial or ``-n 2`` (tests/pytester_projects.py), headless Chromium
(tests/browser.py)."""

from __future__ import annotations

pytest_plugins = ["tests.llm_stub", "tests.pytester_projects", "tests.browser"]
