"""Async pipelines, --ragproof-concurrency, marker mode, redaction, evaluate() (serial and -n 2)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.pytester_projects import load_json, run
from tests.runner.conftest import CASES

ASYNC_CONFTEST = """
import asyncio, os, time, pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    slow = {"un-1": float(os.environ.get("SLOW_UN1", "0"))}
    async def pipeline(question, case):
        await asyncio.sleep(slow.get(case.id, 0.0) or 0.01)
        if case.kind == "unanswerable":
            return "I don't know."
        ids = list(case.expected_source_ids)
        contexts = [{"id": i, "text": "t"} for i in ids]
        return {"answer": "Refunds take 30 days.", "contexts": contexts}
    return pipeline
"""

SYNC_CONFTEST = ASYNC_CONFTEST.replace("async def pipeline", "def pipeline").replace(
    "await asyncio.sleep", "time.sleep"
)


def _cases_without_timings(path: Any) -> list[dict[str, Any]]:
    data = load_json(path)
    out = []
    for case in data["cases"]:
        case = dict(case)
        case["latency_s"] = None
        case["metrics"] = {k: v for k, v in case["metrics"].items() if k != "latency_s"}
        out.append(case)
    return out


@pytest.mark.parametrize("conftest", [ASYNC_CONFTEST, SYNC_CONFTEST], ids=["async", "sync"])
def test_concurrency_gives_the_sequential_results(
    project: pytest.Pytester, mode: list[str], conftest: str
) -> None:
    project.makeconftest(conftest)
    assert run(project, mode, "--ragproof-report=seq.json").ret == 0
    result = run(project, mode, "--ragproof-concurrency=4", "--ragproof-report=conc.json")
    assert result.ret == 0
    result.assert_outcomes(passed=4)
    assert _cases_without_timings(project.path / "seq.json") == _cases_without_timings(
        project.path / "conc.json"
    )


@pytest.mark.parametrize("concurrency", ["1", "4"])
@pytest.mark.parametrize("conftest", [ASYNC_CONFTEST, SYNC_CONFTEST], ids=["async", "sync"])
def test_a_raising_pipeline_is_shown_from_the_users_code(
    project: pytest.Pytester, mode: list[str], conftest: str, concurrency: str
) -> None:
    raising = conftest.replace(
        '        if case.kind == "unanswerable":\n',
        '        if case.kind == "unanswerable":\n            raise KeyError("index gone")\n',
    )
    assert raising != conftest
    project.makeconftest(raising)
    result = run(project, mode, f"--ragproof-concurrency={concurrency}")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*KeyError: 'index gone'*"])
    out = result.stdout.str()
    assert 'raise KeyError("index gone")' in out
    assert "pytest_ragproof" not in out  # no frame of ragproof's own


@pytest.mark.parametrize("conftest", [ASYNC_CONFTEST, SYNC_CONFTEST], ids=["async", "sync"])
def test_timeout_inside_concurrent_execution(
    project: pytest.Pytester, mode: list[str], conftest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeconftest(conftest)
    monkeypatch.setenv("SLOW_UN1", "3")
    result = run(project, mode, "--ragproof-concurrency=4", "--ragproof-timeout=0.5")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*un-1: the pipeline did not answer within 0.5s*"])
    assert result.parseoutcomes()["passed"] == 3


def test_function_scope_says_why_concurrency_cannot_apply(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makeconftest(ASYNC_CONFTEST.replace('scope="session"', 'scope="function"'))
    result = run(project, mode, "--ragproof-concurrency=4")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--ragproof-concurrency=4 did not apply*function-scoped*"])


def test_async_pipeline_with_pytest_asyncio_auto_mode(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makeconftest(ASYNC_CONFTEST)
    project.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    project.makepyfile(
        test_other="import asyncio\n\nasync def test_plain_async():\n    await asyncio.sleep(0)\n"
    )
    result = project.runpytest(
        "--ragproof-dataset=cases.frozen.json", "-p", "no:cacheprovider", *mode
    )
    assert result.ret == 0
    result.assert_outcomes(passed=5)


MARKER_TESTS = """
import asyncio
import pytest

def answer(case, good):
    if case.kind == "unanswerable":
        return "I don't know."
    ids = list(case.expected_source_ids) if good else ["nothing.md"]
    return {"answer": "fine", "contexts": [{"id": i, "text": "t"} for i in ids]}

@pytest.mark.rag(dataset="cases.frozen.json")
def test_good(rag_case):
    return answer(rag_case, True)

@pytest.mark.rag(dataset="cases.frozen.json", pipeline="weak")
async def test_weak(rag_case):
    await asyncio.sleep(0)
    return answer(rag_case, False)
"""


def test_marker_mode_two_pipelines_per_pipeline_aggregates(
    project: pytest.Pytester, mode: list[str]
) -> None:
    project.makepyfile(test_marked=MARKER_TESTS)
    result = project.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
        "--ragproof-case-threshold",
        "none",
        "--ragproof-aggregate-threshold",
        "qa:hit@5>=0.9",
        "--ragproof-report=results.json",
        "-W",
        "error::pytest.PytestReturnNotNoneWarning",
    )
    assert result.ret == 1
    assert result.parseoutcomes()["passed"] == 8
    result.stdout.fnmatch_lines(
        [
            "*test_good*qa*hit@5*mean >= 0.9 (aggregate)*PASS*",
            "*weak*qa*hit@5*mean >= 0.9 (aggregate)*FAIL*",
            "*ragproof gate FAILED: aggregate qa:hit@5>=0.9 [[]weak]*",
        ]
    )
    data = load_json(project.path / "results.json")
    assert data["pipelines"] == ["test_good", "weak"]
    assert len(data["cases"]) == 8
    assert data["datasets"][0]["path"] == "cases.frozen.json"


SECRET_CASES = [
    {
        "id": "s1",
        "kind": "qa",
        "question": "What is SECRET-QUESTION-TEXT-42?",
        "expected_answer": "SECRET-EXPECTED",
        "expected_source_ids": ["a.md"],
    },
    {
        "id": "s2",
        "kind": "qa",
        "question": "Who holds SECRET-QUESTION-TEXT-43?",
        "expected_source_ids": ["a.md"],
    },
]
SECRET_CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        if "43" in question:
            raise RuntimeError("failed on " + question)
        return {"answer": "SECRET-ANSWER " + question,
                "contexts": [{"id": "b.md", "text": "SECRET-CONTEXT " + question}]}
    return pipeline
"""


def test_redaction_keeps_text_out_of_every_output(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    from pytest_ragproof import freeze

    src = pytester.path / "cases.jsonl"
    src.write_text("".join(json.dumps(c) + "\n" for c in SECRET_CASES), encoding="utf-8")
    freeze(src)
    src.unlink()
    pytester.makeconftest(SECRET_CONFTEST)
    result = pytester.runpytest(
        "--ragproof-dataset=cases.frozen.json",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
        "--ragproof-redact",
        "--ragproof-report=r.json",
        "--junitxml=j.xml",
        "--ragproof-markdown=summary.md",
        "-rA",
        "-vv",
    )
    assert result.ret == 1
    result.assert_outcomes(failed=2)
    texts = [result.stdout.str(), result.stderr.str()]
    texts += [(pytester.path / name).read_text() for name in ("r.json", "j.xml")]
    if (pytester.path / "summary.md").exists():
        texts.append((pytester.path / "summary.md").read_text())
    for text in texts:
        assert "SECRET" not in text
    ET.parse(pytester.path / "j.xml")
    data = load_json(pytester.path / "r.json")
    assert data["redacted"] is True
    assert {c["status"] for c in data["cases"]} == {"failed", "error"}


def test_evaluate_equals_the_pytest_run(project: pytest.Pytester) -> None:
    import os

    from pytest_ragproof import evaluate

    project.makeconftest(SYNC_CONFTEST)
    args = ("--ragproof-aggregate-threshold", "qa:recall@5>=0.9", "--ragproof-report=py.json")
    assert run(project, [], *args).ret == 0
    namespace: dict[str, Any] = {}
    exec(
        compile(SYNC_CONFTEST.replace('@pytest.fixture(scope="session")', ""), "c", "exec"),
        namespace,
    )
    cwd = os.getcwd()
    os.chdir(project.path)
    try:
        results = evaluate(
            "cases.frozen.json",
            namespace["rag_pipeline"](),
            thresholds=["qa:recall@5>=0.9"],
            concurrency=2,
        )
    finally:
        os.chdir(cwd)
    assert results.passed
    ours = results.to_dict()
    theirs = load_json(project.path / "py.json")
    strip = _strip_volatile
    assert strip(ours["cases"]) == strip(theirs["cases"])
    assert [t["verdict"] for t in ours["thresholds"]] == [
        t["verdict"] for t in theirs["thresholds"]
    ]
    assert ours["datasets"][0]["sha256"] == theirs["datasets"][0]["sha256"]
    assert len(ours["cases"]) == len(CASES)


def _strip_volatile(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        case = {k: v for k, v in case.items() if k not in ("latency_s", "nodeid", "dataset")}
        case["metrics"] = {k: v for k, v in case["metrics"].items() if k != "latency_s"}
        out.append(case)
    return out
