"""Running bring-your-own evaluators on each case (``rag_evaluators``, ``evaluators=``).

Every evaluator call runs on one worker thread this module owns, so an evaluator's
own event loop (Ragas) never meets pytest's or pytest-asyncio's. Cases are handed over
as their pipeline outputs land (with look-ahead, from the prefetch threads) and scored
in batches of at most ``--ragproof-evaluator-concurrency``: one ``evaluate(samples)``
call per evaluator and batch, which Ragas scores concurrently. What crosses back is
scores, names and exception *types*: a mapper or provider message is dropped where it
is caught. Scores are cached in the LLM cache, keyed on the evaluator's name, version,
identity (models), metrics and the mapped sample, so an unchanged re-run calls nothing.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import queue
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_ragproof import defaults
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError, OutputShapeError
from pytest_ragproof.evaluators.base import SampleError
from pytest_ragproof.metrics import PipelineOutput, normalize_output


class Outcome(Protocol):
    """What the runner reads and sets on an ``execute.Outcome`` (no import: no cycle)."""

    raw: Any
    error: BaseException | None
    timed_out: bool
    output: PipelineOutput | None
    evaluation: Any


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


class _Job:
    """One case's output waiting for the evaluators, and where its scores go."""

    __slots__ = ("case", "future", "output", "result")

    def __init__(self, output: PipelineOutput, case: Case) -> None:
        self.output = output
        self.case = case
        self.result = Evaluated()
        self.future: concurrent.futures.Future[Evaluated] = concurrent.futures.Future()


class EvaluatorRunner:
    """The evaluators of one process: cases submitted as their outputs land, scored in
    batches of at most ``concurrency`` on the one evaluator thread.

    Each evaluator's ``evaluate(samples)`` gets the batch's samples in one call (Ragas
    scores them concurrently on its own event loop), so at most ``concurrency`` cases
    are being scored at once, and every evaluator call still runs on one thread.
    """

    def __init__(
        self,
        evaluators: Sequence[Any],
        cache_dir: str | None,
        cache: bool,
        concurrency: int = defaults.EVALUATOR_CONCURRENCY,
    ) -> None:
        from pytest_ragproof.llm.cache import ResponseCache

        self.evaluators = list(evaluators)
        self.cache = ResponseCache(cache_dir, enabled=cache)
        self.concurrency = max(1, int(concurrency))
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the evaluator thread once its batch ends (not waited for: a hung
        evaluator must not hold the session)."""
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread = None

    # -- submitting and collecting ------------------------------------------
    def submit(self, key: str, case: Case, outcome: Outcome) -> None:
        """Start scoring ``outcome`` (any thread; the prefetcher's hand-over hook).

        A failed, timed-out or unusable call is not scored: its case is an error anyway.
        """
        del key  # the future travels on the outcome itself
        if outcome.error is not None or outcome.timed_out or outcome.evaluation is not None:
            return
        if outcome.output is None:
            try:
                outcome.output = normalize_output(outcome.raw)
            except OutputShapeError:
                return  # finish_case reports the shape error
        outcome.evaluation = self._enqueue(outcome.output, case)

    def score(
        self, output: PipelineOutput, case: Case, outcome: Outcome | None = None
    ) -> Evaluated:
        """The evaluators' scores of one case: the ones started at hand-over, or now."""
        future = outcome.evaluation if outcome is not None else None
        if future is None:
            future = self._enqueue(output, case)
        result: Evaluated = future.result()
        return result

    def _enqueue(self, output: PipelineOutput, case: Case) -> concurrent.futures.Future[Evaluated]:
        job = _Job(output, case)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="ragproof-eval", daemon=True
                )
                self._thread.start()
            self._queue.put(job)
        return job.future

    # -- the evaluator thread -----------------------------------------------
    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            batch = [job]
            stop = False
            while len(batch) < self.concurrency:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            try:
                self._score(batch)
            except Exception as exc:  # a bug of ours: the batch's cases hear of it
                for j in batch:
                    j.future.set_exception(exc)
            else:
                for j in batch:
                    j.future.set_result(j.result)
            if stop:
                return

    def _score(self, batch: list[_Job]) -> None:
        for ev in self.evaluators:
            name = str(ev.name)
            metrics = [str(m) for m in ev.metrics]
            pending: list[tuple[_Job, dict[str, Any], str | None]] = []
            for job in batch:
                if job.result.error is not None:
                    continue  # an earlier evaluator failed on this case
                try:
                    sample = dict(ev.sample_mapper(job.output, job.case))
                except Exception as exc:
                    job.result.error = {
                        "evaluator": name,
                        "step": "sample_mapper",
                        "type": _type(exc),
                    }
                    if isinstance(exc, SampleError):
                        job.result.error["message"] = str(exc)  # ours: names fields, never values
                    continue
                key = self._key(ev, metrics, sample)
                hit = self._cached(key) if key is not None else None
                if hit is not None:
                    _record(job.result, name, metrics, hit)
                else:
                    pending.append((job, sample, key))
            if not pending:
                continue
            raws: list[Any]
            try:
                raws = list(ev.evaluate([sample for _, sample, _ in pending]))
            except Exception as exc:
                raws = [exc] * len(pending)
            if len(raws) != len(pending):
                raws = [ValueError()] * len(pending)  # one result per sample, or none counts
            for (job, _, key), raw in zip(pending, raws, strict=True):
                if isinstance(raw, BaseException) or not isinstance(raw, Mapping):
                    failure = raw if isinstance(raw, BaseException) else TypeError()
                    job.result.error = {
                        "evaluator": name,
                        "step": "evaluate",
                        "type": _type(failure),
                    }
                    continue
                result = dict(raw)
                if key is not None:
                    self._store(key, result)
                _record(job.result, name, metrics, result)

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


def _record(out: Evaluated, name: str, metrics: list[str], result: Mapping[str, Any]) -> None:
    """An evaluator's result of one case: its numbers, and why the others are missing."""
    for metric in metrics:
        value = result.get(metric)
        full = f"{name}:{metric}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            out.not_measured[full] = "not_returned" if value is None else "not_a_number"
        elif math.isnan(value):
            out.not_measured[full] = "nan"
        else:
            out.metrics[full] = float(value)


def _type(exc: BaseException) -> str:
    return type(exc).__name__
