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

from typing import Any

from pytest_ragproof.evaluators.base import Evaluator, SampleError, SampleResult

__all__ = ["Evaluator", "RagasEvaluator", "SampleError", "SampleResult"]


def __getattr__(name: str) -> Any:
    # RagasEvaluator imports Ragas' own modules: only when asked for.
    if name == "RagasEvaluator":
        import importlib

        return importlib.import_module("pytest_ragproof.evaluators.ragas").RagasEvaluator
    raise AttributeError(name)
