"""Dataset review of imported OpenTelemetry traces in real headless Chromium (Playwright,
tests/browser.py): the trace beside the case, ``p`` takes the production answer, ``d``
the retrieved ids, ``u`` marks a case unanswerable, planted markup never runs, and the
approved cases freeze with ``ragproof freeze --approved-only``."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ragproof.cli import main
from tests.browser import Tab, docs_screenshot, needs_chromium
from tests.review.conftest import PLANTED, PLANTED_ID, TOKEN, ImportedFiles
from tests.review.test_review_browser import only_local, press, served
from tests.review.test_review_traces import imported_app, records_of

pytestmark = needs_chromium


def test_the_trace_is_shown_and_its_markup_never_runs(
    tab: Tab, imported: ImportedFiles, tmp_path: Path
) -> None:
    with served(imported_app(imported, tmp_path / "reviewed.jsonl")) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        assert page.locator("h1").inner_text() == imported.ids[0]
        assert page.locator("#trace-answer").inner_text() == f"Use the reset link. {PLANTED}"
        rows = page.eval_on_selector_all(
            "#trace-retrieved tbody tr",
            "rs => rs.map(r => Array.from(r.cells).map(c => c.innerText))",
        )
        assert rows == [["1", "faq.md#2", "0.820"], ["2", PLANTED_ID, "0.410"]]
        assert page.evaluate("document.images.length") == 0
        assert page.evaluate("document.scripts.length") == 1  # the app's review.js
        only_local(tab)


def test_take_the_answer_and_sources_mark_unanswerable_then_freeze(
    tab: Tab, imported: ImportedFiles, tmp_path: Path, shots: Path
) -> None:
    out = tmp_path / "reviewed.jsonl"
    with served(imported_app(imported, out)) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        assert page.locator("h1").inner_text() == imported.ids[0]
        page.keyboard.press("p")
        assert page.locator("#edit-box").get_attribute("open") is not None
        answer = page.input_value("#edit-expected-answer")
        assert answer == f"Use the reset link. {PLANTED}"
        page.keyboard.press("d")
        assert page.input_value("#edit-expected-sources") == f"faq.md#2\n{PLANTED_ID}"
        page.keyboard.press("e")
        assert page.evaluate("document.activeElement.name") == "question"
        press(tab, "Control+Enter")
        assert page.locator("h1").inner_text() == imported.ids[1]
        # the buttons do what the keys do
        page.click("#take-sources")
        assert page.input_value("#edit-expected-sources") == "faq.md#2\nfaq.md#7"
        # the taken sources and what production did, in one window
        page.evaluate(
            "window.scrollTo(0, document.getElementById('edit-expected-sources')"
            ".getBoundingClientRect().top + window.scrollY - 40)"
        )
        docs_screenshot("review-trace.png", tab, shots)
        with page.expect_navigation():
            page.click("#edit button[type=submit]")
        assert page.locator("h1").inner_text() == imported.ids[2]
        press(tab, "u")  # the last pending case: the list says all is decided
        assert page.url == f"{base}/dataset"
        page.goto(f"{base}/dataset/1")
        assert "expected_answer" in page.locator("table.edits").inner_text()
        assert page.locator("#expected-answer").inner_text() == f"Use the reset link. {PLANTED}"
        assert page.evaluate("document.images.length") == 0
        only_local(tab)
    assert tab.dialogs == []

    records = records_of(out)
    assert [(r["kind"], r["review_status"]) for r in records] == [
        ("qa", "edited"),
        ("qa", "edited"),
        ("unanswerable", "edited"),
    ]
    assert records[0]["expected_source_ids"] == ["faq.md#2", PLANTED_ID]
    assert "expected_answer" not in records[1]  # only the sources were taken
    assert main(["validate", str(out)]) == 0
    frozen = tmp_path / "frozen.json"
    assert main(["freeze", str(out), "--approved-only", "-o", str(frozen)]) == 0
    cases = json.loads(frozen.read_text(encoding="utf-8"))["cases"]
    assert [c["id"] for c in cases] == imported.ids
    assert cases[0]["expected_answer"] == f"Use the reset link. {PLANTED}"
    assert cases[2]["kind"] == "unanswerable" and "expected_source_ids" not in cases[2]
