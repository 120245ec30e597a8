"""The pytest11 entry point. Kept thin and cheap to import.

Nothing heavy is imported at module level: the runner (pydantic models, metrics,
reporting) is imported in ``pytest_configure`` only when a dataset is configured,
or during collection when a test carries ``@pytest.mark.rag``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import idle, options, rootdir, usage


def pytest_addoption(parser: pytest.Parser) -> None:
    options.register(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser) -> None:
    # Before any conftest is loaded from a rootdir that a spaced ragproof value moved.
    rootdir.check_setup(early_config, parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "rag(dataset=None, pipeline=None): run this test once per case of a RAG dataset; "
        "it receives rag_case and returns the pipeline output (pytest-ragproof)",
    )
    for kind in ("qa", "unanswerable", "injection"):
        config.addinivalue_line("markers", f"ragproof_{kind}: a ragproof case of kind {kind}")
    usage.check_usage(config)
    idle.register(config)
    if options.datasets_configured(config):
        from pytest_ragproof.plugin.session import get_run

        get_run(config)
    elif hasattr(config, "pluginmanager") and not hasattr(config, "workerinput"):
        # (xdist_support is not imported here: this path runs in every pytest run.)
        # An xdist controller does not collect: it learns about marker-mode cases
        # from the first report that carries one.
        config.pluginmanager.register(_LateRun(config), "ragproof-late")


class _LateRun:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, "ragproof", None) is None:
            return
        from pytest_ragproof.plugin.session import RUN_KEY, get_run

        if RUN_KEY not in self.config.stash:
            get_run(self.config).pytest_runtest_logreport(report)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A frozen dataset named on the command line of a run that configures none."""
    if not file_path.name.endswith(".frozen.json") or not parent.session.isinitpath(file_path):
        return None
    if options.datasets_configured(parent.config):
        return None  # the run collects its datasets (and refuses other ones by name)
    return _UnconfiguredDataset.from_parent(parent, path=file_path)


class _UnconfiguredDataset(pytest.File):
    def collect(self) -> list[pytest.Item]:
        raise self.CollectError(
            f"ragproof: {self.path.name} is a ragproof dataset, but this run configures none; "
            f"run it with pytest --ragproof-dataset={self.path.name}, or add it to "
            "ragproof_dataset in your pytest configuration"
        )


@pytest.fixture
def rag_case(request: pytest.FixtureRequest) -> Any:
    """The dataset case a ``@pytest.mark.rag`` test runs for (a frozen ``Case``).

    Its question is the one a pipeline fixture would get (an injection case's carries
    its payload, unless ``--ragproof-injection-delivery=none``).
    """
    param = getattr(request, "param", None)
    if param is None:
        raise pytest.UsageError(
            "rag_case is only available in tests marked @pytest.mark.rag(dataset=...)"
        )
    from pytest_ragproof.plugin.marker import given_case

    return given_case(request.config, param)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("rag")
    if marker is not None:
        from pytest_ragproof.plugin.marker import parametrize

        parametrize(metafunc, marker)


def pytest_itemcollected(item: pytest.Item) -> None:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "rag_case" in callspec.params:
        from pytest_ragproof.plugin.marker import register_item

        register_item(item)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    callspec = getattr(pyfuncitem, "callspec", None)
    if callspec is None or "rag_case" not in callspec.params:
        return None
    from pytest_ragproof.plugin.marker import call_marked

    return call_marked(pyfuncitem)
