"""The history pages (Runs, Run, Compare) in headless Chromium, served on 127.0.0.1.

``RAGPROOF_SCREENSHOTS=docs/img`` writes docs/history.md's screenshots
(``history-runs.png``, ``history-run.png``, ``history-compare.png``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import Tab, docs_screenshot, needs_chromium
from tests.review.conftest import TOKEN
from tests.review.test_history_pages import History, args, make_history
from tests.review.test_review_browser import only_local, served

pytestmark = needs_chromium

# Every chart's drawn size and the texts whose drawn box leaves its viewBox.
CHARTS = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
  const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
  const out = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBBox()])
    .filter(([_, b]) => b.x < -0.5 || b.y < -0.5 || b.x + b.width > vb.width + 0.5
                        || b.y + b.height > vb.height + 0.5).map(([s]) => s);
  return {label: svg.getAttribute('aria-label'), width: r.width, height: r.height, outside: out};
})"""


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("history-browser"))


def charts(tab: Tab) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = tab.js(CHARTS)
    for chart in found:
        assert chart["width"] > 0 and chart["height"] > 0, chart["label"]
        assert chart["outside"] == [], (chart["label"], chart["outside"])
    return found


def test_runs_run_and_compare_pages(
    tab: Tab, history: History, tmp_path: Path, shots: Path
) -> None:
    from pytest_ragproof.commands.review import build

    app, _ = build(
        args(str(history.results), "--history", str(history.path), "--labels", "x.jsonl"), TOKEN
    )
    good, worse, broken = history.ids
    with served(app) as base:
        page = tab.page
        page.goto(f"{base}/runs?token={TOKEN}")
        assert page.url == f"{base}/runs"
        assert page.locator("#runs tbody tr").count() == 3
        trends = charts(tab)
        assert "qa:recall@5 [rag_pipeline]" in {c["label"] for c in trends}
        docs_screenshot("history-runs.png", tab, shots)

        # pick two runs in the form: the Compare page
        page.select_option("select[name=a]", good)
        page.select_option("select[name=b]", worse)
        with page.expect_navigation():
            page.click("form.compare-form button")
        assert page.url.startswith(f"{base}/compare?")
        assert "regression" in page.locator("#metric-changes").inner_text()
        (deltas,) = charts(tab)
        assert deltas["label"].startswith("change of each compared mean")
        assert page.locator("#case-changes tbody tr").count() > 0
        page.locator("#deltas").scroll_into_view_if_needed()
        docs_screenshot("history-compare.png", tab, shots)

        # the newest run is the results file under review: its cases lead to the review pages
        page.goto(f"{base}/runs/{broken}")
        page.select_option("select[name=status]", "failed")
        with page.expect_navigation():
            page.click("form.filters button")
        assert page.locator("#cases tbody tr").count() == 1
        page.goto(f"{base}/runs/{broken}")
        docs_screenshot("history-run.png", tab, shots)
        with page.expect_navigation():
            page.click("a.review >> text=qa-015")
        assert page.url.startswith(f"{base}/case/")
        # an older run's case is shown from the store
        page.goto(f"{base}/runs/{good}")
        with page.expect_navigation():
            page.click("a.stored >> text=qa-001")
        assert "Scores" in page.locator("main").inner_text()
        only_local(tab)


def test_the_history_charts_need_no_javascript(history: History, chromium: Any) -> None:
    from pytest_ragproof.commands.review import build

    app, _ = build(args("--history", str(history.path)), TOKEN)
    context = chromium.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        with served(app) as base:
            page.goto(f"{base}/runs?token={TOKEN}")
            sizes = page.eval_on_selector_all(
                "svg.chart", "els => els.map(e => e.getBoundingClientRect().height)"
            )
            assert len(sizes) >= 7 and all(h > 0 for h in sizes)
    finally:
        context.close()


def test_the_runs_page_is_paginated(
    tab: Tab, history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ragproof.commands.review import build
    from pytest_ragproof.review import history_runs

    monkeypatch.setattr(history_runs, "PAGE_SIZE", 2)  # 3 runs: two pages
    app, _ = build(
        args(str(history.results), "--history", str(history.path), "--labels", "x.jsonl"), TOKEN
    )
    good, worse, broken = history.ids  # oldest to newest
    with served(app) as base:
        page = tab.page
        page.goto(f"{base}/runs?token={TOKEN}")
        rows = page.locator("#runs tbody tr")
        assert [rows.nth(i).get_attribute("data-run") for i in range(rows.count())] == [
            broken,
            worse,
        ]
        assert "page 1 of 2" in page.locator("nav.pager").inner_text()
        assert page.locator("nav.pager a[rel=prev]").count() == 0
        with page.expect_navigation():
            page.click("nav.pager a[rel=next]")
        assert page.url == f"{base}/runs?page=2"
        assert [r.get_attribute("data-run") for r in page.locator("#runs tbody tr").all()] == [good]
        assert "runs 3-3 of 3" in page.inner_text("body")
        assert page.locator("nav.pager a[rel=next]").count() == 0
        with page.expect_navigation():
            page.click("nav.pager a[rel=prev]")
        assert page.locator("#runs tbody tr").count() == 2
        page.goto(f"{base}/runs?page=99")  # past the end: the last page
        assert "page 2 of 2" in page.locator("nav.pager").inner_text()
