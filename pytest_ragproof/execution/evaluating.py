"""Running bring-your-own evaluators on each case (``rag_evaluators``, ``evaluators=``).

Every evaluator call runs on one worker thread this module owns, so an evaluator's
own event loop (Ragas) never meets pytest's or pytest-asyncio's. What crosses back is
scores, names and exception *types*: a mapper or provider message is dropped where it
is caught. Scores are cached in the LLM cache, keyed on the evaluator's name, version,
identity (models), metrics and the mapped sample, so an unchanged re-run calls nothing.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.evaluators.base import SampleError
from pytest_ragproof.metrics import PipelineOutput

INPUTS_FIXTURE = "rag_evaluators"
_NAME = re.compile(r"[a-z][a-z_]*")


@dataclass
class Evaluated:
    """The evaluators' scores of one case, what they did not measure, and a failure."""

    metrics: dict[str, float] = field(default_factory=dict)
    not_measured: dict[str, str] = field(default_factory=dict)  # metric -> reason code
    error: dict[str, Any] | None = None


def check_evaluators(evaluators: object) -> list[Any]:
    """The list ``rag_evaluators`` / ``evaluators=`` gave, checked once."""
    if evaluators is None:
        return []
    if not isinstance(evaluators, list | tuple):
        raise ConfigError(
            f"rag_evaluators must return a list of evaluators; got {type(evaluators).__name__}"
        )
    names: set[str] = set()
    for ev in evaluators:
        missing = [
            a for a in ("name", "metrics", "sample_mapper", "evaluate") if not hasattr(ev, a)
        ]
        if missing:
            raise ConfigError(
                f"{type(ev).__name__} is not an evaluator: it lacks {', '.join(missing)} "
                "(see docs/evaluators.md)"
            )
        name = str(ev.name)
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"evaluator name '{name}' must be lower-case letters and underscores, "
                "such as 'ragas' (it prefixes its metrics: ragas:faithfulness)"
            )
        if name in names:
            raise ConfigError(f"two evaluators are named '{name}'; give each its own name")
        names.add(name)
    return list(evaluators)


class EvaluatorRunner:
    def __init__(self, evaluators: Sequence[Any], cache_dir: str | None, cache: bool) -> None:
        from pytest_ragproof.llm.cache import ResponseCache

        self.evaluators = list(evaluators)
        self.cache = ResponseCache(cache_dir, enabled=cache)
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ragproof-eval")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def score(self, output: PipelineOutput, case: Case) -> Evaluated:
        out = Evaluated()
        for ev in self.evaluators:
            name = str(ev.name)
            metrics = [str(m) for m in ev.metrics]
            try:
                sample = dict(self._pool.submit(ev.sample_mapper, output, case).result())
            except Exception as exc:
                out.error = {"evaluator": name, "step": "sample_mapper", "type": _type(exc)}
                if isinstance(exc, SampleError):
                    out.error["message"] = str(exc)  # ours: names fields, never values
                return out
            key = self._key(ev, metrics, sample)
            result: Mapping[str, Any] | None = self._cached(key) if key is not None else None
            if result is None:
                try:
                    (raw,) = self._pool.submit(ev.evaluate, [sample]).result()
                except Exception as exc:
                    raw = exc
                if isinstance(raw, BaseException):
                    out.error = {"evaluator": name, "step": "evaluate", "type": _type(raw)}
                    return out
                result = dict(raw)
                if key is not None:
                    self._store(key, result)
            for metric in metrics:
                value = result.get(metric)
                full = f"{name}:{metric}"
                if isinstance(value, bool) or not isinstance(value, int | float):
                    out.not_measured[full] = "not_returned" if value is None else "not_a_number"
                elif math.isnan(value):
                    out.not_measured[full] = "nan"
                else:
                    out.metrics[full] = float(value)
        return out

    def _key(self, ev: Any, metrics: list[str], sample: Mapping[str, Any]) -> str | None:
        from pytest_ragproof.llm.cache import cache_key

        try:
            payload = json.dumps(sample, sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return None  # not JSON: scored every time, never cached
        identity = getattr(ev, "identity", None)
        return cache_key(
            model=f"evaluator:{ev.name}",
            prompt_version=str(getattr(ev, "version", "1")),
            messages=[{"role": "sample", "content": payload}],
            params={"metrics": metrics, "identity": identity if identity is not None else {}},
            schema=None,
        )

    def _cached(self, key: str) -> dict[str, Any] | None:
        hit = self.cache.get(key)
        if hit is None or hit.text is None:
            return None
        try:
            value = json.loads(hit.text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _store(self, key: str, result: Mapping[str, Any]) -> None:
        from pytest_ragproof.llm.cache import CachedResponse

        clean = {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in result.items()
            if v is None or isinstance(v, int | float)
        }
        self.cache.put(key, CachedResponse(json.dumps(clean, sort_keys=True)))


def _type(exc: BaseException) -> str:
    return type(exc).__name__
