"""The import command as a function (the interop tests' ``cli``), and OTLP JSON built by
hand (``otlp.py``)."""

from __future__ import annotations

from tests.interop.conftest import cli as cli
