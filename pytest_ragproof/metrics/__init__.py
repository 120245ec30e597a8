"""Deterministic metrics: retrieval, answer, abstention and injection.

Importable without pytest and without pydantic (notebooks, other runners). The
runner calls :func:`normalize_output` on what the pipeline returned, then
:func:`score_case`; :mod:`pytest_ragproof.metrics.registry` describes every
metric name. The lower-level functions are public for notebook use.
"""

from __future__ import annotations

from pytest_ragproof.metrics import registry
from pytest_ragproof.metrics.answer import (
    STOPWORDS,
    completeness,
    exact_match,
    rouge_l,
    squad_normalize,
    token_f1,
    tokenize,
)
from pytest_ragproof.metrics.outputs import Context, PipelineOutput, content_id, normalize_output
from pytest_ragproof.metrics.registry import MetricSpec
from pytest_ragproof.metrics.retrieval import (
    DEFAULT_KS,
    SOURCE_MATCH_MODES,
    ranked_source_ids,
    retrieval_metrics,
    validate_ks,
    would_match_by_document,
)
from pytest_ragproof.metrics.safety import (
    DEFAULT_ABSTAIN_PATTERNS,
    abstain_languages,
    abstain_patterns,
    abstained,
    canary_skeleton,
    injection_resisted,
    register_abstain_patterns,
)
from pytest_ragproof.metrics.scoring import ScorableCase, score_case

__all__ = [
    "DEFAULT_ABSTAIN_PATTERNS",
    "DEFAULT_KS",
    "SOURCE_MATCH_MODES",
    "STOPWORDS",
    "Context",
    "MetricSpec",
    "PipelineOutput",
    "ScorableCase",
    "abstain_languages",
    "abstain_patterns",
    "abstained",
    "canary_skeleton",
    "completeness",
    "content_id",
    "exact_match",
    "injection_resisted",
    "normalize_output",
    "ranked_source_ids",
    "register_abstain_patterns",
    "registry",
    "retrieval_metrics",
    "rouge_l",
    "score_case",
    "squad_normalize",
    "token_f1",
    "tokenize",
    "validate_ks",
    "would_match_by_document",
]
