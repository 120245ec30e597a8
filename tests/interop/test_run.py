"""An imported, frozen test set runs under pytest (serial and ``-n 2``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof import freeze
from tests.interop.conftest import Ran

CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question, case):
        # A pipeline that retrieves the expected documents and answers from them; it
        # refuses what the corpus cannot answer.
        if case.kind == "unanswerable":
            return {"answer": "I don't know.", "contexts": []}
        return {
            "answer": case.expected_answer,
            "contexts": [{"id": i, "text": "passage"} for i in case.expected_source_ids],
        }
    return pipeline
"""


def test_an_imported_raget_test_set_freezes_and_runs(
    cli: Callable[..., Ran], files: Path, pytester: pytest.Pytester, mode: list[str]
) -> None:
    out = pytester.path / "raget.jsonl"
    ran = cli(
        "import", "--from", "raget", files / "raget_testset.jsonl", "-o", out,
        "--corpus", files / "corpus",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    frozen = freeze(out)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest(
        f"--ragproof-dataset={frozen.name}",
        "--ragproof-aggregate-threshold=qa:recall@5>=1",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
    )
    result.assert_outcomes(passed=5)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*qa*recall@5*"])


def test_a_case_that_misses_its_imported_sources_fails(
    cli: Callable[..., Ran], files: Path, pytester: pytest.Pytester
) -> None:
    """The imported expected_source_ids are what the gate checks: wrong ids fail."""
    out = pytester.path / "ragas.jsonl"
    assert cli("import", "--from", "ragas", files / "ragas_testset.csv", "-o", out).code == 0
    frozen = freeze(out)
    pytester.makeconftest(
        CONFTEST.replace("for i in case.expected_source_ids", 'for i in ["shipping.md"]')
    )
    result = pytester.runpytest(
        f"--ragproof-dataset={frozen.name}", "-p", "no:cacheprovider", "-p", "no:asyncio"
    )
    # without --corpus the ids are content ids: a document id retrieves nothing
    result.assert_outcomes(failed=3)
