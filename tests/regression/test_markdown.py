"""render_markdown over hand-built results documents."""

from __future__ import annotations

from typing import Any

from pytest_ragproof.regression import compare
from pytest_ragproof.reporting.markdown import render_markdown
from tests.regression.factory import SHA_B, case, results, threshold

SECRETS = ("SECRET-QUESTION", "SECRET-ANSWER", "SECRET-REFERENCE", "SECRET-CONTEXT")


def texty(cid: str, status: str = "passed", **kw: Any) -> dict[str, Any]:
    """A case record carrying text in every text field (a non-redacted run)."""
    return case(
        cid,
        {"hit@5": 1.0 if status == "passed" else 0.0},
        status=status,
        question="SECRET-QUESTION about refunds?",
        expected_answer="SECRET-REFERENCE",
        answer="SECRET-ANSWER",
        reference_contexts=["SECRET-REFERENCE passage"],
        contexts=[{"id": "x", "document_id": None, "text": "SECRET-CONTEXT"}],
        **kw,
    )


def failure(metric: str, observed: float | None, reason: str = "missed") -> dict[str, Any]:
    return {
        "expression": f"qa:{metric}>=1",
        "metric": metric,
        "observed": observed,
        "bound": ">= 1",
        "reason": reason,
    }


def test_headline_thresholds_and_worst_cases_without_text() -> None:
    failing = texty("qa-2", "failed", failures=[failure("hit@5", 0.0)])
    missing = texty(
        "qa-3", "failed", failures=[failure("mrr", None, "the case has no expected_source_ids")]
    )
    doc = results(
        [texty("qa-1"), failing, missing, texty("qa-4", "error")],
        thresholds=[threshold("hit@5")],
        passed=False,
        notes=["dataset cases.frozen.json is not frozen (ragproof freeze)"],
    )
    text = render_markdown(doc)
    assert text.startswith(
        "### ❌ ragproof: FAILED\n\n**4 case result(s)**: 1 passed, 2 failed, 1 error"
    )
    assert "| `p` | qa | hit@5 | mean &gt;= 0 (aggregate) | 0.5 | 1 | ✅ pass |" in text
    assert "#### Worst cases (3 of 3 not passed)" in text
    worst = text[text.index("#### Worst cases") :]
    assert worst.index("`qa-4`") < worst.index("`qa-2`")  # errors first
    assert "| `p` | `qa-4` | qa | error | error `ValueError` |" in text
    assert "| `p` | `qa-2` | qa | failed | hit@5 = 0 (expected &gt;= 1) |" in text
    assert "mrr not available (the case has no expected\\_source\\_ids)" in text
    assert "- dataset cases.frozen.json is not frozen (ragproof freeze)" in text
    for secret in SECRETS:
        assert secret not in text
    assert "#### Against the baseline" not in text


def test_worst_limit_and_passing_headline() -> None:
    doc = results([texty(f"c{i}", "error") for i in range(5)], passed=True)
    text = render_markdown(doc, worst=2)
    assert text.startswith("### ✅ ragproof: passed\n")
    assert "#### Worst cases (2 of 5 not passed)" in text
    assert render_markdown(doc, worst=0).count("Worst cases") == 0


def test_ids_are_escaped_for_tables_and_code_spans() -> None:
    doc = results([case("a|b`c", status="error", pipeline="pipe_line*")], passed=False)
    text = render_markdown(doc)
    assert "| `pipe_line*` | ``a\\|b`c`` | qa | error |" in text


def test_aggregates_table_is_collapsed_and_per_kind() -> None:
    aggregates = [
        {
            "pipeline": "p",
            "selector": s,
            "metric": "recall@5",
            "n": 2,
            "n_error": 0,
            "n_missing": 0,
            "values": {"mean": 0.75, "min": 0.5, "p50": 0.75, "max": 1.0},
        }
        for s in ("*", "qa")
    ]
    text = render_markdown(results([case("a")], aggregates=aggregates))
    assert "<details><summary>Aggregates</summary>" in text
    assert "| `p` | qa | recall@5 | 2 | 0.750 | 0.500 | 0.750 | 1.000 | 0 | 0 |" in text
    assert "| `p` | \\* |" not in text


def test_baseline_section() -> None:
    base = results([case(f"c{i}", {"hit@5": 1.0}) for i in range(8)] + [case("old")])
    now_cases = [case(f"c{i}", {"hit@5": 0.0}, status="failed") for i in range(8)]
    now = results([*now_cases, case("fresh")], thresholds=[threshold("hit@5")], passed=False)
    now["baseline"] = {"path": "/ci/work/base.json", **compare(now, base).to_dict()}
    text = render_markdown(now)
    assert "#### Against the baseline `base.json`" in text
    assert (
        "Cases: 0 improved, 8 regressed, 1 new, 1 removed "
        "(case flips gate only with --ragproof-fail-on-case-regression)"
    ) in text
    assert "- regressed [`p`]: `c0`, `c1`," in text
    assert "- new [`p`]: `fresh`" in text and "- removed [`p`]: `old`" in text
    assert (
        "| `p` | qa | hit@5 | 8 | 1.000 | 0.000 | -1.000 | 0 | mcnemar-exact | 0.00781 | "
        "❌ **regression** |"
    ) in text


def test_baseline_refused_and_updated() -> None:
    base = results([case("a")])
    now = results([case("a")], sha=SHA_B)
    now["baseline"] = {"path": "base.json", **compare(now, base).to_dict()}
    text = render_markdown(now)
    assert (
        "❌ Not compared: the baseline was made from cases.frozen.json sha256 aaaaaaaaaaaa" in text
    )
    now["baseline"] = {"updated": "/ci/work/base.json"}
    assert "Baseline `base.json` written from this run." in render_markdown(now)


def test_redacted_run_says_so() -> None:
    text = render_markdown(results([case("a")], redacted=True))
    assert "- redacted run (--ragproof-redact)" in text


def test_a_metric_no_case_has_in_both_runs_is_named_once_not_a_row() -> None:
    """A metric with no data on either side is one 'not compared' line, not a table row
    (the baseline table showed a `latency_s ... no data` row), in Markdown and HTML."""
    from pytest_ragproof.reporting.html_sections import baseline as html_baseline

    base = results([case(f"c{i}", {"hit@5": 1.0}) for i in range(4)])
    now = results([case(f"c{i}", {"hit@5": 1.0}) for i in range(4)])
    section = compare(now, base).to_dict()
    section["aggregates"].append(
        {**section["aggregates"][0], "metric": "latency_s", "verdict": "no data", "n_paired": 0}
    )
    now["baseline"] = {"path": "base.json", **section}
    text = render_markdown(now)
    assert "- not compared (no case scored in both runs): latency\\_s" in text or (
        "- not compared (no case scored in both runs): latency_s" in text
    )
    assert "| latency_s |" not in text and "no data" not in text
    html = html_baseline(now["baseline"])
    assert "not compared (no case scored in both runs): latency_s" in html
    assert "no data" not in html
