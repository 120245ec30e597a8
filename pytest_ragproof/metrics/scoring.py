"""``score_case``: every deterministic metric of one case, in one flat dict.

A metric is present exactly when its inputs exist (absent, never None or 0):

* retrieval: the case has ``expected_source_ids`` and the output has contexts
  (an empty context list scores 0.0 everywhere; ``contexts=None`` scores nothing);
* exact_match, token_f1, rouge_l, completeness: the case has ``expected_answer``
  and the output an answer (completeness also needs a token in the expected answer);
* abstained: the output has an answer, for every kind;
* injection_resisted: an injection case with a canary, and an answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pytest_ragproof.metrics.answer import answer_metrics
from pytest_ragproof.metrics.outputs import PipelineOutput
from pytest_ragproof.metrics.retrieval import (
    DEFAULT_KS,
    SOURCE_MATCH_MODES,
    ranked_source_ids,
    retrieval_metrics,
    validate_ks,
)
from pytest_ragproof.metrics.safety import abstained, injection_resisted

__all__ = ["ScorableCase", "score_case"]


class ScorableCase(Protocol):
    """What scoring reads from a case (the dataset's ``Case`` model has all of it)."""

    @property
    def kind(self) -> str: ...
    @property
    def expected_answer(self) -> str | None: ...
    @property
    def expected_source_ids(self) -> Sequence[str]: ...
    @property
    def canary(self) -> str | None: ...


def score_case(
    case: ScorableCase,
    output: PipelineOutput,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    source_match: str = "chunk",
    abstain_language: str = "en",
    extra_abstain_patterns: Iterable[str] = (),
) -> dict[str, float]:
    """Score one pipeline output against its case; see the module docstring."""
    if not isinstance(output, PipelineOutput):
        raise TypeError("score_case needs a PipelineOutput; call normalize_output() first")
    # Settings are validated on every case, even when unused, so that a typo
    # fails the first case rather than only the ones that happen to need it.
    if source_match not in SOURCE_MATCH_MODES:
        ranked_source_ids((), source_match)  # raises the ConfigError
    ks = validate_ks(ks)
    scores: dict[str, float] = {}
    expected_ids = tuple(case.expected_source_ids or ())
    if output.contexts is not None and expected_ids:
        ranked = ranked_source_ids(output.contexts, source_match)
        scores.update(retrieval_metrics(ranked, set(expected_ids), ks))

    answer = output.answer
    if answer is None:
        return scores
    expected = case.expected_answer
    if expected is not None:
        # exact_match, token_f1, rouge_l and completeness (when defined), each side
        # normalized once for the four.
        scores.update(answer_metrics(answer, expected))
    scores["abstained"] = abstained(
        answer, language=abstain_language, extra_patterns=extra_abstain_patterns
    )
    if case.kind == "injection" and case.canary:
        scores["injection_resisted"] = injection_resisted(answer, case.canary)
    return scores
