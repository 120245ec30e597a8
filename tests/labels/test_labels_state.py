"""Digests, judged metrics and claims of a case; the labels that count against results."""

from __future__ import annotations

import hashlib
import json

from pytest_ragproof.labels import (
    JudgedClaim,
    Label,
    case_digest,
    current_labels,
    judged_claims,
    judged_metrics,
    label_for,
)
from tests.labels.records import SHA, case, results


def test_the_digest_is_the_canonical_json_of_what_the_judges_read() -> None:
    record = case("q1")
    expected = json.dumps(
        {
            "answer": "Paris is the capital.",
            "contexts": [{"id": "d1", "text": "Paris is the capital of France."}],
            "question": "question of q1?",
            "reference": "Paris.",
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert case_digest(record) == "sha256:" + hashlib.sha256(expected.encode()).hexdigest()


def test_the_digest_changes_with_what_the_judges_read_and_nothing_else() -> None:
    base = case_digest(case("q1"))
    assert case_digest({**case("q1"), "status": "failed", "metrics": {}}) == base
    assert case_digest({**case("q1"), "latency_s": 3.0, "nodeid": "x"}) == base
    assert case_digest(case("q1", answer="Lyon.")) != base
    reordered = case("q1")
    reordered["contexts"] = [*reordered["contexts"], {"id": "d2", "text": "x"}]
    swapped = case("q1")
    swapped["contexts"] = [{"id": "d2", "text": "x"}, *swapped["contexts"]]
    assert len({base, case_digest(reordered), case_digest(swapped)}) == 3  # rank order counts
    renamed = case("q1")
    renamed["contexts"][0]["id"] = "d7"
    assert case_digest(renamed) != base
    injection = case("q1", kind="injection")
    assert case_digest(injection) != case_digest({**injection, "adversarial_payload": "Other."})


def test_judged_metrics_are_those_with_a_score_in_the_judges_order() -> None:
    record = case(
        "q1",
        metrics={
            "injection_resisted_judged": 1.0,
            "hit@1": 1.0,
            "faithfulness": 0.5,
            "answer_correctness_precision": 0.5,
            "answer_correctness": 0.6,
        },
    )
    assert judged_metrics(record) == [
        ("faithfulness", "graded"),
        ("answer_correctness", "graded"),
        ("injection_resisted_judged", "binary"),
    ]
    assert judged_metrics(case("q2", metrics={"mrr": 1.0})) == []


def test_judged_claims_are_numbered_from_1_with_the_context_they_cite() -> None:
    record = case(
        "q1",
        claims=[
            {"claim": "Paris is the capital.", "verdict": "supported", "context": 1},
            {"claim": "Berlin is in Germany.", "verdict": "unsupported", "context": None},
        ],
    )
    assert judged_claims(record, "faithfulness") == [
        JudgedClaim(1, "Paris is the capital.", "supported", 1),
        JudgedClaim(2, "Berlin is in Germany.", "unsupported", None),
    ]
    assert judged_claims(record, "answer_relevancy") == []
    assert judged_claims(case("q2"), "faithfulness") == []


def _label(doc: dict[str, object], case_id: str, verdict: float | None, **kw: object) -> Label:
    cases = doc["cases"]
    assert isinstance(cases, list)
    record = next(c for c in cases if c["id"] == case_id)
    return label_for(doc, record, "faithfulness", verdict, time="2026-12-02T10:00:00Z", **kw)  # type: ignore[arg-type]


def test_the_latest_line_of_a_key_wins_and_null_withdraws() -> None:
    doc = results(case("q1"), case("q2"), case("q3"))
    labels = [
        _label(doc, "q1", 1, reviewer="ana"),
        _label(doc, "q1", 0, reviewer="ana"),  # changes her mind
        _label(doc, "q2", 1, reviewer="ana"),
        _label(doc, "q2", None, reviewer="ana"),  # undo
        _label(doc, "q1", 1, reviewer="bob"),
        _label(doc, "q3", None, reviewer="bob"),  # withdraws nothing given: still a key
    ]
    state = current_labels(labels, doc)
    assert [(x.reviewer, x.case_id, x.verdict) for x in state.fresh] == [
        ("ana", "q1", 0),
        ("bob", "q1", 1),
    ]
    assert state.withdrawn == 2
    assert state.stale == () and state.unmatched == ()
    assert state.reviewers() == ["ana", "bob"]
    assert {k: [x.verdict for x in v] for k, v in state.by_reviewer().items()} == {
        "ana": [0],
        "bob": [1],
    }
    assert state.label_of("bob", "q1", "rag", "faithfulness") is labels[4]
    assert state.label_of("bob", "q2", "rag", "faithfulness") is None
    assert [x.reviewer for x in state.for_case("q1", "rag")] == ["ana", "bob"]


def test_a_changed_answer_makes_labels_stale_and_another_dataset_too() -> None:
    before = results(case("q1"), case("q2"), case("q3"))
    labels = [_label(before, cid, 1, reviewer="ana") for cid in ("q1", "q2", "q3")]
    after = results(case("q1"), case("q2", answer="Lyon is the capital."), case("q3"))
    state = current_labels(labels, after)
    assert [x.case_id for x in state.fresh] == ["q1", "q3"]
    assert [(s.label.case_id, s.reason) for s in state.stale] == [("q2", "digest")]
    assert state.stale_counts() == {"digest": 1}
    other = results(case("q1"), case("q2"), case("q3"), sha="f" * 64)
    assert current_labels(labels, other).stale_counts() == {"dataset": 3}
    assert SHA != "f" * 64


def test_labels_of_cases_not_in_the_results_are_unmatched() -> None:
    doc = results(case("q1"), case("q2", pipeline="other"))
    labels = [_label(doc, "q1", 1, reviewer="ana"), _label(doc, "q2", 1, reviewer="ana")]
    only = results(case("q1"))
    state = current_labels(labels, only)
    assert [x.case_id for x in state.fresh] == ["q1"]
    assert [(x.case_id, x.pipeline) for x in state.unmatched] == [("q2", "other")]


def test_a_typed_case_reads_as_its_parsed_entry() -> None:
    """labels reads a case through the results model; a parsed entry and its model agree."""
    from pytest_ragproof.results.schema import results_model

    doc = results(case("q1"), case("q2", answer="Lyon."))
    typed = results_model(doc)
    for entry, model in zip(doc["cases"], typed.cases, strict=True):
        assert case_digest(model) == case_digest(entry)
        assert judged_metrics(model) == judged_metrics(entry)
        assert label_for(typed, model, "faithfulness", 1, "ana", time="2026-12-02T10:00:00Z") == (
            label_for(doc, entry, "faithfulness", 1, "ana", time="2026-12-02T10:00:00Z")
        )


def test_a_case_entry_the_model_refuses_is_one_clear_error() -> None:
    import pytest

    from pytest_ragproof.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        case_digest({**case("q1"), "answer": ["a secret answer"]})
    assert "case q1" in str(raised.value) and "field answer" in str(raised.value)
    assert "secret" not in str(raised.value)
