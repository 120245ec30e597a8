"""The judged runs' session fixture (a real evaluate() against the scripted judge stub),
and the reporting tests' real pytest runs of a small project."""

from __future__ import annotations

from tests.reporting.conftest import runs as runs
from tests.reporting.judged import judged as judged
