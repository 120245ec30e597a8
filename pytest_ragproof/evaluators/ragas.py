"""Ragas metrics as a ragproof evaluator (extra ``ragas``).

Two kinds of Ragas metric are scored, whichever Ragas release is installed:

- the metrics of Ragas 0.3 (``ragas.metrics.Faithfulness``, kept as deprecated names in
  0.4): ``single_turn_ascore(SingleTurnSample)``, an LLM given to the evaluator or set
  on the metric, ``init(run_config)``;
- the collections metrics of Ragas 0.4 (``ragas.metrics.collections.Faithfulness(llm=...)``):
  ``ascore(**fields)`` returning a ``MetricResult``; the fields a metric takes are the
  parameters of its ``ascore``.

All the samples of one :meth:`RagasEvaluator.evaluate` call are scored concurrently on
an event loop this module owns, in the thread that calls it (the runner calls it from
its evaluator thread), so Ragas never touches pytest's or pytest-asyncio's loop and
never needs nest_asyncio. Ragas' telemetry is switched off (``RAGAS_DO_NOT_TRACK``)
before Ragas is imported.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_ragproof.errors import ConfigError, MissingExtraError
from pytest_ragproof.evaluators.base import SampleError

#: The fields of Ragas' SingleTurnSample a mapper may set, and their types.
_STRING_FIELDS = ("user_input", "response", "reference")
_LIST_FIELDS = ("retrieved_contexts", "reference_contexts", "multi_responses")


#: Loggers of Ragas and the libraries under it that log provider errors with their text
#: (Ragas 0.4's instructor logs each failed call's error body): quiet unless set.
_QUIET_LOGGERS = ("ragas", "instructor")


def _load_ragas() -> Any:
    import logging

    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for name in _QUIET_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:  # a level the user chose is kept
            logger.setLevel(logging.CRITICAL + 1)
    try:
        import ragas
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] not in ("ragas", "langchain_community"):
            raise
        raise MissingExtraError("ragas", "ragas", "The Ragas evaluator") from None
    return ragas


class RagasEvaluator:
    """Score cases with Ragas metrics: ``RagasEvaluator(metrics=[Faithfulness()], ...)``.

    ``sample_mapper(output, case)`` is required and returns exactly the fields sent to
    Ragas' ``SingleTurnSample`` (``user_input``, ``response``, ``retrieved_contexts``,
    ``reference``, ...). ``llm`` / ``embeddings`` are given to metrics that have none.
    """

    name = "ragas"
    version = "1"

    def __init__(
        self,
        metrics: Sequence[Any],
        sample_mapper: Callable[[Any, Any], Mapping[str, Any]],
        llm: Any = None,
        embeddings: Any = None,
        *,
        timeout: float | None = 120.0,
    ) -> None:
        if not callable(sample_mapper):
            raise ConfigError(
                "RagasEvaluator needs sample_mapper=f(output, case) returning the fields of "
                "Ragas' SingleTurnSample (user_input, response, retrieved_contexts, reference)"
            )
        if not metrics:
            raise ConfigError("RagasEvaluator needs at least one Ragas metric")
        ragas = _load_ragas()

        self._ragas = ragas
        self._mapper = sample_mapper
        self._metrics = list(metrics)
        self._timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The fields each collections metric's ``ascore`` takes (required, optional).
        self._takes: dict[int, tuple[set[str], set[str]]] = {}
        for metric in self._metrics:
            if llm is not None and getattr(metric, "llm", "absent") is None:
                metric.llm = llm
            if embeddings is not None and getattr(metric, "embeddings", "absent") is None:
                metric.embeddings = embeddings
            if _is_collections(metric):
                self._takes[id(metric)] = _parameters(metric.ascore)
            elif hasattr(metric, "single_turn_ascore"):
                from ragas.run_config import RunConfig

                metric.init(RunConfig())
            else:
                raise ConfigError(
                    f"{type(metric).__name__} is not a Ragas metric RagasEvaluator can score: "
                    "it has neither single_turn_ascore (Ragas 0.3 metrics) nor ascore (the "
                    "collections metrics of Ragas 0.4)"
                )
        self.metrics = [str(m.name) for m in self._metrics]
        self._fields = set(ragas.SingleTurnSample.model_fields)
        self.identity: dict[str, Any] = {
            "ragas": getattr(ragas, "__version__", "?"),
            "metrics": [type(m).__name__ for m in self._metrics],
            "llm": _describe(llm),
            "embeddings": _describe(embeddings),
        }
        if self._takes:
            # Collections metrics carry their own models: part of what a score depends on.
            self.identity["metric_models"] = [
                [_describe(getattr(m, "llm", None)), _describe(getattr(m, "embeddings", None))]
                for m in self._metrics
            ]

    def sample_mapper(self, output: Any, case: Any) -> Mapping[str, Any]:
        sample = self._mapper(output, case)
        self.check(sample)
        return sample

    def check(self, sample: Any) -> None:
        if not isinstance(sample, Mapping):
            raise SampleError(
                f"sample_mapper must return a mapping of SingleTurnSample fields; got "
                f"{type(sample).__name__}"
            )
        unknown = sorted(str(k) for k in sample if k not in self._fields)
        if unknown:
            raise SampleError(
                f"sample_mapper returned unknown field(s) {', '.join(unknown)}; Ragas' "
                f"SingleTurnSample takes {', '.join(sorted(self._fields))}"
            )
        for name, value in sample.items():
            if name in _STRING_FIELDS and value is not None and not isinstance(value, str):
                raise SampleError(
                    f"sample_mapper: '{name}' must be a string; got {type(value).__name__}"
                )
            if (
                name in _LIST_FIELDS
                and value is not None
                and (not isinstance(value, list) or not all(isinstance(v, str) for v in value))
            ):
                raise SampleError(f"sample_mapper: '{name}' must be a list of strings")
        for metric in self._metrics:
            takes = self._takes.get(id(metric))
            if takes is not None:
                required = takes[0]
            else:
                required = metric.get_required_columns().get(
                    self._ragas.metrics.base.MetricType.SINGLE_TURN.name, set()
                )
            missing = sorted(f for f in required if sample.get(f) in (None, [], ""))
            if missing:
                raise SampleError(
                    f"Ragas' {type(metric).__name__} needs {', '.join(missing)}, which "
                    "sample_mapper did not return"
                )

    def evaluate(self, samples: Sequence[Mapping[str, Any]]) -> list[Any]:
        """One result per sample: {metric: score or None} or the exception it raised."""

        async def one(fields: Mapping[str, Any]) -> dict[str, float | None]:
            sample = self._ragas.SingleTurnSample(**fields)
            out: dict[str, float | None] = {}
            for metric in self._metrics:
                takes = self._takes.get(id(metric))
                if takes is None:
                    score = await metric.single_turn_ascore(sample, timeout=self._timeout)
                else:
                    required, optional = takes
                    given = {k: v for k, v in fields.items() if k in required | optional}
                    result = await asyncio.wait_for(metric.ascore(**given), self._timeout)
                    score = getattr(result, "value", result)
                value = float(score) if isinstance(score, int | float) else None
                out[str(metric.name)] = None if value is None or math.isnan(value) else value
            return out

        async def run_all() -> list[Any]:
            return list(await asyncio.gather(*(one(s) for s in samples), return_exceptions=True))

        # One loop for the evaluator's life: Ragas' LLM clients keep connections bound
        # to the loop that opened them. The runner calls this from one thread only.
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(run_all())


def _describe(component: Any) -> str | None:
    """A cache identity of an LLM or embeddings wrapper: its class and model name."""
    if component is None:
        return None
    inner = getattr(component, "langchain_llm", None) or getattr(component, "embeddings", None)
    model = (
        getattr(inner, "model_name", None)
        or getattr(inner, "model", None)
        or getattr(component, "model", None)  # Ragas 0.4's llm_factory: InstructorLLM
    )
    return f"{type(component).__name__}:{type(inner).__name__ if inner else ''}:{model}"


def _is_collections(metric: Any) -> bool:
    """A collections metric of Ragas 0.4: ``ascore(**fields)``, no ``single_turn_ascore``."""
    return not hasattr(metric, "single_turn_ascore") and callable(getattr(metric, "ascore", None))


def _parameters(fn: Callable[..., Any]) -> tuple[set[str], set[str]]:
    """The keyword fields ``fn`` takes: (required, optional)."""
    required: set[str] = set()
    optional: set[str] = set()
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            continue
        (required if param.default is param.empty else optional).add(name)
    return required, optional
