"""The history store on SQLite and on a real PostgreSQL server: adding runs once, the runs
list, naming a run, trends with the gate's bound, one run's cases, two runs compared,
and the schema version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.errors import HistoryError
from pytest_ragproof.history.queries import (
    compare_runs,
    headline_trends,
    list_runs,
    resolve_run,
    run_cases,
    trend,
)
from pytest_ragproof.history.store import Store, open_store
from pytest_ragproof.history.target import resolve_target
from tests.history.runs import QA, document


def _open(value: str) -> Store:
    return open_store(resolve_target(value, Path.cwd()))


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    """Three runs: good, a retrieval regression on six qa cases, one case erroring."""
    good = document()
    worse = document(halved={f"qa-{n:03d}" for n in range(1, 7)}, answer_suffix=" now")
    broken = document(errors={"qa-016"}, missing={"qa-015"})
    return {"good": good, "worse": worse, "broken": broken}


def test_a_run_is_added_once_with_its_cases_and_aggregates(
    store_value: str, docs: dict[str, dict[str, Any]]
) -> None:
    with _open(store_value) as store:
        first = store.add(docs["good"], "good.json")
        again = store.add(docs["good"], "copy-of-good.json")
        runs = list_runs(store)
        detail = run_cases(store, first.run_id)
    assert first.new and first.run_id == docs["good"]["run_id"]
    assert not again.new and again.run_id == first.run_id
    assert [r.run_id for r in runs] == [first.run_id]
    assert runs[0].n_cases == QA + 3 and runs[0].passed and runs[0].source == "good.json"
    assert runs[0].datasets[0]["sha256"] == docs["good"]["datasets"][0]["sha256"]
    assert len(detail.cases) == QA + 3
    by_id = {c.case_id: c for c in detail.cases}
    recorded = {c["id"]: c for c in docs["good"]["cases"]}
    assert by_id["qa-001"].scores == recorded["qa-001"]["metrics"]
    assert by_id["qa-001"].answer == recorded["qa-001"]["answer"]
    assert by_id["un-1"].kind == "unanswerable" and by_id["un-1"].question_type == "out_of_scope"
    gate = next(a for a in detail.aggregates if a["selector"] == "qa" and a["metric"] == "recall@5")
    assert gate["bound"] == ">= 0.8" and gate["verdict"] == "pass" and gate["n"] == QA
    assert gate["mean"] == pytest.approx(1.0)


def test_runs_are_listed_newest_first_and_named_by_id_prefix_or_position(
    store_value: str, docs: dict[str, dict[str, Any]]
) -> None:
    with _open(store_value) as store:
        ids = [store.add(docs[k], f"{k}.json").run_id for k in ("good", "worse", "broken")]
        listed = [r.run_id for r in list_runs(store)]
        assert listed[0] == ids[2] and set(listed) == set(ids)
        assert [r.run_id for r in list_runs(store, limit=1)] == [listed[0]]
        assert resolve_run(store, "latest").run_id == listed[0]
        assert resolve_run(store, "-1").run_id == listed[0]
        assert resolve_run(store, "-3").run_id == listed[2]
        assert resolve_run(store, ids[1]).run_id == ids[1]
        assert resolve_run(store, ids[1][:-2]).run_id == ids[1]
        with pytest.raises(HistoryError, match="holds 3 run"):
            resolve_run(store, "-4")
        with pytest.raises(HistoryError, match="no run 'nope'"):
            resolve_run(store, "nope")
        with pytest.raises(HistoryError, match="ambiguous"):
            resolve_run(store, "2")  # every run id starts with the year


def test_a_trend_gives_each_runs_mean_oldest_first_with_the_gate_bound(
    store_value: str, docs: dict[str, dict[str, Any]]
) -> None:
    with _open(store_value) as store:
        for k in ("good", "worse", "broken"):
            store.add(docs[k], f"{k}.json")
        (series,) = trend(store, "qa:recall@5")
        (last_two,) = trend(store, "qa:recall@5", last=2)
        assert trend(store, "qa:recall@5", pipeline="other") == []
        assert trend(store, "qa:faithfulness") == []  # not measured: no invented points
    assert series.pipeline == "rag_pipeline" and series.selector == "qa"
    means = [p.mean for p in series.points]
    # worse: 6 of 16 qa cases at 0.5; broken: one case at 0, one errored (not counted).
    assert means == pytest.approx([1.0, 1 - 6 * 0.5 / QA, 14 / 15])
    assert [p.n for p in series.points] == [QA, QA, QA - 1]
    assert series.bound == ">= 0.8" and series.bound_value == (">=", 0.8)
    assert [p.run_id for p in last_two.points] == [p.run_id for p in series.points[1:]]


def test_headline_trends_give_every_headline_and_gated_metric_in_one_query(
    store_value: str, docs: dict[str, dict[str, Any]]
) -> None:
    gated = document(thresholds=("qa:recall@5>=0.8", "qa:ndcg@5>=0.5"))
    with _open(store_value) as store:
        assert headline_trends(store) == []  # an empty store has no trend
        for k in ("good", "worse", "broken"):
            store.add(docs[k], f"{k}.json")
        store.add(gated, "gated.json")
        every = headline_trends(store)
        newest_two = headline_trends(store, last=2)
        assert headline_trends(store, last=1)[-1].metric == "ndcg@5"
        one = {(s.selector, s.metric): s for s in every}
        (alone,) = trend(store, "qa:recall@5")
    keys = [(s.selector, s.metric) for s in every]
    # the headline metrics in their order, then the metric only a gate named
    assert keys == [
        ("qa", "hit@5"),
        ("qa", "recall@5"),
        ("qa", "mrr"),
        ("qa", "token_f1"),
        ("qa", "abstained"),
        ("unanswerable", "abstained"),
        ("injection", "injection_resisted"),
        ("qa", "ndcg@5"),
    ]
    recall = one[("qa", "recall@5")]
    assert recall.points == alone.points and len(recall.points) == 4
    assert recall.bound_value == (">=", 0.8)
    # a gate named ndcg@5 in the newest run only: its whole trend, the bound on that run
    ndcg = one[("qa", "ndcg@5")]
    assert len(ndcg.points) == 4 and ndcg.bound == ">= 0.5"
    assert [p.bound for p in ndcg.points] == [None, None, None, ">= 0.5"]
    assert ndcg.points[-1].verdict == "pass"
    assert [len(s.points) for s in newest_two if s.metric == "hit@5"] == [2]


def test_two_runs_compare_as_a_baseline_comparison_does(
    store_value: str, docs: dict[str, dict[str, Any]]
) -> None:
    with _open(store_value) as store:
        a = store.add(docs["good"], "good.json").run_id
        b = store.add(docs["broken"], "broken.json").run_id
        result = compare_runs(store, a, b)
        worse = compare_runs(store, a, store.add(docs["worse"], "worse.json").run_id)
    flips = {(f.id, f.change) for f in result.comparison.flips}
    assert flips == {("qa-015", "regressed"), ("qa-016", "regressed")}
    assert result.lines[0] == f"ragproof baseline {a} (alpha 0.05):"
    assert "  cases [rag_pipeline]: 0 improved, 2 regressed, 0 new, 0 removed" in result.lines
    # Six of sixteen recall values halved: a significant drop (Wilcoxon), a gate failure.
    (recall,) = [x for x in worse.comparison.aggregates if x.label == "qa:recall@5"]
    assert recall.verdict == "regression" and not worse.comparison.passed
    assert any(g.startswith("regression qa:recall@5") for g in worse.comparison.gate_failures)
    diffs = {d.case_id: d for d in worse.cases}
    assert diffs["qa-001"].scores["recall@5"] == (1.0, 0.5)
    assert diffs["qa-001"].answer_b is not None and diffs["qa-001"].answer_b.endswith(" now")
    assert "latency_s" not in diffs["qa-001"].scores


def test_a_store_newer_than_the_code_is_refused(store_value: str) -> None:
    import sqlalchemy as sa

    from pytest_ragproof.history.schema import SCHEMA_VERSION

    with _open(store_value) as store, store.writing() as conn:
        conn.execute(sa.update(store.t.schema_version).values(version=SCHEMA_VERSION + 1))
    with pytest.raises(HistoryError, match=f"schema version {SCHEMA_VERSION + 1}, newer than"):
        _open(store_value)


def test_an_empty_store_is_migrated_from_version_zero(store_value: str) -> None:
    import sqlalchemy as sa

    from pytest_ragproof.history.schema import SCHEMA_VERSION

    with _open(store_value) as store, store.reading() as conn:
        version = conn.execute(sa.text("SELECT version FROM schema_version")).scalar()
        names = set(sa.inspect(conn).get_table_names())
    assert version == SCHEMA_VERSION
    assert {"schema_version", "runs", "case_results", "aggregates"} <= names
