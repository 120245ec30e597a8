"""A dataset given by option that lies outside the folder of the pipeline's conftest.

The project: ``proj/conftest.py`` defines ``rag_pipeline``; the frozen dataset is
``cases.frozen.json`` one folder up; pytest runs from ``proj`` with
``--ragproof-dataset=../cases.frozen.json``. Documented (docs/pipelines.md): the
conftests of the invocation folder and of the rootdir provide the pipeline fixture of
a dataset given by option, and the run is gated as any other, whether the rootdir is
the invocation folder (no ini file: the dataset lies outside the rootdir) or the
dataset's folder (an ini file there: the conftest lies below the rootdir).
"""

from __future__ import annotations

import pytest

from tests.pytester_projects import load_json, write_frozen

CASES = [
    {
        "id": f"qa-{i}",
        "kind": "qa",
        "question": f"What does document {i} say?",
        "expected_answer": f"document {i} says yes",
        "expected_source_ids": [f"doc{i}.md"],
    }
    for i in range(4)
]

# qa-3 gets the wrong source: hit@1 is 0.75 over the run.
CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question, case):
        number = case.id.split("-")[1]
        source = "other.md" if number == "3" else f"doc{number}.md"
        context = {"id": source, "text": "yes"}
        return {"answer": f"document {number} says yes", "contexts": [context]}
    return pipeline
"""

GATE = "--ragproof-aggregate-threshold=qa:hit@1>=0.9"
NO_CASE_GATES = "--ragproof-case-threshold=none"


@pytest.fixture(params=["no-ini", "ini-above"])
def layout(
    request: pytest.FixtureRequest, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    write_frozen(pytester, CASES)
    proj = pytester.mkdir("proj")
    (proj / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    if request.param == "ini-above":
        pytester.makeini("[pytest]\n")
    monkeypatch.chdir(proj)
    return pytester


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--ragproof-dataset=../cases.frozen.json",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        NO_CASE_GATES,
        *args,
    )


def test_a_dataset_outside_the_conftests_folder_is_gated(layout: pytest.Pytester) -> None:
    result = _run(layout, GATE, "--ragproof-report=results.json")
    out = result.stdout.str()
    assert "no fixture named" not in out
    assert "pytest's selection" not in out
    assert "ragproof gate FAILED: aggregate qa:hit@1>=0.9" in out
    result.stdout.fnmatch_lines(["*= 4 passed, 1 ragproof gate failed in *"])
    assert result.ret == 1
    doc = load_json(layout.path / "proj" / "results.json")
    assert doc["passed"] is False
    assert sorted(c["id"] for c in doc["cases"]) == ["qa-0", "qa-1", "qa-2", "qa-3"]


def test_the_same_under_xdist(layout: pytest.Pytester) -> None:
    result = _run(layout, "-n", "2", GATE)
    out = result.stdout.str()
    assert "pytest's selection" not in out
    assert "ragproof gate FAILED: aggregate qa:hit@1>=0.9" in out
    assert result.ret == 1


def test_a_node_id_selection_is_still_a_selection(layout: pytest.Pytester) -> None:
    # -k leaves out qa-3: the note says so and the aggregate is reported, not gated.
    result = _run(layout, GATE, "-k", "not qa-3")
    out = result.stdout.str()
    assert "left out 1 of 4 case(s): aggregates are reported, not gated" in out
    assert result.ret == 0
