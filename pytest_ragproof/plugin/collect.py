"""Collection: a dataset file becomes a collector with one test item per case.

One-way: the run (:mod:`pytest_ragproof.plugin.session`) makes each :class:`DatasetFile`
and hands itself over; this module imports nothing of the run.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from pytest_ragproof.dataset.io import Dataset
    from pytest_ragproof.dataset.models import Case
    from pytest_ragproof.verdict.config import RunConfig


class Run(Protocol):
    """What collection needs from the run (the run hands itself to each DatasetFile)."""

    @property
    def cfg(self) -> RunConfig: ...

    def dataset(self, path: Path) -> Dataset: ...

    def home_node(self) -> pytest.Collector | None: ...

    def share(self, path: Path) -> list[Case]: ...

    def run_case(self, item: CaseItem, pipeline: Any) -> None: ...

    def attach(self, item: pytest.Item, case: Case, dataset: Path) -> None: ...


class CaseItem(pytest.Function):
    """One dataset case, run against the pipeline fixture.

    A ``pytest.Function`` so fixtures, markers, ``-k``, ``--lf``, ``-x``, JUnit and
    xdist treat it like any other test.
    """

    case: Case
    pipeline_name: str

    def runtest(self) -> None:
        # pytest's call would pass the declared fixtures only; the runner needs the item.
        self.obj(self, **{self.pipeline_name: self.funcargs[self.pipeline_name]})

    def reportinfo(self) -> tuple[Any, int | None, str]:
        # A line is needed: pytest reports a skip marker's location from it (None was an
        # INTERNALERROR for a case a user's hook skips); the dataset file's first line.
        return self.path, 0, f"ragproof case {self.name} ({self.case.kind})"


def hide_unless_failed(excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    """``__tracebackhide__`` of the frame that runs a case.

    Hidden for the pipeline's own exceptions (their traceback starts in user code).
    Kept for ragproof's failure messages (``pytrace=False``): were every frame
    hidden, pytest would add "All traceback entries are hidden" under the message.
    """
    return not excinfo.errisinstance(pytest.fail.Exception)


def _make_runner(run: Run, fixture_name: str) -> Callable[..., None]:
    def ragproof_case(_item: CaseItem, **kwargs: Any) -> None:
        __tracebackhide__ = hide_unless_failed
        run.run_case(_item, kwargs[fixture_name])

    # Only the pipeline fixture is requested: asking for "request" as well would make
    # pytest build a request fixture for every case just to find the item.
    ragproof_case.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(fixture_name, inspect.Parameter.KEYWORD_ONLY)]
    )
    return ragproof_case


def missing_fixture(name: str, dataset: str) -> str:
    """The one error of a run whose pipeline fixture does not exist."""
    return (
        f"ragproof: no fixture named '{name}' provides the pipeline for the cases of {dataset}; "
        f"define it in conftest.py, or name yours with --ragproof-pipeline-fixture=NAME "
        f"(ini ragproof_pipeline_fixture):\n\n"
        f"    import pytest\n\n"
        f'    @pytest.fixture(scope="session")\n'
        f"    def {name}():\n"
        f"        def pipeline(question, history=None):\n"
        f'            return {{"answer": my_rag(question), "contexts": []}}\n'
        f"        return pipeline"
    )


def from_home(item: pytest.Item, home: pytest.Collector | None, fixture: str) -> Any:
    """``item``'s fixture info, with ``fixture`` (and what it needs) as seen from ``home``.

    ``home`` is the collected folder of the invocation folder (or its nearest collected
    parent up to the rootdir): a dataset given by option may lie outside the folder
    whose conftest defines the pipeline. None when ``fixture`` is not visible there
    either.
    """
    if home is None:
        return None
    from _pytest.fixtures import FuncFixtureInfo

    info = item._fixtureinfo  # type: ignore[attr-defined]
    names, defs = item.session._fixturemanager.getfixtureclosure(
        parentnode=home, initialnames=(fixture,), ignore_args=frozenset()
    )
    if not defs.get(fixture):
        return None
    closure = list(info.names_closure)
    closure.extend(n for n in names if n not in closure)
    return FuncFixtureInfo(
        argnames=info.argnames,
        initialnames=info.initialnames,
        names_closure=closure,
        name2fixturedefs={**info.name2fixturedefs, **defs},
    )


#: The reason of the xfail marker --ragproof-xfail-tag adds (a record tells it from the user's).
XFAIL_TAG_REASON = "ragproof: case tagged"


def add_xfail(item: pytest.Item, case: Case, tags: frozenset[str]) -> None:
    """``--ragproof-xfail-tag``: a case carrying one of ``tags`` is expected to fail."""
    hit = sorted(tags.intersection(case.tags))
    if hit:
        item.add_marker(pytest.mark.xfail(reason=f"{XFAIL_TAG_REASON} {hit[0]}"))


def _marks(kind: str) -> tuple[pytest.MarkDecorator, ...]:
    # Built once per kind: looking a mark up by name on every item is not free.
    return (pytest.mark.rag, getattr(pytest.mark, f"ragproof_{kind}"))


class DatasetFile(pytest.Module):
    """A dataset file given with ``--ragproof-dataset`` (or ini ``ragproof_dataset``).

    A ``pytest.Module`` (backed by an empty synthetic module object) so that
    module-scoped pipeline fixtures have a node to live on, as with any test file.
    """

    def _getobj(self) -> types.ModuleType:
        return types.ModuleType(f"ragproof_dataset_{self.path.stem.replace('.', '_')}")

    run: Run  # set by the run that made this collector

    def collect(self) -> Iterator[pytest.Item]:
        run = self.run
        resolved = self.path.resolve()  # once: a realpath is several lstat calls
        fixture = run.cfg.pipeline_fixture
        cases = run.share(resolved)  # sorted by id; --ragproof-shard applied
        # One runner function and one fixture closure serve every case of the file,
        # as pytest's own parametrization shares them across a function's items.
        runner = _make_runner(run, fixture)
        xfail_tags = run.cfg.xfail_tags
        info: Any = None
        marks: dict[str, tuple[pytest.MarkDecorator, ...]] = {}
        for case in cases:
            item = CaseItem.from_parent(self, name=case.id, callobj=runner, fixtureinfo=info)
            if info is None and not item._fixtureinfo.name2fixturedefs.get(fixture):
                # Not visible from the dataset's folder: the conftests of the invocation
                # folder and the rootdir provide it (a dataset given by option).
                info = from_home(item, run.home_node(), fixture)
                if info is None:
                    raise self.CollectError(missing_fixture(fixture, self.path.name))
                item = CaseItem.from_parent(self, name=case.id, callobj=runner, fixtureinfo=info)
            info = item._fixtureinfo
            item.case = case
            item.pipeline_name = fixture
            run.attach(item, case, resolved)
            for mark in marks.get(case.kind) or marks.setdefault(case.kind, _marks(case.kind)):
                item.add_marker(mark)
            if xfail_tags:
                add_xfail(item, case, xfail_tags)
            yield item
