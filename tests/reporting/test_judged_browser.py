"""A judged run's HTML report in real headless Chromium: the case panel draws the reasons.

Chromium is driven by Playwright (tests/browser.py). Skipped only when Debian's
``chromium`` is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

from pathlib import Path

from pytest_ragproof.reporting.html import render_html
from tests.browser import Tab, needs_chromium
from tests.reporting.judged import SECRET_ANSWER, Judged

pytestmark = needs_chromium

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def panel(browser: Tab, case_id: str) -> str:
    browser.page.click(f"#cases-table tr.case[data-key='<python>::{case_id}']")
    text: str = browser.js("document.querySelector('tr.details .run').innerText")
    return text


def test_judged_case_panels_in_chromium(judged: Judged, tmp_path: Path, tab: Tab) -> None:
    path = tmp_path / "judged.html"
    path.write_text(render_html(judged.full()), encoding="utf-8")
    browser = tab
    browser.page.goto(path.as_uri())
    paris = panel(browser, "qa-paris")
    assert "LLM judges (6, 7 call(s), 0 cached, 840 tokens, cost unknown)" in paris
    assert "faithfulness faithfulness = 0.5" in paris
    assert "supported Paris is the capital of France. \u2190 context 1 (d1)" in paris
    assert f"unsupported {SECRET_ANSWER}" in paris
    assert "precision 0.5 \u00b7 recall 1" in paris
    assert "claims of the expected answer (1)" in paris
    # verdicts are coloured by what they do to the score
    tones = browser.js(
        "[...document.querySelectorAll('tr.details .judge[data-judge=faithfulness] "
        ".verdict')].map(v => v.className)"
    )
    assert tones == ["verdict good", "verdict bad"]
    browser.js("document.querySelector('tr.details .judges').scrollIntoView()")
    shot = browser.screenshot(ARTIFACTS / "report-judged-case.png")
    assert shot.startswith(b"\x89PNG\r\n\x1a\n")

    sky = panel(browser, "qa-sky")
    assert "irrelevant context 1 (d2)" in sky and "\nrelevant context 2 (d9)" in sky
    assert "missing from answer It is bright." in sky

    empty = panel(browser, "qa-empty")
    assert "not judged: the answer makes no claim that could be checked (no_claims)" in empty

    boom = panel(browser, "qa-boom")
    assert (
        "judge step 'faithfulness/1' failed: ProviderError (InternalServerError, HTTP 500"
    ) in boom

    # the judges section is on the page and nothing was fetched or thrown
    assert browser.js("document.querySelector('#judges h2').textContent") == "LLM judges"
    assert browser.requests == [path.as_uri()]
    assert browser.errors == []


def test_redacted_judged_panel_in_chromium(judged: Judged, tmp_path: Path, tab: Tab) -> None:
    path = tmp_path / "redacted.html"
    path.write_text(render_html(judged.redacted()), encoding="utf-8")
    browser = tab
    browser.page.goto(path.as_uri())
    paris = panel(browser, "qa-paris")
    assert "faithfulness faithfulness = 0.5" in paris
    assert "reasons left out (--ragproof-redact)" in paris
    assert "Paris is the capital" not in paris and SECRET_ANSWER not in paris
    assert browser.errors == []


# Every label of every chart and where Chromium drew it, in the chart's own coordinates.
CHART_LABELS = """[...document.querySelectorAll('svg.chart')].map(svg => ({
  title: svg.getAttribute('aria-label'),
  width: svg.viewBox.baseVal.width,
  texts: [...svg.querySelectorAll(':scope > text')].map(t => {
    const box = t.getBBox();
    return {text: t.textContent, left: box.x, right: box.x + box.width};
  }),
}))"""


def test_chart_labels_are_whole_and_abstained_is_drawn_per_kind(
    judged: Judged, tmp_path: Path, tab: Tab
) -> None:
    path = tmp_path / "charts.html"
    path.write_text(render_html(judged.full()), encoding="utf-8")
    browser = tab
    browser.page.goto(path.as_uri())
    # open every folded selector so each chart is laid out
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    every_chart = browser.js(CHART_LABELS)
    for chart in every_chart:
        for text in chart["texts"]:
            # nothing drawn outside the chart: a label cut on the left, a value on the right
            assert text["left"] >= 0 and text["right"] <= chart["width"], (chart["title"], text)
    # the means per metric (the report's other pictures come before them)
    charts = [c for c in every_chart if c["title"].startswith("mean per metric")]
    assert [c["title"] for c in charts][:2] == [
        "mean per metric, all cases",
        "mean per metric, selector qa",
    ]
    everything = {t["text"] for t in charts[0]["texts"]}
    assert {"answer_correctness_precision", "injection_resisted_judged"} <= everything
    # abstaining is right on unanswerable cases and wrong on qa cases: never averaged
    assert "abstained" not in everything and "abstained_judged" not in everything
    assert {
        "abstained (qa)",
        "abstained (unanswerable)",
        "abstained (injection)",
        "abstained_judged (qa)",
    } <= everything
    browser.js("document.querySelector('svg.chart').scrollIntoView()")
    shot = browser.screenshot(ARTIFACTS / "report-chart.png")
    assert shot.startswith(b"\x89PNG\r\n\x1a\n")
    assert browser.errors == []
