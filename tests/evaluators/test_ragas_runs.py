"""Ragas metrics gate real pytest runs through Ragas' own client (ChatOpenAI) on the stub."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tests.evaluators.conftest import SECRET
from tests.llm_stub import StubServer, server_error
from tests.pytester_projects import load_json, run, write_frozen
from tests.ragas_stub import ScriptedRagas, ragas_metrics

CASES: list[dict[str, Any]] = [
    {
        "id": "q1",
        "kind": "qa",
        "question": "Which river flows through Paris?",
        "expected_answer": "The Seine flows through Paris.",
        "expected_source_ids": ["d1"],
    },
    {
        "id": "q2",
        "kind": "qa",
        "question": "What is the capital of France?",
        "expected_answer": "Paris is the capital of France. Paris is large.",
        "expected_source_ids": ["d2"],
    },
]

CONFTEST = """
from typing import Any

import pytest
from pytest_ragproof.evaluators import RagasEvaluator

RAGAS_METRICS

ANSWERS = {
    "river": ("The Seine flows through Paris. The Seine is pink.", "d1",
              "The Seine flows through Paris."),
    "capital": ("Paris is the capital of France.", "d2", "Paris is the capital of France."),
}

@pytest.fixture(scope="session")
def rag_pipeline():
    ASYNC_OR_NOT def pipeline(question):
        for key, (answer, doc, text) in ANSWERS.items():
            if key in question:
                return {"answer": answer, "contexts": [{"id": doc, "text": text}]}
    return pipeline

def mapper(output, case):
    MAPPER_BODY
    return {
        "user_input": case.question,
        "response": output.answer,
        "retrieved_contexts": [c.text for c in output.contexts or ()],
        "reference": case.expected_answer,
    }

@pytest.fixture(scope="session")
def rag_evaluators():
    metrics, llm = ragas_metrics("STUB_URL")
    return [RagasEvaluator(metrics=metrics, sample_mapper=mapper, llm=llm)]
"""


def project(
    pytester: pytest.Pytester, stub: StubServer, *, is_async: bool = False, mapper: str = "pass"
) -> pytest.Pytester:
    write_frozen(pytester, CASES)
    text = (
        CONFTEST.replace("RAGAS_METRICS", inspect.getsource(ragas_metrics))
        .replace("STUB_URL", stub.url)
        .replace("ASYNC_OR_NOT ", "async " if is_async else "")
        .replace("MAPPER_BODY", mapper)
    )
    pytester.makeconftest(text)
    return pytester


# Sync and async pipelines, with and without pytest-asyncio, serially; under xdist the
# async pipeline with pytest-asyncio loaded (the combination most likely to clash).
@pytest.mark.parametrize(
    ("mode", "is_async", "asyncio_plugin"),
    [
        ([], False, "with-asyncio"),
        ([], True, "with-asyncio"),
        ([], False, "no-asyncio"),
        ([], True, "no-asyncio"),
        (["-n", "2"], True, "with-asyncio"),
    ],
    ids=[
        "serial-sync-asyncio",
        "serial-async-asyncio",
        "serial-sync",
        "serial-async",
        "xdist-async-asyncio",
    ],
)
def test_a_ragas_metric_gates_the_run(
    pytester: pytest.Pytester,
    llm_stub: StubServer,
    mode: list[str],
    is_async: bool,
    asyncio_plugin: str,
) -> None:
    handler = ScriptedRagas()
    llm_stub.set_handler(handler)
    p = project(pytester, llm_stub, is_async=is_async)
    args = ["--ragproof-dataset=cases.frozen.json", "-p", "no:cacheprovider", *mode]
    if asyncio_plugin == "no-asyncio":
        args += ["-p", "no:asyncio"]
    else:
        args += ["-o", "asyncio_default_fixture_loop_scope=function"]
    args += [
        "--ragproof-aggregate-threshold=ragas:faithfulness>=0.9",
        "--ragproof-case-threshold=qa:ragas:context_recall>=0.6",
        "--ragproof-report=results.json",
        "--ragproof-cache-dir=llmcache",
    ]
    result = p.runpytest(*args)
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "ragproof gate FAILED: aggregate ragas:faithfulness>=0.9" in out
    assert "qa:ragas:context_recall>=0.6: ragas:context_recall = 0.5 (expected >= 0.6)" in out
    doc = load_json(p.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q1"]["metrics"]["ragas:faithfulness"] == 0.5
    assert by_id["q2"]["metrics"]["ragas:faithfulness"] == 1.0
    assert by_id["q2"]["metrics"]["ragas:context_recall"] == 0.5
    assert by_id["q1"]["status"] == "passed" and by_id["q2"]["status"] == "failed"
    cov = doc["evaluators"]["ragas"]
    assert cov["metrics"]["ragas:faithfulness"] == {"scored": 2, "missing": 0, "errors": 0}
    # A re-run with the same answers is served by the cache: no request at all.
    made = llm_stub.request_count
    again = p.runpytest(*args)
    assert again.ret == 1
    assert llm_stub.request_count == made


def test_mapper_and_provider_messages_never_reach_an_output(
    pytester: pytest.Pytester, llm_stub: StubServer, mode: list[str]
) -> None:
    llm_stub.set_handler(
        ScriptedRagas(fail_with=server_error(500, echo=f"provider says {SECRET}"), marker="capital")
    )
    p = project(
        pytester,
        llm_stub,
        mapper='if "river" in case.question: raise ValueError("MAPPER-SECRET " + case.question)',
    )
    result = run(
        p,
        mode,
        "--ragproof-report=results.json",
        "--ragproof-html=r.html",
        "--ragproof-markdown=r.md",
        "--junitxml=j.xml",
        "--ragproof-no-cache",
    )
    assert result.ret == 1
    texts = [result.stdout.str(), result.stderr.str()]
    texts += [(p.path / f).read_text() for f in ("results.json", "r.html", "r.md", "j.xml")]
    for text in texts:
        assert "MAPPER-SECRET" not in text and SECRET not in text and "provider says" not in text
    doc = load_json(p.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q1"]["evaluator_error"] == {
        "evaluator": "ragas",
        "step": "sample_mapper",
        "type": "ValueError",
    }
    assert by_id["q2"]["status"] == "error" and by_id["q2"]["error_type"] == "EvaluatorError"
    assert by_id["q2"]["evaluator_error"]["step"] == "evaluate"
    out = result.stdout.str()
    assert "evaluator 'ragas' failed in its sample_mapper: ValueError (message not kept)" in out


def test_an_unknown_sample_field_is_named(pytester: pytest.Pytester, llm_stub: StubServer) -> None:
    llm_stub.set_handler(ScriptedRagas())
    p = project(pytester, llm_stub)
    conftest = (p.path / "conftest.py").read_text()
    (p.path / "conftest.py").write_text(conftest.replace('"user_input"', '"question"'))
    result = run(p, [], "--ragproof-no-cache")
    out = result.stdout.str()
    assert "sample_mapper returned unknown field(s) question" in out
    assert llm_stub.request_count == 0


CUSTOM = '''
import math
import pytest

class LengthJudge:
    """The 20-line custom evaluator of docs/evaluators.md, give or take."""
    name = "house"
    metrics = ["short", "odd"]

    def sample_mapper(self, output, case):
        return {"answer": output.answer or ""}

    def evaluate(self, samples):
        return [{"short": float(len(s["answer"]) < 40), "odd": math.nan} for s in samples]

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        return {"answer": "Paris." if "capital" in question else "x" * 50, "contexts": []}
    return pipeline

@pytest.fixture(scope="session")
def rag_evaluators():
    return [LengthJudge()]
'''


def test_a_custom_evaluator_and_nan_is_not_measured(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    write_frozen(pytester, CASES)
    pytester.makeconftest(CUSTOM)
    result = run(
        pytester,
        mode,
        "--ragproof-case-threshold=none",
        "--ragproof-aggregate-threshold=house:short>=0.5",
        "--ragproof-aggregate-threshold=house:odd>=0",
        "--ragproof-report=results.json",
    )
    doc = load_json(pytester.path / "results.json")
    by_id = {c["id"]: c for c in doc["cases"]}
    assert by_id["q2"]["metrics"]["house:short"] == 1.0
    assert by_id["q1"]["metrics"]["house:short"] == 0.0
    assert "house:odd" not in by_id["q1"]["metrics"]
    assert by_id["q1"]["not_judged"] == {"house:odd": "nan"}
    rows = {t["metric"]: t for t in doc["thresholds"]}
    assert rows["house:short"]["verdict"] == "pass"
    assert rows["house:odd"]["verdict"] == "no data"  # NaN is never a pass
    assert result.ret == 1


def test_ragas_telemetry_is_off_once_the_evaluator_is_built(llm_stub: StubServer) -> None:
    import os

    from pytest_ragproof.evaluators import RagasEvaluator

    metrics, llm = ragas_metrics(llm_stub.url)
    RagasEvaluator(metrics=metrics[:1], sample_mapper=lambda o, c: {}, llm=llm)
    assert os.environ["RAGAS_DO_NOT_TRACK"] == "true"


def _many_cases(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i:02d}",
            "kind": "qa",
            "question": f"Which river flows through Paris, case {i}?",
            "expected_answer": "The Seine flows through Paris.",
            "expected_source_ids": ["d1"],
        }
        for i in range(n)
    ]


def _river(question: str) -> dict[str, Any]:
    text = "The Seine flows through Paris."
    return {"answer": text, "contexts": [{"id": "d1", "text": text}]}


def _to_sample(output: Any, case: Any) -> dict[str, Any]:
    return {
        "user_input": case.question,
        "response": output.answer,
        "retrieved_contexts": [c.text for c in output.contexts or ()],
        "reference": case.expected_answer,
    }


@pytest.mark.parametrize(("bound", "n_cases"), [(1, 3), (3, 7)])
def test_evaluators_score_cases_concurrently_within_the_bound(
    llm_stub: StubServer, bound: int, n_cases: int
) -> None:
    """evaluate(): Ragas' own client, the stub's own count of requests in flight."""
    from pytest_ragproof import evaluate
    from pytest_ragproof.evaluators import RagasEvaluator

    handler = ScriptedRagas(delay_s=0.4)
    llm_stub.set_handler(handler)
    metrics, llm = ragas_metrics(llm_stub.url)
    evaluator = RagasEvaluator(metrics=metrics[:1], sample_mapper=_to_sample, llm=llm)
    results = evaluate(
        _many_cases(n_cases),
        _river,
        evaluators=[evaluator],
        evaluator_concurrency=bound,
        case_thresholds=["none"],
        cache=False,
    )
    assert [r.metrics["ragas:faithfulness"] for r in results.records] == [1.0] * n_cases
    # Faithfulness makes two requests per case, one after the other: the requests in
    # flight at once are the cases being scored at once.
    assert handler.prompts == {"statements": n_cases, "nli": n_cases}
    assert llm_stub.max_in_flight == bound


def test_the_evaluator_concurrency_option_bounds_a_pytest_run(
    pytester: pytest.Pytester, llm_stub: StubServer
) -> None:
    handler = ScriptedRagas(delay_s=0.4)
    llm_stub.set_handler(handler)
    p = project(pytester, llm_stub)
    write_frozen(p, _many_cases(6))  # every question names the river
    result = run(
        p,
        [],
        "--ragproof-case-threshold=none",
        "--ragproof-evaluator-concurrency=2",
        "--ragproof-no-cache",
        "--ragproof-report=results.json",
    )
    assert result.ret == 0, result.stdout.str()
    doc = load_json(p.path / "results.json")
    assert len(doc["cases"]) == 6
    assert all("ragas:faithfulness" in c["metrics"] for c in doc["cases"])
    assert llm_stub.max_in_flight == 2


class _Batches:
    """A custom evaluator that records the batches it is given and the thread it runs on."""

    name = "house"
    metrics = ("batch",)

    def __init__(self, *, broken: bool = False) -> None:
        self.sizes: list[int] = []
        self.threads: set[int] = set()
        self.broken = broken

    def sample_mapper(self, output: Any, case: Any) -> dict[str, Any]:
        return {"answer": output.answer}

    def evaluate(self, samples: list[dict[str, Any]]) -> list[dict[str, float]]:
        import threading

        self.sizes.append(len(samples))
        self.threads.add(threading.get_ident())
        if self.broken:
            return []  # not one result per sample
        return [{"batch": float(len(samples))} for _ in samples]


def test_a_custom_evaluator_gets_batches_within_the_bound_on_one_thread() -> None:
    from pytest_ragproof import evaluate

    house = _Batches()
    results = evaluate(
        _many_cases(9),
        _river,
        evaluators=[house],
        evaluator_concurrency=3,
        case_thresholds=["none"],
        cache=False,
    )
    assert sum(house.sizes) == 9 and max(house.sizes) <= 3
    assert len(house.threads) == 1
    assert all(1.0 <= r.metrics["house:batch"] <= 3.0 for r in results.records)
    broken = _Batches(broken=True)
    results = evaluate(
        _many_cases(4),
        _river,
        evaluators=[broken],
        evaluator_concurrency=2,
        case_thresholds=["none"],
        cache=False,
    )
    assert [r.status for r in results.records] == ["error"] * 4
    assert {r.evaluator_error["type"] for r in results.records if r.evaluator_error} == {
        "ValueError"
    }
