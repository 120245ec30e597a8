"""The pytest11 entry point. Kept thin and cheap to import.

Nothing heavy is imported here at module level: the dataset models (pydantic),
metrics and reporting are imported inside the hooks once a ragproof option or
marker is actually in use.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rag(dataset=None, pipeline=None): parametrize a test over a RAG dataset"
    )
    for kind in ("qa", "unanswerable", "injection"):
        config.addinivalue_line("markers", f"ragproof_{kind}: a ragproof case of kind {kind}")
