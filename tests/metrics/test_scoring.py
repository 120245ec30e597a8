"""score_case: which metrics appear for which case and output."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics import (
    Context,
    PipelineOutput,
    normalize_output,
    score_case,
    would_match_by_document,
)

RETRIEVAL_KEYS = {
    f"{family}@{k}" for family in ("hit", "recall", "precision", "ndcg") for k in (1, 3, 5, 10)
} | {"mrr", "map", "r_precision"}
ANSWER_KEYS = {"exact_match", "token_f1", "rouge_l", "completeness"}


@dataclass(frozen=True)
class FakeCase:
    kind: str = "qa"
    expected_answer: str | None = "Paris"
    expected_source_ids: Sequence[str] = ("c1",)
    canary: str | None = None


def _ctx(ident: str, document_id: str | None = None) -> Context:
    return Context(ident, "text", document_id or ident)


def test_import_needs_neither_pytest_nor_pydantic() -> None:
    code = (
        "import pytest_ragproof.metrics, sys; "
        "assert 'pydantic' not in sys.modules and 'pytest' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_qa_case_with_answer_and_contexts_gets_everything() -> None:
    out = PipelineOutput("It is Paris.", (_ctx("x"), _ctx("c1")))
    scores = score_case(FakeCase(), out)
    assert set(scores) == RETRIEVAL_KEYS | ANSWER_KEYS | {"abstained"}
    assert scores["mrr"] == 0.5
    assert scores["exact_match"] == 0.0
    assert scores["completeness"] == 1.0
    assert scores["abstained"] == 0.0


def test_bare_string_output_has_no_retrieval_metrics() -> None:
    scores = score_case(FakeCase(), normalize_output("Paris"))
    assert set(scores) == ANSWER_KEYS | {"abstained"}
    assert scores["exact_match"] == 1.0


def test_empty_contexts_score_zero() -> None:
    scores = score_case(FakeCase(), PipelineOutput(None, ()))
    assert set(scores) == RETRIEVAL_KEYS
    assert set(scores.values()) == {0.0}


def test_no_expected_answer_means_no_answer_metrics() -> None:
    case = FakeCase(kind="unanswerable", expected_answer=None, expected_source_ids=())
    scores = score_case(case, PipelineOutput("I don't know.", (_ctx("c1"),)))
    assert scores == {"abstained": 1.0}


def test_no_answer_means_no_answer_metrics_and_no_abstained() -> None:
    scores = score_case(FakeCase(), PipelineOutput(None, (_ctx("c1"),)))
    assert set(scores) == RETRIEVAL_KEYS


def test_completeness_absent_when_expected_answer_has_no_tokens() -> None:
    scores = score_case(FakeCase(expected_answer="?"), PipelineOutput("x", None))
    assert "completeness" not in scores
    assert {"exact_match", "token_f1", "rouge_l"} <= set(scores)


def test_injection_case() -> None:
    case = FakeCase(kind="injection", canary="ZEBRA-7731")
    leaked = score_case(case, PipelineOutput("Paris. **Z-E-B-R-A** 7731", None))
    assert leaked["injection_resisted"] == 0.0
    clean = score_case(case, PipelineOutput("Paris.", None))
    assert clean["injection_resisted"] == 1.0
    # Not an injection case, or no canary: no injection metric.
    assert "injection_resisted" not in score_case(
        FakeCase(canary="ZEBRA"), PipelineOutput("ZEBRA", None)
    )
    no_canary = FakeCase(kind="injection", canary=None)
    assert "injection_resisted" not in score_case(no_canary, PipelineOutput("x", None))


def test_qa_abstention_is_reported_as_abstained() -> None:
    scores = score_case(FakeCase(), PipelineOutput("The context does not say.", None))
    assert scores["abstained"] == 1.0


def test_document_mode_compares_document_ids_once() -> None:
    case = FakeCase(expected_source_ids=("guide.md", "faq.md"))
    contexts = (_ctx("guide.md#0", "guide.md"), _ctx("guide.md#3", "guide.md"), _ctx("x"))
    out = PipelineOutput(None, contexts)
    chunk = score_case(case, out)
    assert chunk["hit@10"] == 0.0
    doc = score_case(case, out, source_match="document", ks=(2,))
    assert doc["recall@2"] == 0.5
    # Two chunks of guide.md are one document; x moves up to rank 2.
    assert doc["precision@2"] == 0.5
    assert would_match_by_document(case.expected_source_ids, contexts)


def test_would_match_by_document() -> None:
    assert not would_match_by_document(["d"], [_ctx("c1", "other")])
    assert not would_match_by_document(["c1"], [_ctx("c1", "d")])  # chunk ids already match
    assert would_match_by_document(["d"], [_ctx("c1", "d")])
    assert not would_match_by_document(["d"], [])


def test_extra_abstain_patterns_and_language() -> None:
    out = PipelineOutput("Please ask support.", None)
    assert score_case(FakeCase(), out)["abstained"] == 0.0
    scores = score_case(FakeCase(), out, extra_abstain_patterns=[r"ask support"])
    assert scores["abstained"] == 1.0
    with pytest.raises(ConfigError, match="language 'tlh'"):
        score_case(FakeCase(), out, abstain_language="tlh")


def test_bad_settings_fail_on_every_case() -> None:
    out = PipelineOutput("x", None)  # no contexts: the settings are unused here
    with pytest.raises(ConfigError, match="source match"):
        score_case(FakeCase(), out, source_match="page")
    with pytest.raises(ConfigError, match="cutoff"):
        score_case(FakeCase(), out, ks=(0,))


def test_raw_output_is_refused() -> None:
    with pytest.raises(TypeError, match="normalize_output"):
        score_case(FakeCase(), "Paris")  # type: ignore[arg-type]


def test_custom_ks() -> None:
    scores = score_case(FakeCase(), PipelineOutput(None, (_ctx("c1"),)), ks=[2, 20])
    assert {"hit@2", "hit@20", "ndcg@20"} <= set(scores)
    assert "hit@1" not in scores


@given(
    st.sampled_from(["qa", "unanswerable", "injection"]),
    st.one_of(st.none(), st.text(max_size=20)),
    st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=3),
    st.one_of(st.none(), st.text(max_size=30)),
    st.one_of(st.none(), st.lists(st.sampled_from(["c1", "c2", "x", "y"]), max_size=8)),
)
def test_every_score_is_in_unit_interval(
    kind: str,
    expected_answer: str | None,
    expected_ids: list[str],
    answer: str | None,
    retrieved: list[str] | None,
) -> None:
    case = FakeCase(kind, expected_answer, tuple(expected_ids), "ZEBRA-7731")
    contexts = None if retrieved is None else tuple(_ctx(i) for i in retrieved)
    scores = score_case(case, PipelineOutput(answer, contexts))
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in scores.values())
    assert (answer is not None) == ("abstained" in scores)
    assert (bool(expected_ids) and contexts is not None) == ("mrr" in scores)
