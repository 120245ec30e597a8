"""``--ragproof-markdown`` through real pytest runs: appending, baseline section, no text."""

from __future__ import annotations

import pytest

from tests.pytester_projects import behave, run
from tests.regression.conftest import ANSWER_WORD, QUESTION_WORD, update


def test_markdown_appends_to_an_existing_step_summary(
    project: pytest.Pytester, mode: list[str]
) -> None:
    summary = project.path / "step_summary.md"
    summary.write_text("# Earlier step\n\nkept as is\n", encoding="utf-8")
    update(project, mode)
    behave(project, {"qa-04": "miss", "un-2": "raise"})
    result = run(
        project,
        mode,
        "--ragproof-baseline=base.json",
        f"--ragproof-markdown={summary}",
    )
    assert result.ret == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# Earlier step\n\nkept as is\n\n### ❌ ragproof: FAILED\n")
    assert "**15 case result(s)**: 13 passed, 1 failed, 1 error" in text
    assert "#### Against the baseline `base.json`" in text
    assert "- regressed [`rag_pipeline`]: `qa-04`, `un-2`" in text
    assert "| `rag_pipeline` | `un-2` | unanswerable | error | error `ValueError` |" in text
    assert "| `rag_pipeline` | `qa-04` | qa | failed | hit@5 = 0 (expected &gt;= 1) |" in text
    # Questions, answers, payloads and the error message never reach the summary.
    for secret in (QUESTION_WORD, ANSWER_WORD, "OTTER-4412", "backend exploded"):
        assert secret not in text

    # A second run appends again instead of replacing.
    run(project, mode, f"--ragproof-markdown={summary}")
    assert summary.read_text(encoding="utf-8").count("ragproof: FAILED") == 2


def test_markdown_is_created_when_missing(project: pytest.Pytester) -> None:
    result = run(project, [], "--ragproof-markdown=out/summary.md")
    assert result.ret == 0
    text = (project.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert text.startswith("### ✅ ragproof: passed\n")
    assert QUESTION_WORD not in text and ANSWER_WORD not in text
