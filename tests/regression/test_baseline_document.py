"""What ``--ragproof-baseline-update`` writes, and the terminal lines of a comparison."""

from __future__ import annotations

import copy

from pytest_ragproof.regression import compare
from pytest_ragproof.verdict.baseline import baseline_document, summary_lines
from tests.regression.factory import case, results, threshold


def test_volatile_timing_fields_are_stripped_without_touching_the_input() -> None:
    doc = results(
        [case("a", {"hit@5": 1.0, "latency_s": 0.2})],
        thresholds=[threshold("hit@5"), threshold("latency_s", "*")],
        aggregates=[
            {"pipeline": "p", "selector": "*", "metric": "latency_s", "n": 1},
            {"pipeline": "p", "selector": "*", "metric": "hit@5", "n": 1},
        ],
        baseline={"path": "old.json"},
    )
    before = copy.deepcopy(doc)
    out = baseline_document(doc)
    assert doc == before
    assert "baseline" not in out
    (record,) = out["cases"]
    assert "latency_s" not in record and record["metrics"] == {"hit@5": 1.0}
    assert [a["metric"] for a in out["aggregates"]] == ["hit@5"]
    assert [t["metric"] for t in out["thresholds"]] == ["hit@5"]
    assert out["format"] == "ragproof.results/1" and out["passed"] is True


def test_summary_lines_list_flips_and_the_table() -> None:
    ids = [f"c{i:02d}" for i in range(14)]
    base = results([case(i, {"hit@5": 1.0}) for i in ids], thresholds=[threshold("hit@5")])
    now = results(
        [case(i, {"hit@5": 0.0}, status="failed") for i in ids], thresholds=[threshold("hit@5")]
    )
    lines = summary_lines(compare(now, base), "base.json")
    assert lines[0] == "ragproof baseline base.json (alpha 0.05):"
    assert lines[1] == "  cases [p]: 0 improved, 14 regressed, 0 new, 0 removed"
    assert lines[2].startswith("    regressed: c00 (passed -> failed), ")
    assert lines[2].endswith("c09 (passed -> failed), … (+4)")
    assert any("REGRESSION" in line and "hit@5" in line and "-1.000" in line for line in lines)
    assert lines[-1].endswith("(--ragproof-fail-on-case-regression makes them)")
