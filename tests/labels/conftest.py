"""The judged runs' session fixture (a real evaluate() against the scripted judge stub)."""

from __future__ import annotations

from tests.reporting.judged import judged as judged
