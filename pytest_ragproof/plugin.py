"""The pytest11 entry point. Kept thin and cheap to import.

Nothing heavy is imported at module level: the runner (pydantic models, metrics,
reporting) is imported in ``pytest_configure`` only when a dataset is configured.
"""

from __future__ import annotations

import pytest

from pytest_ragproof import options


def pytest_addoption(parser: pytest.Parser) -> None:
    options.register(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rag(dataset=None, pipeline=None): parametrize a test over a RAG dataset"
    )
    for kind in ("qa", "unanswerable", "injection"):
        config.addinivalue_line("markers", f"ragproof_{kind}: a ragproof case of kind {kind}")
    if options.datasets_configured(config):
        from pytest_ragproof.collect import RUN_KEY
        from pytest_ragproof.session import RagproofRun

        run = RagproofRun(config)
        config.stash[RUN_KEY] = run
        config.pluginmanager.register(run, "ragproof-run")
