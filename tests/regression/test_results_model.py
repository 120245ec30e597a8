"""The typed results models (``results/models.py``): the read API of every consumer.

A written results file does not depend on them (its bytes are the same as before the
models), they name every key the writer writes, and they keep every key they do not
name (the format is open).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.results.document import dumps, read_model, write_results
from pytest_ragproof.results.models import Case, Results
from pytest_ragproof.results.schema import check_results, load_results, results_model
from tests.regression.factory import case, results, threshold

EVERY_FIELD = case(
    "qa-1",
    {"hit@5": 1.0, "faithfulness": 0.5},
    question="Refund window?",
    expected_answer="30 days",
    expected_source_ids=["refunds.md"],
    reference_contexts=["Refunds within 30 days."],
    conversation_history=[{"role": "user", "content": "hi"}],
    answer="30 days",
    retrieved_ids=["refunds.md"],
    contexts=[{"id": "refunds.md", "document_id": "refunds", "text": "30 days"}],
    not_judged={"answer_relevancy": "no_answer"},
    judgements={"faithfulness": {"claims": [{"claim": "30 days", "verdict": "yes"}]}},
    judge_usage={"calls": 1, "cached": 0},
    repeats={"n": 2, "passed": 1, "pass_rate": 0.5, "statuses": ["passed", "failed"]},
    failures=[
        {
            "expression": "qa:mrr>=1",
            "metric": "mrr",
            "observed": None,
            "bound": ">= 1",
            "reason": "missed",
        }
    ],
)


def _document() -> dict[str, Any]:
    doc = results(
        [EVERY_FIELD, case("qa-2", {"hit@5": 0.0}, status="error")],
        thresholds=[threshold("hit@5")],
        run_id="20260101T120000Z-1a2b3c4d",
    )
    doc["judges"] = {"judge_model": "m", "calls": 3, "cost_usd": None, "not_judged": {"x": 1}}
    doc["baseline"] = {
        "path": "b.json",
        "counts": {"regressed": 1},
        "flips": [
            {
                "pipeline": "p",
                "id": "qa-2",
                "change": "regressed",
                "before": "passed",
                "now": "error",
            }
        ],
    }
    return doc


# sha256 of the bytes write_results wrote for _document() before the typed models existed
# (the writer is unchanged: the models only read).
WRITTEN = "ec095d625d6c9c844eec29a1082e1074bccedf6efb6d407e558a125860ef2bf5"


def test_a_written_file_has_the_bytes_it_had_before_the_models(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    write_results(_document(), target)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == WRITTEN
    # Reading it as the model changes nothing on disk, and the model keeps every key.
    model = read_model(target, check=True)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == WRITTEN
    assert model.model_dump(mode="json", exclude_unset=True) == json.loads(target.read_text())


def test_the_model_reads_every_part() -> None:
    model = results_model(_document())
    first, second = model.cases
    assert first.contexts is not None and first.contexts[0].text == "30 days"
    assert first.failures[0].observed is None and first.failures[0].reason == "missed"
    assert first.flaky and not second.flaky
    assert first.not_judged == {"answer_relevancy": "no_answer"}
    assert second.error_type == "ValueError" and second.question is None
    assert model.thresholds[0].observed == 0.5 and model.thresholds[0].n_error is None
    assert model.judges is not None and model.judges.cost_usd is None
    assert model.baseline is not None and model.baseline.flips[0].now == "error"
    assert not model.baseline.is_update
    assert model.datasets[0].evaluated == 2


def test_every_key_a_run_writes_is_a_named_field() -> None:
    from pytest_ragproof import evaluate

    cases: list[dict[str, Any]] = [
        {
            "id": "q1",
            "kind": "qa",
            "question": "Refund window?",
            "expected_answer": "30 days",
            "expected_source_ids": ["refunds.md"],
        },
        {"id": "u1", "kind": "unanswerable", "question": "Moon?"},
    ]
    out = evaluate(
        cases,
        lambda q: {"answer": "30 days", "contexts": [{"id": "refunds.md", "text": "30 days"}]},
        thresholds=["qa:hit@5>=1"],
        repeat=2,
    )
    document = json.loads(dumps(out.document))
    model = results_model(document)

    def unnamed(part: Any) -> set[str]:
        return set(part.model_extra or {})

    assert unnamed(model) == set()
    assert model.run is not None and unnamed(model.run) == set()
    for part in [*model.cases, *model.thresholds, *model.aggregates, *model.datasets]:
        assert unnamed(part) == set(), part
    assert all(c.repeats is not None and unnamed(c.repeats) == set() for c in model.cases)
    assert model.model_dump(mode="json", exclude_unset=True) == document


def test_an_unknown_key_is_kept() -> None:
    doc = results([case("a", later_field={"x": 1})], added_by_a_later_release=True)
    model = results_model(doc)
    assert (model.model_extra or {})["added_by_a_later_release"] is True
    assert (model.cases[0].model_extra or {})["later_field"] == {"x": 1}


def test_load_results_refuses_as_check_results_does() -> None:
    doc = results([case("a", {"hit@5": 1.5})])
    with pytest.raises(ConfigError) as checked:
        check_results(doc, "r.json")
    with pytest.raises(ConfigError) as loaded:
        load_results(doc, "r.json")
    assert str(loaded.value) == str(checked.value)
    assert "case a (cases[0]), field metrics.hit@5: 1.5 is outside" in str(loaded.value)
    bad = results([case("a")])
    bad["cases"][0]["metrics"] = {"hit@5": "high"}
    with pytest.raises(ConfigError, match=r"^the results document: case a \(cases\[0\]\), "):
        results_model(bad)


def test_a_renderer_reads_a_partial_document_that_a_merge_refuses() -> None:
    partial = results([case("a")])
    del partial["cases"][0]["nodeid"]
    partial["cases"][0]["status"] = "skipped-by-a-later-release"
    model = results_model(partial)
    assert model.cases[0].nodeid == "" and model.cases[0].status == "skipped-by-a-later-release"
    assert results_model({"cases": [{"id": "a"}]}).cases[0].status == "error"
    with pytest.raises(ConfigError, match=r"case a \(cases\[0\]\), field nodeid: missing"):
        load_results(partial, "r.json")


def test_the_models_are_read_only() -> None:
    model = results_model(_document())
    with pytest.raises(ValueError):
        model.cases[0].status = "passed"
    assert isinstance(model, Results) and isinstance(model.cases[0], Case)
