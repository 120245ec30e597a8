"""Retrieval metrics: trec_eval agreement, hand-computed cases, properties."""

from __future__ import annotations

import itertools
import math
import random

import pytest
import pytrec_eval
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics import retrieval_metrics, validate_ks

KS = (1, 3, 5, 10)
TREC_NAMES = {
    "hit": "success_{k}",
    "recall": "recall_{k}",
    "precision": "P_{k}",
    "ndcg": "ndcg_cut_{k}",
}
TREC_MEASURES = {"recip_rank", "map", "Rprec"} | {
    name.split("_{")[0] + "." + ",".join(map(str, KS)) for name in TREC_NAMES.values()
}


def _trec_equivalent(values: dict[str, float]) -> dict[str, float]:
    out = {"recip_rank": values["mrr"], "map": values["map"], "Rprec": values["r_precision"]}
    for family, template in TREC_NAMES.items():
        for k in KS:
            out[template.format(k=k)] = values[f"{family}@{k}"]
    return out


def test_agrees_with_trec_eval_on_thousands_of_random_queries() -> None:
    rng = random.Random(20261130)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    ours: dict[str, dict[str, float]] = {}
    for q in range(4000):
        pool = [f"d{i}" for i in range(rng.randint(1, 40))]
        relevant = set(rng.sample(pool, rng.randint(1, min(len(pool), 12))))
        # Some relevant ids are never retrieved: they only lower recall/map/ndcg.
        relevant |= {f"missing{i}" for i in range(rng.randint(0, 2))}
        judged_nonrelevant = [d for d in pool if d not in relevant and rng.random() < 0.3]
        length = rng.choice([0, 1, 2, 3, 5, 9, 10, 11, 25, 60])
        ranking = [rng.choice(pool) for _ in range(length)]  # duplicates on purpose
        qid = f"q{q}"
        qrels[qid] = {d: 1 for d in relevant} | {d: 0 for d in judged_nonrelevant}
        deduped = list(dict.fromkeys(ranking))
        # Strictly decreasing scores: trec_eval then keeps exactly our order
        # (it would otherwise break ties by document id).
        runs[qid] = {d: float(len(deduped) - i) for i, d in enumerate(deduped)}
        ours[qid] = retrieval_metrics(ranking, relevant, KS)
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(runs)
    assert len(evaluated) == len(ours)
    compared = 0
    for qid, values in ours.items():
        for measure, value in _trec_equivalent(values).items():
            assert math.isclose(value, evaluated[qid][measure], rel_tol=0, abs_tol=1e-9), (
                qid,
                measure,
            )
            compared += 1
    assert compared == 4000 * (3 + 4 * len(KS))


def test_hand_computed_example() -> None:
    # Ranking a x b (relevant a, b, z): hits at ranks 1 and 3.
    m = retrieval_metrics(["a", "x", "b"], {"a", "b", "z"}, (1, 3, 5))
    assert m["hit@1"] == 1.0
    assert m["recall@3"] == pytest.approx(2 / 3)
    assert m["precision@5"] == pytest.approx(2 / 5)  # divides by k, not by 3 retrieved
    assert m["mrr"] == 1.0
    assert m["map"] == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert m["r_precision"] == pytest.approx(2 / 3)
    dcg = 1 + 1 / math.log2(4)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m["ndcg@3"] == pytest.approx(dcg / ideal)
    # Ideal DCG@1 only counts min(k, n_relevant) = 1 relevant.
    assert m["ndcg@1"] == 1.0


def test_duplicates_move_later_ids_up() -> None:
    assert retrieval_metrics(["a", "a", "b"], {"b"}, (2,))["mrr"] == 0.5
    assert retrieval_metrics(["a", "a", "b"], {"b"}, (2,))["hit@2"] == 1.0
    assert retrieval_metrics(["a", "b"], {"a"}, (2,))["precision@2"] == 0.5
    # A relevant id retrieved twice counts once.
    assert retrieval_metrics(["a", "a"], {"a", "b"}, (2,))["recall@2"] == 0.5


def test_empty_ranking_scores_every_metric_zero() -> None:
    m = retrieval_metrics([], {"a"}, KS)
    assert len(m) == 3 + 4 * len(KS)
    assert set(m.values()) == {0.0}


def test_mrr_has_no_cutoff() -> None:
    ranking = [f"x{i}" for i in range(40)] + ["a"]
    m = retrieval_metrics(ranking, {"a"}, (10,))
    assert m["mrr"] == pytest.approx(1 / 41)
    assert m["hit@10"] == 0.0


def test_keys_and_order() -> None:
    m = retrieval_metrics(["a"], ["a"], [3, 1, 3])
    assert list(m) == [
        "hit@1",
        "recall@1",
        "precision@1",
        "ndcg@1",
        "hit@3",
        "recall@3",
        "precision@3",
        "ndcg@3",
        "mrr",
        "map",
        "r_precision",
    ]


def test_a_string_instead_of_a_collection_is_refused() -> None:
    with pytest.raises(TypeError, match="not a string"):
        retrieval_metrics("abc", {"a"}, KS)
    with pytest.raises(TypeError, match="not a string"):
        retrieval_metrics(["abc"], "abc", KS)


def test_no_relevant_ids_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one relevant"):
        retrieval_metrics(["a"], set(), KS)


@pytest.mark.parametrize("ks", [(0,), (-1,), (1.5,), (True,), ()])
def test_invalid_ks_are_config_errors(ks: tuple[object, ...]) -> None:
    with pytest.raises(ConfigError, match="cutoff"):
        validate_ks(ks)  # type: ignore[arg-type]


def test_large_ranks_extend_the_discount_table() -> None:
    ranking = [f"x{i}" for i in range(999)] + ["a"]
    m = retrieval_metrics(ranking, {"a"}, (1000,))
    assert m["ndcg@1000"] == pytest.approx(1 / math.log2(1001))


IDS = st.sampled_from([f"d{i}" for i in range(15)])
RANKINGS = st.lists(IDS, max_size=30)
RELEVANT = st.sets(IDS, min_size=1, max_size=8)


@given(RANKINGS, RELEVANT)
def test_every_metric_is_in_unit_interval(ranking: list[str], relevant: set[str]) -> None:
    for value in retrieval_metrics(ranking, relevant, (1, 2, 3, 5, 10, 40)).values():
        assert 0.0 <= value <= 1.0 + 1e-12


@given(RANKINGS, RELEVANT)
def test_recall_and_hit_are_non_decreasing_in_k(ranking: list[str], relevant: set[str]) -> None:
    ks = tuple(range(1, 35))
    m = retrieval_metrics(ranking, relevant, ks)
    for a, b in itertools.pairwise(ks):
        assert m[f"recall@{a}"] <= m[f"recall@{b}"]
        assert m[f"hit@{a}"] <= m[f"hit@{b}"]


@given(RANKINGS, RELEVANT, st.randoms(use_true_random=False))
def test_permuting_irrelevant_ids_after_last_relevant_changes_nothing(
    ranking: list[str], relevant: set[str], rnd: random.Random
) -> None:
    deduped = list(dict.fromkeys(ranking))
    last = max((i for i, d in enumerate(deduped) if d in relevant), default=-1)
    head, tail = deduped[: last + 1], deduped[last + 1 :]
    rnd.shuffle(tail)
    assert retrieval_metrics(head + tail, relevant, KS) == retrieval_metrics(deduped, relevant, KS)


@given(
    RANKINGS,
    RELEVANT,
    st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=10),
)
def test_inserted_duplicates_never_raise_recall(
    ranking: list[str], relevant: set[str], insertions: list[tuple[int, int]]
) -> None:
    with_dups = list(ranking)
    for source, offset in insertions:
        if with_dups:
            j = source % len(with_dups)
            # Anywhere after the original: a later copy of an id already ranked.
            at = j + 1 + offset % (len(with_dups) - j)
            with_dups.insert(at, with_dups[j])
    before = retrieval_metrics(ranking, relevant, KS)
    after = retrieval_metrics(with_dups, relevant, KS)
    for k in KS:
        assert after[f"recall@{k}"] <= before[f"recall@{k}"]
    # Each id keeps its first position, so nothing at all changes.
    assert after == before


@given(st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=20))
def test_a_relevant_id_counts_once_however_often_retrieved(ranking: list[str]) -> None:
    m = retrieval_metrics(ranking, {"a", "z"}, (20,))
    assert m["recall@20"] == (0.5 if "a" in ranking else 0.0)
