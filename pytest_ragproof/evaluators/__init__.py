"""Bring-your-own evaluators: Ragas metrics, or any scorer, behind a privacy boundary.

An evaluator is anything with

- ``name``: the prefix of its metrics (``ragas`` -> ``ragas:faithfulness``);
- ``metrics``: the names it reports (without the prefix);
- ``sample_mapper(output, case)``: the exact fields it is sent, built by the user;
- ``evaluate(samples)``: one result per sample, a mapping of metric name to a number
  (``None`` or NaN: not measured) or an exception instance (that sample failed).

Register them for a pytest run with a fixture ``rag_evaluators`` returning a list, or
pass ``evaluate(..., evaluators=[...])``. Only exception *types* cross the boundary:
no mapper or provider message is kept or printed. Scores are cached like judge
calls, keyed on the evaluator, its metrics and the mapped sample.

:class:`RagasEvaluator` (extra ``ragas``) imports Ragas only when built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pytest_ragproof.evaluators.ragas import RagasEvaluator

__all__ = ["Evaluator", "RagasEvaluator", "SampleError"]


class SampleError(Exception):
    """A mapped sample is unusable. Raise it with a message of your own that names the
    field and never its value: it is the one exception whose message ragproof shows."""


SampleResult = Mapping[str, float | None] | BaseException


@runtime_checkable
class Evaluator(Protocol):
    name: str
    metrics: Sequence[str]

    def sample_mapper(self, output: Any, case: Any) -> Mapping[str, Any]: ...

    def evaluate(self, samples: Sequence[Mapping[str, Any]]) -> Sequence[SampleResult]: ...


def __getattr__(name: str) -> Any:
    if name == "RagasEvaluator":
        from pytest_ragproof.evaluators.ragas import RagasEvaluator

        return RagasEvaluator
    raise AttributeError(name)
