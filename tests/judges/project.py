"""The pytester project of the judges' pytest runs: four cases, a scripted pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Imported with this module, before any in-process pytester run: a run drops the modules
# it imported, and evaluate() must not mix its own classes with a dropped run's.
from pytest_ragproof.evaluation import Results, evaluate

if TYPE_CHECKING:
    import pytest

CASES: list[dict[str, Any]] = [
    {
        "id": "q1",
        "kind": "qa",
        "question": "What is the capital of France?",
        "expected_answer": "Paris is the capital of France.",
        "expected_source_ids": ["d1"],
    },
    {
        "id": "q2",
        "kind": "qa",
        "question": "Which river flows through Paris?",
        "expected_answer": "The Seine flows through Paris.",
        "expected_source_ids": ["d2"],
    },
    {
        "id": "q3",
        "kind": "qa",
        "question": "What is the capital of Germany?",
        "expected_answer": "Berlin is the capital of Germany.",
        "expected_source_ids": ["d3"],
    },
    {"id": "u1", "kind": "unanswerable", "question": "Who will win the 2090 cup?"},
]

ANSWERS = {
    # q1: both claims supported; q2: 1 of 2; q3: 1 of 1.
    "France": (
        "Paris is the capital of France. Paris is in France.",
        "d1",
        "Paris is the capital of France. Paris is in France.",
    ),
    "river": (
        "The Seine flows through Paris. The Seine is pink.",
        "d2",
        "The Seine flows through Paris.",
    ),
    "Germany": ("Berlin is the capital of Germany.", "d3", "Berlin is the capital of Germany."),
}

CONFTEST = f"""
import sys
import pytest

ANSWERS = {ANSWERS!r}

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        for key, (answer, doc, text) in ANSWERS.items():
            if key in question:
                return {{"answer": answer, "contexts": [{{"id": doc, "text": text}}]}}
        return {{"answer": "I don't know.", "contexts": []}}
    return pipeline

def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        with open("imported.txt", "w") as fh:
            fh.write(str("litellm" in sys.modules))
"""


def evaluate_project(
    project: pytest.Pytester, stub_url: str, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> Results:
    """``evaluate()`` over the project's cases with its conftest's pipeline as plain code,
    from the project's folder, every judge on against the stub (``settings`` added)."""
    namespace: dict[str, Any] = {}
    exec(CONFTEST.replace('@pytest.fixture(scope="session")', ""), namespace)
    monkeypatch.chdir(project.path)
    return evaluate(
        "cases.frozen.json",
        namespace["rag_pipeline"](),
        judges=["all"],
        judge_model="openai/stub-judge",
        judge_api_base=stub_url,
        **settings,
    )
