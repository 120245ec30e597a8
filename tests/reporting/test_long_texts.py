"""A case's long texts in the HTML report: each field is cut at a bound, with a note.

An endpoint allowed a large response (``--ragproof-endpoint-max-bytes``) answered 10 MB
per case and the report embedded it whole (524 MB for 50 cases). A real pytest run
(pytester) whose pipeline answers 200,000 characters: the page embeds the first
:data:`~pytest_ragproof.defaults.REPORT_TEXT_CHARS` of each field, says so beside
it in Chromium, and the results JSON keeps the whole answer; ``ragproof report -f
html`` names the results file it read.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.defaults import REPORT_CONTEXT_CHARS, REPORT_TEXT_CHARS
from pytest_ragproof.reporting.html import render_html
from tests.browser import Tab, needs_chromium
from tests.pytester_projects import load_json, run, write_frozen

LONG = 200_000
# The character at the bound is written as two UTF-16 units (a surrogate pair): the cut
# keeps it whole. Markup inside the kept part must stay text.
HEAD = "</script><script>alert(1)</script> <b>bold</b> "
ANSWER = HEAD + "a" * (REPORT_TEXT_CHARS - len(HEAD) - 1) + "\U0001f642" + "z" * LONG
ANSWER = ANSWER[:LONG]
QUESTION = "Which plan? " + "q" * 30_000
EXPECTED = "Enterprise " + "e" * 25_000
CONTEXT = "Context text. " + "c" * 10_000

CONFTEST = f"""
import pytest

ANSWER = {ANSWER!r}
CONTEXT = {CONTEXT!r}

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question):
        if question.startswith("Which plan?"):
            return {{"answer": ANSWER, "contexts": [{{"id": "plans.md", "text": CONTEXT}}]}}
        return {{"answer": "Refunds take 5 days.", "contexts": [{{"id": "refunds.md",
                 "text": "Refunds take 5 days."}}]}}
    return pipeline
"""

CASES = [
    {
        "id": "qa-long",
        "kind": "qa",
        "question": QUESTION,
        "expected_answer": EXPECTED,
        "expected_source_ids": ["plans.md"],
    },
    {
        "id": "qa-short",
        "kind": "qa",
        "question": "How long do refunds take?",
        "expected_answer": "5 days",
        "expected_source_ids": ["refunds.md"],
    },
]
NOTE = (
    "[shortened from 200,000 characters to the first 20,000; the full text is in the "
    "results JSON {source}]"
)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    result = run(pytester, [], "--ragproof-report=r.json", "--ragproof-html=r.html")
    assert result.ret == 0, result.stdout.str()[-3000:]
    return pytester.path


def _data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="ragproof-data">(.*?)</script>', page)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def _case(data: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in data["cases"] if c["id"] == case_id)


def test_the_page_embeds_each_text_up_to_the_bound_and_the_results_keep_it_whole(
    project: Path,
) -> None:
    results = load_json(project / "r.json")
    record = next(c for c in results["cases"] if c["id"] == "qa-long")
    assert record["answer"] == ANSWER and len(record["answer"]) == LONG
    assert record["contexts"][0]["text"] == CONTEXT
    page = (project / "r.html").read_text(encoding="utf-8")
    # the long case's fields are cut: the page is far smaller than its one answer
    assert len(page.encode("utf-8")) < LONG
    assert ANSWER[: REPORT_TEXT_CHARS + 1] not in page
    assert "<script>alert(1)" not in page and page.count("<script") == 2
    case = _case(_data(page), "qa-long")
    answer = case["runs"]["rag_pipeline"]["answer"]
    assert answer["cut"] == ANSWER[:REPORT_TEXT_CHARS]
    assert answer["cut"].endswith("\U0001f642")  # cut after the character, not inside it
    assert answer["chars"] == LONG
    assert answer["note"] == NOTE.format(source="r.json")[1:-1]
    assert case["question"]["cut"] == QUESTION[:REPORT_TEXT_CHARS]
    assert case["question"]["chars"] == len(QUESTION)
    assert case["expected_answer"]["cut"] == EXPECTED[:REPORT_TEXT_CHARS]
    context = case["runs"]["rag_pipeline"]["contexts"][0]["text"]
    assert context["cut"] == CONTEXT[:REPORT_CONTEXT_CHARS]
    assert context["chars"] == len(CONTEXT)
    # the short case is as it was: plain strings
    short = _case(_data(page), "qa-short")
    assert short["runs"]["rag_pipeline"]["answer"] == "Refunds take 5 days."
    assert short["question"] == "How long do refunds take?"


def test_rendering_copies_only_what_the_page_keeps() -> None:
    """50 answers of 2,000,000 characters: what rendering allocates stays near what the
    page embeds (50 x 20,000 characters), never a copy of the answers."""
    answer = "a" * 2_000_000
    results = {
        "schema": "ragproof.results/1",
        "passed": True,
        "pipelines": ["rag_pipeline"],
        "cases": [
            {
                "id": f"qa-{n}",
                "kind": "qa",
                "pipeline": "rag_pipeline",
                "status": "passed",
                "question": "q",
                "answer": answer,
                "contexts": [],
                "metrics": {"hit@5": 1.0},
            }
            for n in range(50)
        ],
    }
    tracemalloc.start()
    try:
        page = render_html(results)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(page) < 50 * (REPORT_TEXT_CHARS + 1_000) + 200_000
    assert peak < 12 * 1024 * 1024, f"rendering allocated {peak:,} bytes at its peak"


@needs_chromium
def test_the_note_is_shown_beside_the_cut_answer_in_chromium(project: Path, tab: Tab) -> None:
    assert (
        main(["report", str(project / "r.json"), "-f", "html", "-o", str(project / "c.html")]) == 0
    )
    for name, source in (("r.html", "r.json"), ("c.html", str(project / "r.json"))):
        tab.page.goto((project / name).as_uri())
        tab.page.click("#cases-table tbody tr.case[data-key='cases.frozen.json::qa-long']")
        answer = tab.page.locator("tr.details .run .field", has_text="answer").first
        note = answer.locator(".cut-note")
        assert note.is_visible()
        assert note.text_content() == NOTE.format(source=source)
        shown = answer.locator(".text").text_content() or ""
        assert shown.startswith(HEAD) and shown.endswith("\U0001f642\u2026")
        assert len(shown) == REPORT_TEXT_CHARS + 1
        question = tab.page.locator("tr.details > td > .field", has_text="question").first
        assert "shortened from 30,012 characters" in (
            question.locator(".cut-note").text_content() or ""
        )
        assert tab.page.locator("tr.details .cut-note").count() == 4  # + expected, context
        assert tab.dialogs == [] and tab.errors == []
