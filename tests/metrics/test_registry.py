"""The metric registry the runner uses for thresholds and messages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_ragproof.metrics import MetricSpec, registry, retrieval_metrics


def test_families_resolve_concrete_names() -> None:
    spec = registry.resolve("recall@5")
    assert spec is not None
    assert spec.name == "recall@k"
    assert spec.higher_is_better
    assert spec.needs == {"contexts", "expected_source_ids"}
    assert registry.resolve("ndcg@10") is registry.resolve("ndcg@1")


@pytest.mark.parametrize(
    "name", ["recall@0", "recall@", "recall@k", "recall@05", "recall", "mrr@3", "nope", ""]
)
def test_unknown_or_malformed_names_resolve_to_none(name: str) -> None:
    assert registry.resolve(name) is None


def test_every_metric_score_case_can_emit_is_registered() -> None:
    names = set(retrieval_metrics(["a"], {"a"}, (1, 7))) | {
        "exact_match",
        "token_f1",
        "rouge_l",
        "completeness",
        "abstained",
        "injection_resisted",
        "latency_s",
    }
    for name in names:
        assert registry.resolve(name) is not None, name


def test_directions_kinds_and_needs() -> None:
    latency = registry.resolve("latency_s")
    assert latency is not None
    assert not latency.higher_is_better
    assert latency.kinds == {"qa", "unanswerable", "injection"}
    injection = registry.resolve("injection_resisted")
    assert injection is not None
    assert injection.kinds == {"injection"}
    assert "canary" in injection.needs
    f1 = registry.resolve("token_f1")
    assert f1 is not None
    assert "expected_answer" in f1.needs


def test_abstained_direction_flips_on_qa() -> None:
    spec = registry.resolve("abstained")
    assert spec is not None
    assert spec.higher_is_better_for("unanswerable")
    assert not spec.higher_is_better_for("qa")


def test_known_names_list_families_once() -> None:
    names = registry.known_names()
    assert "recall@k" in names
    assert "recall@5" not in names
    assert "latency_s" in names
    assert len(names) == len(set(names))


@pytest.fixture
def clean_registry() -> Iterator[None]:
    saved = dict(registry._SPECS)
    yield
    registry._SPECS.clear()
    registry._SPECS.update(saved)


@pytest.mark.usefixtures("clean_registry")
def test_a_metric_plugs_in_by_registering_a_name() -> None:
    spec = MetricSpec(
        "house_score", frozenset({"qa"}), True, frozenset({"answer", "contexts"}), "in-house"
    )
    registry.register(spec)
    try:
        assert registry.resolve("house_score") is spec
        assert "house_score" in registry.known_names()
        with pytest.raises(ValueError, match="already registered"):
            registry.register(spec)
        registry.register(spec, replace=True)
    finally:
        registry._SPECS.pop("house_score")


def test_every_judge_metric_is_registered_with_the_judges_kinds() -> None:
    from pytest_ragproof.judges import JUDGE_KINDS, metrics_of

    for judge, kinds in JUDGE_KINDS.items():
        for name in metrics_of([judge]):
            spec = registry.resolve(name)
            assert spec is not None, name
            assert spec.kinds == kinds, name
            assert "judge" in spec.needs


@pytest.mark.parametrize(
    ("name", "kinds", "needs", "message"),
    [
        ("Bad Name", {"qa"}, set(), "must look like"),
        ("x@5", {"qa"}, set(), "must look like"),
        ("x", set(), set(), "kinds"),
        ("x", {"chat"}, set(), "kinds"),
        ("x", {"qa"}, {"vibes"}, "needs"),
    ],
)
def test_invalid_specs_are_refused(
    name: str, kinds: set[str], needs: set[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        MetricSpec(name, frozenset(kinds), True, frozenset(needs), "")


def test_cutoff_of() -> None:
    assert registry.cutoff_of("precision@12") == 12
    assert registry.cutoff_of("mrr") is None
    assert registry.cutoff_of("p@0") is None
