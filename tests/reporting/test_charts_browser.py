"""The HTML report's pictures in real headless Chromium (Playwright, tests/browser.py).

Every chart is drawn with a size, no text of it reaches outside its SVG's viewBox (the
browser's own measure of the drawn text, ``getBBox``), and the charts are the same
with JavaScript switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragproof.reporting.html import render_html
from tests.browser import Tab, needs_chromium
from tests.reporting.conftest import Runs

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = needs_chromium

# Per chart: its label, drawn size, viewBox, and every text element whose drawn box
# leaves the viewBox (with its box). Hidden charts (a folded <details>) are opened first.
MEASURE = """() => {
  for (const d of document.querySelectorAll('details')) d.open = true;
  return [...document.querySelectorAll('main svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const out = [];
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > vb.width + 0.5
          || b.y + b.height > vb.height + 0.5) {
        out.push([t.textContent, b.x, b.y, b.width, b.height]);
      }
    }
    return {label: svg.getAttribute('aria-label'), width: box.width, height: box.height,
            vb: [vb.width, vb.height], texts: svg.querySelectorAll('text').length,
            outside: out,
            section: svg.closest('section') ? svg.closest('section').id : null};
  });
}"""


@pytest.fixture(scope="module")
def reports(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("charts")
    out = {}
    for name, results in (("multi", runs.multi()), ("baseline", runs.with_baseline())):
        out[name] = folder / f"{name}.html"
        out[name].write_text(render_html(results), encoding="utf-8")
    return out


def measure(page: Any) -> list[dict[str, Any]]:
    charts: list[dict[str, Any]] = page.evaluate(MEASURE)
    return charts


def check(charts: list[dict[str, Any]]) -> None:
    assert charts
    for chart in charts:
        assert chart["width"] > 0 and chart["height"] > 0, chart["label"]
        assert chart["width"] == pytest.approx(chart["vb"][0], abs=1), chart["label"]
        assert chart["texts"] > 0
        assert chart["outside"] == [], (chart["label"], chart["outside"])


def test_every_chart_is_drawn_whole(reports: dict[str, Path], tab: Tab, shots: Path) -> None:
    tab.page.goto(reports["multi"].as_uri())
    charts = measure(tab.page)
    check(charts)
    by_section: dict[str, int] = {}
    for chart in charts:
        by_section[chart["section"]] = by_section.get(chart["section"], 0) + 1
    assert by_section["pass-fail"] == 2
    assert by_section["distributions"] >= 20  # a histogram per metric and kind
    assert by_section["aggregates"] >= 4
    labels = {c["label"] for c in charts}
    assert "distribution of hit@5, qa cases" in labels
    assert tab.errors == [] and all(r.startswith("file:") for r in tab.requests)
    tab.screenshot(shots / "report-multi.png")  # kept in the test's folder for a look

    tab.page.goto(reports["baseline"].as_uri())
    charts = measure(tab.page)
    check(charts)
    (changes,) = [c for c in charts if c["section"] == "baseline"]
    assert changes["label"] == "change of each compared mean against the baseline"


def test_the_charts_need_no_javascript(reports: dict[str, Path], chromium: Browser) -> None:
    context = chromium.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        page.goto(reports["baseline"].as_uri())
        # the per-case table is the script's; the charts are not
        assert page.locator("#cases-table tbody tr").count() == 0
        sizes = page.eval_on_selector_all(
            "main svg.chart",
            "els => els.map(e => e.getBoundingClientRect()) .map(b => [b.width, b.height])",
        )
        assert len(sizes) >= 4 and all(w > 0 and h > 0 for w, h in sizes)
        assert page.locator("#baseline svg.chart").count() == 1
        assert page.locator("#pass-fail svg.chart").count() == 2
    finally:
        context.close()
