"""The review app in real headless Chromium (Playwright, tests/browser.py), served by
uvicorn on 127.0.0.1 on a thread: keyboard review of five cases, labels kept over a
reload, a label going stale, the agreement page against judge-check, dataset review
down to ``ragproof freeze --approved-only``, and planted markup that never runs.

Screenshots go to a temporary folder; ``RAGPROOF_SCREENSHOTS=docs/img`` writes the
documentation's ``review-*.png`` there as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.labels import read_labels
from tests.browser import Tab, docs_screenshot, needs_chromium
from tests.review.conftest import PLANTED, TOKEN, GeneratedFiles, write_results
from tests.review.test_app import (
    case_number,
    cli_tables,
    dataset_app,
    results_app,
    write_two_reviewers,
)

pytestmark = needs_chromium


@contextmanager
def served(app: Any) -> Iterator[str]:
    from pytest_ragproof.review.server import ServerThread

    server = ServerThread(app).start()
    try:
        yield server.url
    finally:
        server.stop()


def press(tab: Tab, key: str) -> None:
    """Press ``key`` and wait for the page it leads to."""
    with tab.page.expect_navigation():
        tab.page.keyboard.press(key)


def only_local(tab: Tab) -> None:
    outside = [url for url in tab.requests if not url.startswith("http://127.0.0.1:")]
    assert outside == []
    assert tab.errors == [] and tab.dialogs == []


def test_review_five_cases_by_keyboard(
    tab: Tab, results_path: Path, tmp_path: Path, shots: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    with served(results_app(results_path, labels)) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        assert page.url == f"{base}/case/1"  # the first judged case; the token left the URL
        keystrokes: dict[str, int] = {}
        metrics_of: dict[str, int] = {}
        for _ in range(5):
            case_id = page.locator("h1").inner_text()
            metrics = page.locator(".metric").count()
            for _ in range(metrics):
                press(tab, "y")
            keystrokes[case_id] = metrics_of[case_id] = metrics
            if len(keystrokes) < 5:
                press(tab, "s")  # the next case not yet reviewed
                keystrokes[case_id] += 1
        # the judged metrics of each case (qa-boom's judge failed: nothing to label there)
        assert metrics_of == {"inj-1": 5, "qa-empty": 3, "qa-paris": 6, "qa-sky": 6, "un-1": 1}
        assert page.locator("#progress-text").inner_text() == "5 of 5 judged case(s) reviewed"
        written = read_labels(labels)
        assert len(written) == 21
        assert {label.verdict for label in written} == {1}

        # u withdraws the last label of the case, n labels it again as no
        last = page.locator("h1").inner_text()
        press(tab, "u")
        assert page.locator("#progress-text").inner_text() == "4 of 5 judged case(s) reviewed"
        press(tab, "n")
        tail = read_labels(labels)[-2:]
        assert [(t.case_id, t.verdict) for t in tail] == [(last, None), (last, 0)]

        # a reload (or a new session) shows every label kept
        page.goto(f"{base}/case/{case_number(results_path, 'qa-paris')}")
        page.reload()
        assert page.locator(".metric .badge.fresh").count() == 6
        assert page.locator("#progress-text").inner_text() == "5 of 5 judged case(s) reviewed"
        # the judged claims are marked on the context they cite
        context = page.locator(".context[data-rank='1']").inner_text()
        assert "supported faithfulness claim 1: Paris is the capital of France." in context
        page.locator(".metric[data-metric='faithfulness'] details").evaluate("d => d.open = true")
        docs_screenshot("review-case.png", tab, shots)
        page.goto(f"{base}/cases")
        docs_screenshot("review-cases.png", tab, shots)
        only_local(tab)
    print(f"keystrokes per case: {keystrokes}")


def test_a_label_goes_stale_in_the_page(
    tab: Tab, results_path: Path, tmp_path: Path, shots: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    n = case_number(results_path, "qa-sky")
    with served(results_app(results_path, labels)) as base:
        page = tab.page
        page.goto(f"{base}/case/{n}?token={TOKEN}")
        press(tab, "n")  # faithfulness: no
        assert "you: no" in page.locator(".metric[data-metric='faithfulness']").inner_text()
        # the next run answers otherwise; the app reads the new results file
        document = json.loads(results_path.read_text())
        document["cases"][n - 1]["answer"] = "The sky is green."
        write_results(results_path, document)
        page.reload()
        row = page.locator(".metric[data-metric='faithfulness']").inner_text()
        assert "stale: ana said no" in row and "not counted" in row
        assert "not labelled by you" in row
        assert page.locator(".badge.stale").count() == 1
        assert "1 stale (not counted)" in page.goto(f"{base}/cases").text()  # type: ignore[union-attr]
        page.goto(f"{base}/case/{n}")
        page.locator(".metric[data-metric='faithfulness']").scroll_into_view_if_needed()
        docs_screenshot("review-stale.png", tab, shots)
        only_local(tab)


def test_agreement_page_reads_as_judge_check(
    tab: Tab,
    results_path: Path,
    tmp_path: Path,
    shots: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pytest_ragproof.cli import main

    labels = tmp_path / "labels.jsonl"
    write_two_reviewers(results_path, labels)
    args = ["judge-check", "--results", str(results_path), "--labels", str(labels)]
    assert main([*args, "--json", str(tmp_path / "figures.json")]) == 0
    printed = capsys.readouterr().out
    with served(results_app(results_path, labels)) as base:
        page = tab.page
        page.goto(f"{base}/agreement?token={TOKEN}")
        shown = page.evaluate(
            """Object.fromEntries([...document.querySelectorAll('section[data-metric]')].map(s =>
                [s.dataset.metric, [...s.querySelectorAll('tr[data-reviewer]')].map(r =>
                  [...r.querySelectorAll('td')].map(c => c.textContent))]))"""
        )
        assert shown == cli_tables(printed)
        people = page.locator("section[data-metric='faithfulness'] .people").inner_text()
        assert people in printed
        docs_screenshot("review-agreement.png", tab, shots)
        # a disagreement leads to its case page
        with page.expect_navigation():
            page.locator("#disagreements a", has_text="qa-paris").click()
        assert page.locator("h1").inner_text() == "qa-paris"
        assert "bo: no" in page.locator(".metric[data-metric='faithfulness']").inner_text()
        only_local(tab)


def test_dataset_review_then_freeze_the_approved(
    tab: Tab, generated: GeneratedFiles, tmp_path: Path, shots: Path
) -> None:
    from pytest_ragproof.cli import main

    out = tmp_path / "reviewed.jsonl"
    with served(dataset_app(generated, out)) as base:
        page = tab.page
        page.goto(f"{base}/?token={TOKEN}")
        assert page.locator("h1").inner_text() == "gen-0-qa-0"
        assert page.locator("mark#span").inner_text() == (
            "Refunds are accepted within 30 days of purchase. Refunds take 5 days."
        )
        docs_screenshot("review-dataset.png", tab, shots)
        press(tab, "a")
        assert page.locator("h1").inner_text() == "gen-0-qa-1"
        press(tab, "r")
        assert page.locator("h1").inner_text() == "gen-0-qa-2"
        page.keyboard.press("e")
        assert page.evaluate("document.activeElement.name") == "question"
        page.keyboard.press("Control+A")
        page.keyboard.insert_text("Which plan includes single sign-on?")
        press(tab, "Control+Enter")
        assert page.locator("h1").inner_text() == "gen-0-qa-3"
        press(tab, "k")
        assert page.locator("h1").inner_text() == "gen-0-qa-2"
        assert "Which plan has SSO?" in page.locator("table.edits").inner_text()
        assert page.locator(".badge.status-edited").count() == 1
        only_local(tab)

    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["review_status"] for r in records] == ["approved", "rejected", "edited", "pending"]
    frozen = tmp_path / "approved.frozen.json"
    assert main(["freeze", str(out), "-o", str(frozen), "--approved-only"]) == 0
    cases = json.loads(frozen.read_text())["cases"]
    assert [c["id"] for c in cases] == ["gen-0-qa-0", "gen-0-qa-2"]
    assert cases[1]["question"] == "Which plan includes single sign-on?"


def test_planted_markup_is_shown_as_text_and_never_runs(
    tab: Tab, judged: Any, generated: GeneratedFiles, tmp_path: Path
) -> None:
    document = judged.full()
    document["cases"][0]["answer"] = PLANTED
    document["cases"][0]["contexts"][0]["text"] = PLANTED
    results = write_results(tmp_path / "planted.json", document)
    page = tab.page
    with served(results_app(results, tmp_path / "labels.jsonl")) as base:
        page.goto(f"{base}/case/1?token={TOKEN}")
        assert page.locator("#answer").inner_text() == PLANTED
        assert PLANTED in page.locator(".context[data-rank='1']").inner_text()
        assert page.evaluate("document.images.length") == 0
        assert page.evaluate("document.scripts.length") == 1  # the app's review.js
        only_local(tab)
    with served(dataset_app(generated, tmp_path / "reviewed.jsonl")) as base:
        page.goto(f"{base}/dataset/2?token={TOKEN}")
        assert PLANTED in page.locator("#expected-answer").inner_text()
        document_text = page.locator("pre.document").inner_text()
        assert '<script>alert("doc")</script> <img src=x onerror="alert(3)">' in document_text
        assert page.evaluate("document.images.length") == 0
        assert page.evaluate("document.scripts.length") == 1
        # even a script injected now could not run: the page's CSP forbids inline code
        blocked = page.evaluate(
            """new Promise(done => {
                document.addEventListener('securitypolicyviolation',
                  e => done(e.effectiveDirective), {once: true});
                const s = document.createElement('script'); s.textContent = 'alert(9)';
                document.body.appendChild(s); })"""
        )
        assert blocked.startswith("script-src")
        only_local(tab)
    assert re.sub(r"\s+", " ", "".join(tab.dialogs)) == ""


def test_grades_notes_and_claims_by_keyboard(tab: Tab, results_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    n = case_number(results_path, "qa-paris")
    with served(results_app(results_path, labels)) as base:
        page = tab.page
        page.goto(f"{base}/case/{n}?token={TOKEN}")
        row = ".metric[data-metric='answer_correctness']"
        page.locator(f"{row} input[name=grade]").focus()
        page.keyboard.insert_text("0.5")
        press(tab, "Enter")  # Enter in the grade box saves the grade
        faithfulness = ".metric[data-metric='faithfulness']"
        page.locator(f"{faithfulness} select[name='claim-2']").select_option("supported")
        page.locator(f"{faithfulness} input[name=note]").focus()
        page.keyboard.insert_text("Berlin is true, just off topic")
        page.keyboard.press("Enter")  # leaves the note: nothing is saved yet
        assert read_labels(labels)[-1].metric == "answer_correctness"
        press(tab, "n")  # the note's row is the current one
        grade, verdict = read_labels(labels)
        assert (grade.metric, grade.verdict, grade.note) == ("answer_correctness", 0.5, None)
        assert (verdict.metric, verdict.verdict) == ("faithfulness", 0)
        assert verdict.note == "Berlin is true, just off topic"
        assert [(c.index, c.verdict) for c in verdict.claims or ()] == [(2, "supported")]
        assert "you: 0.5" in page.locator(row).inner_text()
        only_local(tab)
