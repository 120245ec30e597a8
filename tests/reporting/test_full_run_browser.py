"""The HTML report of a run with everything in it, in real headless Chromium.

A run compared with a baseline, with repeats (one case flaky), every judge (the
scripted judge on 127.0.0.1) and two shards merged by ``ragproof merge``; its report
written by ``ragproof report -f html``, and the report a baseline run writes itself
(``--ragproof-html``). Every section must have its rows and the page no script error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import Tab, needs_chromium
from tests.judge_stub import ScriptedJudge
from tests.llm_stub import StubServer
from tests.reporting.conftest import Runs, run_plugin

pytestmark = needs_chromium

ROWS = "#cases-table tbody tr.case"
CASE_IDS = ["inj-1", "qa-conv", "qa-distract", "qa-simple", "qa-two", "un-1"]
# Per section: its table rows (body rows) and its charts.
SECTIONS = """() => [...document.querySelectorAll('main > section')].map(s => ({
  id: s.id,
  rows: s.querySelectorAll('table:not(#cases-table) tbody tr').length,
  charts: s.querySelectorAll('svg').length,
}))"""


def ragproof(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_ragproof", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def everything(runs: Runs, llm_stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The report of a sharded, repeated, judged run with a baseline, merged."""
    runs.with_baseline()  # writes base.json (a better run)
    project = runs.project
    llm_stub.set_handler(ScriptedJudge())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")  # litellm wants one
    shards = []
    for k in (1, 2):
        out = f"shard{k}.json"
        proc = run_plugin(
            project,
            f"--ragproof-shard={k}/2",
            "--ragproof-repeat=2",
            "--ragproof-judges=all",
            "--ragproof-judge-model=openai/stub-judge",
            f"--ragproof-judge-api-base={llm_stub.url}",
            "--ragproof-judge-retries=0",
            "--ragproof-no-cache",
            "--ragproof-baseline=base.json",
            f"--ragproof-report={out}",
            variant="flaky",
        )
        assert (project / out).exists(), proc.stdout + proc.stderr
        shards.append(out)
    # The merge gates with its own configuration: the shards' baseline given again.
    merged = ragproof(
        project, "merge", *shards, "-o", "merged.json", "--ragproof-baseline=base.json"
    )
    assert merged.returncode == 1, merged.stdout + merged.stderr  # cases failed
    assert "judges (openai/stub-judge)" in merged.stdout
    report = ragproof(project, "report", "merged.json", "-f", "html", "-o", "merged.html")
    assert report.returncode == 0, report.stderr
    return project / "merged.html"


def sections(tab: Tab) -> dict[str, tuple[int, int]]:
    found = tab.page.evaluate(SECTIONS)
    return {s["id"]: (s["rows"], s["charts"]) for s in found}


def test_a_run_with_baseline_repeats_judges_and_shards_draws_every_section(
    everything: Path, tab: Tab
) -> None:
    tab.page.goto(everything.as_uri())
    ids = tab.js(f"[...document.querySelectorAll('{ROWS}')].map(r => r.firstChild.textContent)")
    assert ids == CASE_IDS
    assert tab.js("document.getElementById('case-count').textContent") == "6 of 6 case(s)"
    assert tab.js("[...document.querySelectorAll('#kind option')].length") == 4  # all + kinds
    drawn = sections(tab)
    assert list(drawn) == [
        "summary",
        "flaky",
        "pass-fail",
        "aggregates",
        "distributions",
        "judges",
        "components",
        "baseline",
        "cases",
    ]
    for sid in ("summary", "flaky", "aggregates", "judges", "components", "baseline"):
        assert drawn[sid][0] > 0, f"section {sid} has no rows"
    for sid in ("pass-fail", "aggregates", "distributions", "baseline"):
        assert drawn[sid][1] > 0, f"section {sid} has no chart"
    assert "qa-two" in tab.js("document.getElementById('flaky').innerText")
    # a case opens with its judges' scores
    tab.page.click(f"{ROWS}[data-key='cases.frozen.json::qa-simple']")
    assert "LLM judges" in tab.js("document.querySelector('tr.details').innerText")
    assert tab.errors == []
    assert [c for c in tab.console if c.startswith("error")] == []


def test_the_report_a_baseline_run_writes_draws_its_cases(runs: Runs, tab: Tab) -> None:
    runs.with_baseline()  # a run with --ragproof-baseline and --ragproof-html=baseline.html
    tab.page.goto((runs.project / "baseline.html").as_uri())
    ids = tab.js(f"[...document.querySelectorAll('{ROWS}')].map(r => r.firstChild.textContent)")
    assert ids == CASE_IDS
    assert sections(tab)["baseline"][0] > 0
    assert tab.errors == []
    assert [c for c in tab.console if c.startswith("error")] == []
