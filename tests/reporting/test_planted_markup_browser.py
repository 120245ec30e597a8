"""Markup planted in every text of a results document stays text in the HTML report.

Every string of real results documents (a run compared with a baseline, a judged run) gets
the same markup appended: case ids, questions, answers, contexts, expected answers and
sources, judge reasons and claims, tags, metric names (also as keys), pipeline names,
dataset paths, notes, settings, versions, the git branch... In headless Chromium no planted
element or script exists in the DOM, before and after every case's details are opened,
and the planted text is on the page as text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.reporting.html import render_html
from tests.browser import Tab, needs_chromium
from tests.reporting.conftest import Runs
from tests.reporting.judged import Judged

pytestmark = needs_chromium

PLANT = (
    '<img src=x class="planted" onerror="window.__pwned=1">'
    '<script class="planted">window.__pwned=1</script><b class="planted">&amp;</b>'
)
# Dicts whose keys are names the report shows (metric names, settings, versions, reasons).
NAMED_KEYS = frozenset({"metrics", "settings", "versions", "not_judged", "by_question_type"})
# Fields the results schema allows a few fixed words or a pattern in (the format, a status,
# a case kind, a verdict, a digest): left as they are; every other string is planted.
FIXED_WORDS = frozenset(
    {"format", "schema", "status", "before", "now", "kind", "verdict", "change", "role", "sha256"}
)
PLANTED_DOM = """() => ({
  planted: document.querySelectorAll('.planted').length,
  scripts: document.querySelectorAll('script').length,
  images: document.querySelectorAll('img').length,
  pwned: typeof window.__pwned,
  shown: document.body.innerText.split('<b class="planted">').length - 1,
})"""


def planted(value: Any, key: str = "") -> Any:
    """``value`` with :data:`PLANT` after every string (and every name key)."""
    if isinstance(value, str):
        return value if key in FIXED_WORDS else value + PLANT
    if isinstance(value, list):
        return [planted(v, key) for v in value]
    if isinstance(value, dict):
        return {(k + PLANT if key in NAMED_KEYS else k): planted(v, k) for k, v in value.items()}
    return value


def check_page(tab: Tab, path: Path) -> None:
    tab.page.goto(path.as_uri())
    rows = tab.page.locator("#cases-table tbody tr.case")
    assert rows.count() > 0  # the script drew the cases: planted text broke nothing
    before = tab.js(PLANTED_DOM)
    for i in range(rows.count()):
        rows.nth(i).click()  # opens the case's details (question, answer, contexts, judges)
    after = tab.js(PLANTED_DOM)
    for found in (before, after):
        assert found["planted"] == 0 and found["images"] == 0, found
        assert found["scripts"] == 2 and found["pwned"] == "undefined", found
    assert after["shown"] > before["shown"] > 10  # the planted markup is shown as text
    assert tab.dialogs == [] and tab.errors == []
    assert [r for r in tab.requests if not r.startswith("file://")] == []


def test_planted_markup_in_a_baseline_run_stays_text(runs: Runs, tab: Tab, tmp_path: Path) -> None:
    document = planted(runs.with_baseline())
    document["notes"] = [f"note {PLANT}"]
    document.setdefault("git", {})["branch"] = f"main{PLANT}"
    path = tmp_path / "planted.html"
    path.write_text(render_html(document, source=f"results{PLANT}.json"), encoding="utf-8")
    html = path.read_text(encoding="utf-8")
    assert 'class="planted"' not in html.split('id="ragproof-data"')[0]
    for section in ("summary", "aggregates", "baseline", "cases"):
        assert f'<section id="{section}">' in html
    check_page(tab, path)


def test_planted_markup_in_a_judged_run_stays_text(
    judged: Judged, tab: Tab, tmp_path: Path
) -> None:
    document = planted(judged.full())
    assert isinstance(document.get("judges"), dict)
    path = tmp_path / "planted-judged.html"
    path.write_text(render_html(document), encoding="utf-8")
    assert '<section id="judges">' in path.read_text(encoding="utf-8")
    check_page(tab, path)


@pytest.mark.parametrize("field", ["question", "answer", "id", "pipeline"])
def test_planted_case_fields_are_on_the_page_as_text(
    runs: Runs, tab: Tab, tmp_path: Path, field: str
) -> None:
    document = runs.single()
    case = document["cases"][0]
    case[field] = f"{case[field]}{PLANT}"
    path = tmp_path / "one.html"
    path.write_text(render_html(document), encoding="utf-8")
    tab.page.goto(path.as_uri())
    tab.page.locator("#cases-table tbody tr.case").first.click()
    assert PLANT in tab.js("document.body.innerText")
    assert tab.js(PLANTED_DOM)["planted"] == 0
