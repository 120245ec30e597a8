"""A regression names the cases that got worse most (issue 29, item 3), and a metric with
no data on either side is not a table row (issue 29, item 12)."""

from __future__ import annotations

import pytest

from pytest_ragproof.regression import compare
from pytest_ragproof.reporting.markdown import render_markdown
from pytest_ragproof.verdict.baseline import summary_lines
from tests.pytester_projects import behave, load_json, run
from tests.regression.conftest import QA_IDS, update
from tests.regression.factory import case, results, threshold

IDS = [f"c{i:02d}" for i in range(60)]
# hit@5 (a mean over repeats) falls from 1 to 0.667 on 20 of the 60 cases.
WORSE = {cid: 0.667 for cid in IDS[10:30]}


def _runs() -> tuple[dict[str, object], dict[str, object]]:
    base = results([case(cid, {"hit@5": 1.0}) for cid in IDS])
    now = results([case(cid, {"hit@5": WORSE.get(cid, 1.0)}) for cid in IDS])
    return now, base


def test_a_regression_names_the_cases_that_got_worse() -> None:
    now, base = _runs()
    comparison = compare(now, base)
    (row,) = comparison.regressions
    assert row.label == "qa:hit@5"
    assert [cid for cid, _, _ in row.worst] == IDS[10:15]  # five, by drop then id
    assert row.worst[0] == ("c10", 1.0, 0.667)
    named = "c10 1 -> 0.667, c11 1 -> 0.667, c12 1 -> 0.667, c13 1 -> 0.667, c14 1 -> 0.667"
    note = f"regression qa:hit@5 [p]: the cases that got worse most: {named}"
    assert note in comparison.notes
    # The results' regression row, the terminal summary and the Markdown report.
    (data,) = [a for a in comparison.to_dict()["aggregates"] if a["failed"]]
    assert data["worst"][0] == {"id": "c10", "baseline": 1.0, "now": 0.667}
    assert len(data["worst"]) == 5
    assert f"  note: {note}" in summary_lines(comparison, "base.json")
    document = {**now, "baseline": {"path": "base.json", **comparison.to_dict()}}
    markdown = render_markdown(document)
    # (Markdown escapes '>' in notes: GitHub shows '->'.)
    assert "the cases that got worse most: c10 1 -&gt; 0.667, c11 1 -&gt; 0.667" in markdown


def test_the_worst_cases_follow_the_metrics_direction() -> None:
    # abstained on qa cases: lower is better, so a rise is the worsening.
    base = results([case(cid, {"abstained": 0.0}) for cid in IDS])
    now = results([case(cid, {"abstained": 1.0 if cid in WORSE else 0.0}) for cid in IDS])
    (row,) = compare(now, base).regressions
    assert row.worst[0] == ("c10", 0.0, 1.0)


def test_a_metric_without_data_is_one_line_not_a_row() -> None:
    now, base = _runs()
    rows = [threshold("faithfulness")]  # scored by neither run
    lines = summary_lines(compare({**now, "thresholds": rows}, base), "base.json")
    assert not any("no data" in line for line in lines)
    assert "  not compared (no case scored in both runs): qa:faithfulness [p]" in lines
    assert any("qa" in line and "hit@5" in line and "REGRESSION" in line for line in lines)


def test_latency_left_out_of_the_baseline_is_named_with_that_reason() -> None:
    _, base = _runs()  # as a written baseline: no timings
    rows = [threshold("latency_s")]
    now = results([case(cid, {"hit@5": 1.0, "latency_s": 0.2}) for cid in IDS], thresholds=rows)
    lines = summary_lines(compare(now, base), "base.json")
    assert (
        "  note: qa:latency_s [p] not compared: timings depend on the machine that ran them, "
        "so a baseline never holds them"
    ) in lines
    assert not any("no case scored in both runs" in line for line in lines)


def test_a_gated_run_names_its_worse_cases(project: pytest.Pytester) -> None:
    update(project, [])
    behave(project, {cid: "half" for cid in QA_IDS[:8]})  # recall@5 1 -> 0.5 on 8 cases
    result = run(
        project,
        [],
        "--ragproof-case-threshold=none",
        "--ragproof-baseline=base.json",
        "--ragproof-regression-tolerance=qa:recall@5=0.1",
        "--ragproof-report=r.json",
        "--ragproof-markdown=r.md",
    )
    assert result.ret == 1
    named = ", ".join(f"{cid} 1 -> 0.5" for cid in QA_IDS[:5])
    result.stdout.fnmatch_lines(
        [
            "*ragproof baseline base.json*",
            f"*note: regression qa:recall@5 [[]rag_pipeline[]]: the cases that got worse most: "
            f"{named}*",
            "*ragproof gate FAILED: regression qa:recall@5*",
        ]
    )
    (row,) = [
        a for a in load_json(project.path / "r.json")["baseline"]["aggregates"] if a["failed"]
    ]
    assert [w["id"] for w in row["worst"]] == QA_IDS[:5]
    markdown = (project.path / "r.md").read_text(encoding="utf-8")
    assert named.replace("->", "-&gt;") in markdown
