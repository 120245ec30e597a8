"""``@pytest.mark.rag``: a test function as the pipeline, parametrized over a dataset.

::

    @pytest.mark.rag(dataset="cases.frozen.json", pipeline="v2")
    def test_v2(rag_case):
        return my_rag_v2(rag_case.question)

The test runs once per case (``test_v2[<case id>]``), receives the case as the
``rag_case`` fixture and returns the pipeline output, which is scored like any
dataset item. ``rag_case.question`` is the question as a pipeline fixture would get
it: for an injection case, with ``--ragproof-injection-delivery=append`` (the
default), ``question + "\n\n" + adversarial_payload``, so the payload reaches the
pipeline the test calls and ``injection_resisted`` measures what it measures for a
fixture (the results keep the dataset's question). ``pipeline=`` names the pipeline
(default: the function name).
``dataset=`` is resolved against the test file's folder, then the rootdir; without
it the run's ``--ragproof-dataset`` files are used. Several marked functions are
several pipelines, compared in one run with thresholds applied per pipeline.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.execution.call import question_text, run_sync
from pytest_ragproof.execution.execute import timed
from pytest_ragproof.plugin.collect import add_xfail, hide_unless_failed
from pytest_ragproof.plugin.refs import CASE_KEY, CaseRef, case_ref
from pytest_ragproof.plugin.session import RagproofRun, get_run


def _dataset_paths(metafunc: pytest.Metafunc, marker: pytest.Mark, run: RagproofRun) -> list[Path]:
    given = marker.kwargs.get("dataset", marker.args[0] if marker.args else None)
    if given is None:
        if not run.cfg.datasets:
            pytest.fail(
                f"{metafunc.function.__name__}: @pytest.mark.rag needs a dataset: "
                "@pytest.mark.rag(dataset='cases.frozen.json') or --ragproof-dataset=PATH",
                pytrace=False,
            )
        return list(run.cfg.datasets)
    names = [given] if isinstance(given, str | Path) else list(given)
    out: list[Path] = []
    for name in names:
        path = Path(name)
        if not path.is_absolute():
            near = metafunc.definition.path.parent / path
            path = near if near.exists() else metafunc.config.rootpath / path
        out.append(path.resolve())
    return out


def parametrize(metafunc: pytest.Metafunc, marker: pytest.Mark) -> None:
    run = get_run(metafunc.config)
    name = metafunc.function.__name__
    if "rag_case" not in metafunc.fixturenames:
        pytest.fail(
            f"{name}: a @pytest.mark.rag test receives its case as the 'rag_case' fixture; "
            f"declare it: def {name}(rag_case): ...",
            pytrace=False,
        )
    pipeline = str(marker.kwargs.get("pipeline", name))
    params: list[Any] = []
    ids: list[str] = []
    population = 0
    for path in _dataset_paths(metafunc, marker, run):
        cases = run.share(path)  # --ragproof-shard applied
        population += run.populations[path]
        for case in cases:
            ref = CaseRef(case, pipeline, path, origin="marker")
            params.append(pytest.param(ref, marks=_marks(case)))
            ids.append(case.id)
    run.marker_population[metafunc.definition.nodeid] = population
    metafunc.parametrize("rag_case", params, ids=ids, indirect=True)


def given_case(config: pytest.Config, ref: CaseRef) -> Case:
    """What a marked test receives as ``rag_case``: its question as delivered to a pipeline."""
    delivered = question_text(ref.case, get_run(config).cfg.injection_delivery)
    if delivered == ref.case.question:
        return ref.case
    return ref.case.model_copy(update={"question": delivered})


def _marks(case: Any) -> list[pytest.MarkDecorator]:
    return [getattr(pytest.mark, f"ragproof_{case.kind}")]


def register_item(item: pytest.Item) -> None:
    callspec = getattr(item, "callspec", None)
    ref = callspec.params.get("rag_case") if callspec is not None else None
    if isinstance(ref, CaseRef):
        item.stash[CASE_KEY] = ref
        tags = get_run(item.config).cfg.xfail_tags
        if tags:
            add_xfail(item, ref.case, tags)


def call_marked(item: pytest.Function) -> bool:
    """Run a marked test, keep what it returned, score it. Replaces pytest's call."""
    __tracebackhide__ = hide_unless_failed
    run = get_run(item.config)
    ref = case_ref(item)
    assert ref is not None
    record = run.new_record(item)
    run.running[item.nodeid] = record
    function = item.obj
    original = inspect.unwrap(function)
    # pytest-asyncio (auto mode) wraps async tests in a sync runner that drops the
    # return value; call the coroutine function itself on ragproof's own loop.
    if inspect.iscoroutinefunction(original) and not inspect.iscoroutinefunction(function):
        function = original
    kwargs = {arg: item.funcargs[arg] for arg in item._fixtureinfo.argnames}
    timeout = run.cfg.timeout

    def call() -> Any:
        __tracebackhide__ = True
        if inspect.iscoroutinefunction(function):
            return run.loops.run(function(**kwargs), timeout)
        raw = run_sync(lambda: function(**kwargs), timeout)
        if inspect.isawaitable(raw):
            raw = run.loops.run(raw, timeout)
        return raw

    run.conclude(item, record, [timed(call) for _ in range(run.cfg.repeat)])
    return True
