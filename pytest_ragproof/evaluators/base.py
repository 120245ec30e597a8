"""The evaluator protocol and the one exception whose message crosses the boundary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

SampleResult = Mapping[str, float | None] | BaseException


class SampleError(Exception):
    """A mapped sample is unusable. Raise it with a message of your own that names the
    field and never its value: it is the one exception whose message ragproof shows."""


@runtime_checkable
class Evaluator(Protocol):
    name: str
    metrics: Sequence[str]

    def sample_mapper(self, output: Any, case: Any) -> Mapping[str, Any]: ...

    def evaluate(self, samples: Sequence[Mapping[str, Any]]) -> Sequence[SampleResult]: ...
