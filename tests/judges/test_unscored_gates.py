"""Aggregate gates over cases the judge could not score, in real judged pytest runs.

The scripted judge fails on two of the three qa cases: q3's requests get HTTP 500 past
the retries, q2's claims step a reply that is still malformed after its repair. Both
are error cases without a faithfulness score, so a faithfulness gate over the qa cases
was decided on q1 alone: its row says 2 cases were not scored and reads INCOMPLETE, not
PASS, in the terminal summary, the results file, the Markdown and HTML reports and
``ragproof history show``. A gate whose metric every case has (recall@5: a failed judge
takes no retrieval metric away) still passes with nothing left unscored.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

# Imported before pytester's in-process runs: a module first imported inside such a run
# is dropped from sys.modules after it, and SQLAlchemy does not survive a second import.
import pytest_ragproof.history.schema  # noqa: F401
from pytest_ragproof.cli import main
from tests.judge_stub import ScriptedJudge
from tests.llm_stub import Action, StubServer, reply, server_error
from tests.pytester_projects import load_json, run

GATE = "qa:faithfulness>=0.5"
WHOLE = "qa:recall@5>=0.5"


class TwoFailingCases:
    """The scripted judge, except q3 (Berlin: every request a 500) and q2's claims step
    (the Seine: JSON cut off mid-string, again after the repair)."""

    def __init__(self) -> None:
        self.judge = ScriptedJudge()

    def __call__(self, body: dict[str, Any]) -> Action:
        text = json.dumps(body)
        if "Berlin" in text:
            return server_error(500)
        if "ragproof judge step: answer-claims/" in text and "Seine" in text:
            return reply('{"claims": ["The Seine')
        return self.judge(body)


def _row(table: str, metric: str) -> str:
    (line,) = [ln for ln in table.splitlines() if re.search(rf" qa +{re.escape(metric)} ", ln)]
    return line


def _threshold_table(out: str) -> str:
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("pipeline ") and "verdict" in ln)
    end = next(i for i in range(start + 2, len(lines)) if not lines[i].startswith("rag_pipeline "))
    return "\n".join(lines[start:end])


def test_an_aggregate_gate_with_unscored_cases_is_incomplete_not_a_pass(
    project: pytest.Pytester,
    llm_stub: StubServer,
    mode: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_stub.set_handler(TwoFailingCases())
    result = run(
        project,
        mode,
        "--ragproof-judge-model=openai/stub-judge",
        f"--ragproof-judge-api-base={llm_stub.url}",
        "--ragproof-no-cache",
        "--ragproof-judge-retries=1",
        "--ragproof-judges=faithfulness",
        f"--ragproof-aggregate-threshold={GATE}",
        f"--ragproof-aggregate-threshold={WHOLE}",
        "--ragproof-report=results.json",
        "--ragproof-markdown=report.md",
        "--ragproof-html=report.html",
        "--ragproof-history=h.sqlite",
    )
    out = result.stdout.str()
    assert result.ret == 1
    assert "cases: 2 passed, 0 failed, 2 error" in out
    table = _threshold_table(out)
    assert table.splitlines()[0].split()[-3:] == ["verdict", "not", "scored"]
    assert re.search(
        r"faithfulness +1 +1\.000 +1\.000 +mean >= 0\.5 \(aggregate\) +INCOMPLETE +2 error$",
        _row(table, "faithfulness"),
    ), table
    assert re.search(r"\(aggregate\) +PASS$", _row(table, "recall@5")), table
    assert "PASS" not in _row(table, "faithfulness")
    assert f"ragproof gate FAILED: aggregate {GATE} [rag_pipeline]" in out
    assert "incomplete: 2 case(s) of its population not scored (error)" in out

    doc = load_json(project.path / "results.json")
    rows = {t["expression"]: t for t in doc["thresholds"]}
    assert rows[GATE]["verdict"] == "incomplete"
    assert rows[GATE]["n"] == 1 and rows[GATE]["n_error"] == 2
    assert rows[WHOLE]["verdict"] == "pass" and rows[WHOLE]["n_error"] == 0
    assert rows["qa:hit@5>=1"]["n_error"] == 2  # a case threshold's error cases
    assert doc["passed"] is False

    md = (project.path / "report.md").read_text(encoding="utf-8")
    (md_row,) = [ln for ln in md.splitlines() if "| faithfulness | mean &gt;= 0.5" in ln]
    assert md_row.endswith("| 1 | ❌ incomplete | 2 error |"), md_row
    assert "not scored |" in md

    html = (project.path / "report.html").read_text(encoding="utf-8")
    (html_row,) = re.findall(
        r"<tr>(?:(?!</tr>).)*qa:faithfulness&gt;=0\.5(?:(?!</tr>).)*</tr>", html
    )
    assert ">incomplete</span>" in html_row and ">2 error</td>" in html_row, html_row
    assert "<th>not scored</th>" in html

    capsys.readouterr()
    assert main(["history", "show", "latest", "--store", str(project.path / "h.sqlite")]) == 0
    shown = _threshold_table(capsys.readouterr().out)
    assert shown == table
