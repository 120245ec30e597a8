"""The quickstart's HTML report of a run compared with a baseline, in headless Chromium.

Issue 36's defect: ``pytest conftest_examples/quickstart --ragproof-report=b.json``, then
the weak pipeline with ``--ragproof-baseline=b.json --ragproof-html=r.html``; the page's
case data was the baseline comparison (the Cases table empty, ``TypeError ... reading
'forEach'``). The page must draw every case, show the comparison, and throw nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.browser import Tab, needs_chromium
from tests.quickstart.conftest import copy_example, run_python

pytestmark = needs_chromium


def test_the_report_of_a_baseline_run_draws_its_cases(tmp_path: Path, tab: Tab) -> None:
    project = copy_example(tmp_path)
    strong = run_python(
        ["-m", "pytest", "-q", "-p", "no:randomly", "--ragproof-report=b.json"], project
    )
    assert strong.returncode == 0, strong.stdout[-2000:]
    weak = run_python(
        [
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "--quickstart-pipeline=weak",
            "--ragproof-baseline=b.json",
            "--ragproof-html=r.html",
            "--ragproof-report=w.json",
        ],
        project,
    )
    assert weak.returncode == 1, weak.stdout[-2000:]  # the weak pipeline fails its gates
    cases = json.loads((project / "w.json").read_text(encoding="utf-8"))["cases"]
    tab.page.goto((project / "r.html").as_uri())
    assert tab.errors == []
    shown = tab.js("document.querySelectorAll('#cases-table tbody tr.case').length")
    assert shown == len(cases) == 39
    assert tab.js("document.getElementById('case-count').textContent") == "39 of 39 case(s)"
    baseline = tab.js("document.querySelector('#baseline').innerText")
    assert "Compared with" in baseline and "Case flips" in baseline
    tab.page.locator("#cases-table tbody tr.case").first.click()
    assert tab.js("document.querySelectorAll('#cases-table tr.details').length") >= 1
    assert tab.errors == []
