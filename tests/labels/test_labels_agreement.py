"""Agreement of judges with people and of people with each other, against hand-computed figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.labels import Label, agreement, label_for, people_agreement
from tests.labels.records import case, results

TIME = "2026-12-02T10:00:00Z"
SCORES = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 1.0, "q5": 0.25}
ANA = {"q1": 1, "q2": 0, "q3": 0, "q4": 1, "q5": 1, "q6": 1}
BOB = {"q1": 1, "q2": 1, "q3": 0, "q4": 0}


def judged_results() -> dict[str, Any]:
    cases = [case(cid, metrics={"faithfulness": s}) for cid, s in SCORES.items()]
    q6 = case("q6", metrics={"hit@1": 1.0})
    q6["not_judged"] = {"faithfulness": "no_claims"}
    return results(*cases, q6)


def labels_of(doc: dict[str, Any], reviewer: str, verdicts: Mapping[str, float]) -> list[Label]:
    by_id = {c["id"]: c for c in doc["cases"]}
    return [
        label_for(doc, by_id[cid], "faithfulness", v, reviewer, time=TIME)
        for cid, v in verdicts.items()
    ]


def test_the_judge_against_each_reviewer_and_everyone_with_exact_figures() -> None:
    doc = judged_results()
    stale = Label(None, "q1", "rag", "sha256:" + "0" * 64, "faithfulness", 1, "carl", TIME)
    labels = [*labels_of(doc, "ana", ANA), *labels_of(doc, "bob", BOB), stale]
    report = agreement(doc, labels, resamples=200, seed=1)
    assert (report.fresh, report.stale, report.unmatched, report.withdrawn) == (
        10,
        {"digest": 1},
        0,
        0,
    )
    assert report.reviewers == ("ana", "bob")  # carl's only label is stale
    faith = report.metric("faithfulness")
    assert faith is not None and report.metric("answer_relevancy") is None
    ana, bob, everyone = faith.by_reviewer["ana"], faith.by_reviewer["bob"], faith.judge
    # ana on q1..q5: labels 1 0 0 1 1, judge (>= 0.5) 1 1 0 1 0; q6 has no judge score
    assert ana.confusion == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert (ana.labelled, ana.measured, ana.not_judged) == (6, 5, {"no_claims": 1})
    assert ana.value("accuracy") == 0.6
    assert ana.value("precision") == ana.value("recall") == round(2 / 3, 6)
    assert ana.value("kappa") == round((0.6 - 0.52) / 0.48, 6)  # 0.166667
    assert bob.confusion == {"tp": 2, "fp": 1, "fn": 0, "tn": 1}
    assert (bob.value("accuracy"), bob.value("recall"), bob.value("kappa")) == (0.75, 1.0, 0.5)
    assert everyone.confusion == {"tp": 4, "fp": 2, "fn": 1, "tn": 2}
    assert (everyone.labelled, everyone.measured) == (10, 9)
    assert everyone.value("recall") == 0.8
    assert everyone.value("kappa") == round(12 / 39, 6)  # po 6/9, pe 42/81
    ci = everyone.figures["kappa"]["ci95"]
    assert ci[0] <= everyone.value("kappa") <= ci[1]
    # ana and bob shared q1..q4: 1 0 0 1 against 1 1 0 0: po 0.5, pe 0.5
    assert faith.people.statistic == "cohen_kappa"
    assert (faith.people.shared_items, faith.people.value) == (4, 0.0)
    assert [(d.case_id, d.reviewer, d.judge_score, d.verdict) for d in report.disagreements] == [
        ("q2", "ana", 0.5, 0),
        ("q4", "bob", 1.0, 0),
        ("q5", "ana", 0.25, 1),
    ]
    data = report.to_dict()
    assert data["labels"] == {
        "fresh": 10,
        "stale": {"digest": 1},
        "unmatched": 0,
        "withdrawn": 0,
        "reviewers": ["ana", "bob"],
    }
    assert data["metrics"]["faithfulness"]["all"]["figures"]["accuracy"]["value"] == round(6 / 9, 6)


def test_the_same_seed_gives_the_same_intervals() -> None:
    doc = judged_results()
    labels = labels_of(doc, "ana", ANA)
    first = agreement(doc, labels, resamples=300, seed=7).to_dict()
    assert first == agreement(doc, labels, resamples=300, seed=7).to_dict()
    assert first != agreement(doc, labels, resamples=300, seed=8).to_dict()


def test_graded_labels_get_rank_correlations() -> None:
    doc = judged_results()
    labels = labels_of(doc, "ana", {"q1": 0.9, "q2": 0.4, "q3": 0.1, "q4": 0.6, "q5": 0.5})
    faith = agreement(doc, labels, resamples=50).metric("faithfulness")
    assert faith is not None and faith.judge.labels == "graded"
    assert set(faith.judge.figures) == {"spearman", "kendall_tau_b"}
    # ranks of the labels 0.9 0.4 0.1 0.6 0.5: 5 2 1 4 3; of the scores 1 0.5 0 1 0.25:
    # 4.5 3 1 4.5 2. Deviations 2 -1 -2 1 0 and 1.5 0 -2 1.5 -1: ρ = 8.5 / sqrt(10 * 9.5)
    assert faith.judge.value("spearman") == round(8.5 / (10 * 9.5) ** 0.5, 6)


def test_claim_verdicts_are_compared_with_the_judges() -> None:
    from pytest_ragproof.labels import ClaimVerdict

    record = case(
        "q1",
        metrics={"faithfulness": 0.5},
        claims=[
            {"claim": "a", "verdict": "supported", "context": 1},
            {"claim": "b", "verdict": "unsupported", "context": None},
        ],
    )
    doc = results(record)
    claims = (
        ClaimVerdict(1, "unsupported"),
        ClaimVerdict(2, "unsupported"),
        ClaimVerdict(3, "supported"),
    )
    # Labelled when the judge listed a third claim; judged again since (same answer and
    # contexts, so the label is fresh): its third claim verdict has no claim to meet.
    earlier = case(
        "q1",
        metrics={"faithfulness": 0.5},
        claims=[
            *record["judgements"]["faithfulness"]["claims"],
            {"claim": "c", "verdict": "supported", "context": 1},
        ],
    )
    made = label_for(results(earlier), earlier, "faithfulness", 0, "ana", claims=claims)
    faith = agreement(doc, [made], resamples=10).metric("faithfulness")
    assert faith is not None and faith.claims is not None
    assert faith.claims.to_dict() == {"given": 3, "agree": 1, "overruled": 1, "missing": 1}


def test_redacted_results_are_refused() -> None:
    doc = {**judged_results(), "redacted": True}
    with pytest.raises(ConfigError, match="--ragproof-redact"):
        agreement(doc, [])


def _people_labels(
    rows: dict[str, list[float | None]], metric: str = "faithfulness"
) -> list[Label]:
    out = []
    for reviewer, values in rows.items():
        for unit, value in enumerate(values):
            if value is not None:
                digest = "sha256:" + f"{unit:064x}"
                out.append(Label(None, f"u{unit}", "rag", digest, metric, value, reviewer, TIME))
    return out


def test_two_reviewers_get_cohens_kappa_by_hand() -> None:
    found = people_agreement(_people_labels({"a": [1, 0, 1], "b": [1, 0, 0]}))
    # po 2/3; pe 2/3 * 1/3 + 1/3 * 2/3 = 4/9; κ = (6/9 - 4/9) / (5/9) = 0.4
    assert found["faithfulness"].to_dict() == {
        "reviewers": ["a", "b"],
        "shared_items": 3,
        "statistic": "cohen_kappa",
        "level": "nominal",
        "value": 0.4,
    }


def test_three_reviewers_get_krippendorffs_alpha_by_hand() -> None:
    rows: dict[str, list[float | None]] = {"a": [1, 0, 1], "b": [1, 0, 0], "c": [1, 1, None]}
    found = people_agreement(_people_labels(rows))["faithfulness"]
    # coincidences o11 3, o00 1, o01 = o10 = 2; n 8, n0 3, n1 5
    # Do = 4/8, De = 2 * 3 * 5 / (8 * 7) = 30/56: α = 1 - 0.5 / (30/56) = 1/15
    assert (found.statistic, found.level, found.shared_items) == (
        "krippendorff_alpha",
        "nominal",
        3,
    )
    assert found.value == round(1 / 15, 6)


def test_graded_alpha_matches_krippendorffs_published_example_and_the_package() -> None:
    import krippendorff

    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
    # 4 observers, 12 units, values 1..5; interval α = 0.849. Labels hold them as v / 5
    # (interval α does not change under a linear rescaling).
    table = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    rows = {
        name: [None if v is None else v / 5 for v in row]
        for name, row in zip("ABCD", table, strict=True)
    }
    found = people_agreement(_people_labels(rows))["faithfulness"]
    assert (found.statistic, found.level) == ("krippendorff_alpha", "interval")
    assert found.shared_items == 11  # unit 12 has one value only
    assert found.value == pytest.approx(0.849, abs=5e-4)
    nan = float("nan")
    direct = krippendorff.alpha(
        reliability_data=[[nan if v is None else v for v in row] for row in table],
        level_of_measurement="interval",
    )
    assert found.value == round(float(direct), 6)


def test_people_agreement_without_overlap_or_variety_is_undefined_with_its_reason() -> None:
    alone = people_agreement(_people_labels({"a": [1, 0]}))["faithfulness"]
    assert (alone.value, alone.undefined) == (None, "one reviewer only")
    apart = people_agreement(_people_labels({"a": [1, None], "b": [None, 0]}))["faithfulness"]
    assert (apart.shared_items, apart.undefined) == (0, "no item was labelled by two people")
    same = people_agreement(_people_labels({"a": [1, 1], "b": [1, 1], "c": [1, 1]}))
    assert same["faithfulness"].undefined == "the reviewers used a single value on the shared items"
    two_same = people_agreement(_people_labels({"a": [1, 1], "b": [1, 1]}))["faithfulness"]
    assert (two_same.statistic, two_same.value) == ("cohen_kappa", None)


def test_people_agreement_compares_only_labels_of_the_same_answer() -> None:
    labels = [
        Label(None, "u1", "rag", "sha256:" + "1" * 64, "faithfulness", 1, "a", TIME),
        Label(None, "u1", "rag", "sha256:" + "2" * 64, "faithfulness", 0, "b", TIME),
    ]
    assert people_agreement(labels)["faithfulness"].shared_items == 0
