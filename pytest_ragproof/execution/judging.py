"""Running the LLM judges of a run: one background event loop, one client, one budget.

Judging starts as soon as a case's pipeline output exists: with look-ahead
(:mod:`pytest_ragproof.execution.prefetch`) the prefetch thread hands each outcome
over the moment it lands, so judge calls of upcoming cases run while pytest's
loop is still on an earlier item; at most ``--ragproof-judge-concurrency`` judge
calls are in flight (per process: each xdist worker has its own bound). The item
of a case then waits for its own judgement only.

Imported only when a run asks for a judge; litellm is imported by the client on
the first call that misses the cache, so a fully cached re-run never imports it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError, LLMConfigError, OutputShapeError
from pytest_ragproof.execution.execute import Judged, Outcome
from pytest_ragproof.execution.prefetch import stop_loop
from pytest_ragproof.judges import JudgeSettings
from pytest_ragproof.judges.engine import (
    Budget,
    JudgeEngine,
    JudgeInputs,
    JudgingStopped,
    Usage,
    judge_llm_config,
)
from pytest_ragproof.llm.client import load_litellm
from pytest_ragproof.llm.slots import request_priority
from pytest_ragproof.metrics import PipelineOutput, abstained, normalize_output
from pytest_ragproof.verdict.config import RunConfig

#: The optional fixture that chooses what the judges see.
INPUTS_FIXTURE = "rag_judge_inputs"
_INPUT_FIELDS = ("question", "answer", "contexts", "reference")

InputsFn = Callable[[PipelineOutput, Case], Mapping[str, Any]]


class JudgeInputsError(Exception):
    """``rag_judge_inputs`` raised or returned something unusable (message is ours)."""


def default_inputs(output: PipelineOutput, case: Case) -> dict[str, Any]:
    """What the judges see unless ``rag_judge_inputs`` says otherwise."""
    return {
        "question": case.question,
        "answer": output.answer,
        "contexts": None if output.contexts is None else [c.text for c in output.contexts],
        "reference": case.expected_answer,
    }


def _checked_inputs(fields: object) -> dict[str, Any]:
    if not isinstance(fields, Mapping):
        raise JudgeInputsError(
            f"{INPUTS_FIXTURE} must return a mapping with keys from {', '.join(_INPUT_FIELDS)}; "
            f"got {type(fields).__name__}"
        )
    unknown = sorted(str(k) for k in fields if k not in _INPUT_FIELDS)
    if unknown:
        raise JudgeInputsError(
            f"{INPUTS_FIXTURE} returned unknown field(s) {', '.join(unknown)}; "
            f"the judges read {', '.join(_INPUT_FIELDS)}"
        )
    out = dict(fields)
    for name in ("question", "answer", "reference"):
        value = out.get(name)
        if value is not None and not isinstance(value, str):
            raise JudgeInputsError(
                f"{INPUTS_FIXTURE}: '{name}' must be a string or None; got {type(value).__name__}"
            )
    contexts = out.get("contexts")
    if contexts is not None and (
        isinstance(contexts, str)
        or not isinstance(contexts, list | tuple)
        or not all(isinstance(c, str) for c in contexts)
    ):
        raise JudgeInputsError(f"{INPUTS_FIXTURE}: 'contexts' must be a list of strings or None")
    return out


class JudgeStage:
    """The judges of one process: submit outcomes as they land, collect per case."""

    def __init__(self, settings: JudgeSettings, cfg: RunConfig, *, share: int = 1) -> None:
        from pytest_ragproof.llm import LLMClient, ResponseCache

        self.settings = settings
        self.cfg = cfg
        # Under xdist each worker gets an equal share, so the run never exceeds the budget.
        max_calls = None if settings.max_calls is None else settings.max_calls // share
        budget_usd = None if settings.budget_usd is None else settings.budget_usd / share
        self.budget = Budget(max_calls, budget_usd)
        config = judge_llm_config(settings)
        self.client = LLMClient(config, ResponseCache(settings.cache_dir, enabled=settings.cache))
        self.engine = JudgeEngine(settings, self.client, self.budget)
        self.inputs_fn: InputsFn | None = None
        self.totals = Usage()
        self.cases_judged = 0
        self._futures: dict[str, concurrent.futures.Future[Judged]] = {}
        self._order = itertools.count()  # cases in the order they were submitted
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- the loop -----------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="ragproof-judges", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def warm_up(self) -> None:
        """Import litellm (and ask a local server its structured form) now, on the judges'
        thread, when every judge call will miss the cache: the cache is off or holds
        nothing yet. The work then overlaps with what comes before the first judge step
        (other tests, the first pipeline calls) instead of delaying that step; a run the
        cache may answer whole still never imports litellm. Any error is left for the
        first real call to meet and report."""
        cache = self.client.cache
        if self.settings.dry_run or (cache.enabled and cache.path.exists()):
            return
        asyncio.run_coroutine_threadsafe(self._warm(), self._ensure_loop())

    async def _warm(self) -> None:
        try:
            load_litellm()
            await self.client.provider.structured_mode()
        except Exception:
            pass

    # -- submitting ---------------------------------------------------------
    def submit(self, key: str, case: Case, outcome: Outcome) -> None:
        """Start judging ``outcome`` (any thread); a failed or unscorable call is not judged."""
        if outcome.error is not None or outcome.timed_out:
            return
        if outcome.output is None:
            try:
                outcome.output = normalize_output(outcome.raw)
            except OutputShapeError:
                return  # finish_case reports the shape error
        try:
            inputs = self._inputs(outcome.output, case)
        except JudgeInputsError as exc:
            done: concurrent.futures.Future[Judged] = concurrent.futures.Future()
            done.set_result(Judged(inputs_error=str(exc)))
            with self._lock:
                self._futures[key] = done
            return
        memo_key, hit = self.engine.lookup(inputs)
        if hit is not None:
            # Judged before with the same inputs and code: no call, so no loop round trip.
            replayed: concurrent.futures.Future[Judged] = concurrent.futures.Future()
            replayed.set_result(Judged(hit.judgement))
            with self._lock:
                self._futures[key] = replayed
            return
        with self._lock:
            order = next(self._order)
        judging = self._judge(inputs, order, memo_key)
        future = asyncio.run_coroutine_threadsafe(judging, self._ensure_loop())
        with self._lock:
            self._futures[key] = future

    def _inputs(self, output: PipelineOutput, case: Case) -> JudgeInputs:
        fields = default_inputs(output, case)
        if self.inputs_fn is not None:
            try:
                chosen = self.inputs_fn(output, case)
            except Exception as exc:
                raise JudgeInputsError(
                    f"the fixture {INPUTS_FIXTURE} raised {type(exc).__name__}"
                ) from None
            fields = {**fields, **_checked_inputs(chosen)}
        answer = fields.get("answer")
        contexts = fields.get("contexts")
        is_abstention = (
            isinstance(answer, str)
            and bool(answer.strip())
            and bool(
                abstained(
                    answer,
                    language=self.cfg.abstain_language,
                    extra_patterns=self.cfg.abstain_patterns,
                )
            )
        )
        return JudgeInputs(
            kind=case.kind,
            question=fields.get("question") or "",
            answer=answer,
            contexts=None if contexts is None else tuple(contexts),
            reference=fields.get("reference"),
            payload=case.adversarial_payload,
            abstained=is_abstention,
        )

    async def _judge(self, inputs: JudgeInputs, order: int, memo_key: str | None) -> Judged:
        # Every request of this case waits for a slot behind earlier cases' requests
        # only: cases finish in the order items ask for them, and the look-ahead moves.
        request_priority.set(order)
        try:
            judgement = await self.engine.judge(inputs, missed=memo_key)
        except LLMConfigError as exc:
            usage = exc.usage if isinstance(exc, JudgingStopped) else None
            return Judged(config_error=str(exc), stopped_usage=usage)
        return Judged(judgement)

    # -- collecting ---------------------------------------------------------
    def result(self, key: str) -> Judged | None:
        """Wait for the judgement of ``key``; None when it was not judged at all."""
        with self._lock:
            future = self._futures.pop(key, None)
        if future is None:
            return None
        judged = future.result()
        if judged.judgement is not None:
            self.totals.add(judged.judgement.usage)
            self.cases_judged += 1
        elif judged.stopped_usage is not None:
            self.totals.add(judged.stopped_usage)  # failed requests are spent too
        return judged

    def collect(self, key: str, outcome: Outcome) -> Judged | None:
        """The judgement of a call made ahead; none for a call that timed out (forgotten)."""
        if outcome.timed_out:
            self.discard(key)
            return None
        return self.result(key)

    def judge_now(self, key: str, case: Case, outcome: Outcome) -> Judged | None:
        self.submit(key, case, outcome)
        return self.result(key)

    def discard(self, key: str) -> None:
        """Forget a case whose item will not collect its judgement (its call timed out)."""
        with self._lock:
            future = self._futures.pop(key, None)
        if future is not None:
            future.cancel()

    def close(self) -> None:
        loop = self._loop
        if loop is None:
            return

        stop_loop(loop, self._thread, 5.0)
        self._loop = None

    # -- what the summary says ----------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Totals for the results document and the summary line."""
        out: dict[str, Any] = {
            "model": self.settings.model,
            "judges": sorted(self.settings.judges),
            "cases_judged": self.cases_judged,
            **self.totals.to_dict(),
            "budget_reached": self.budget.reached,
        }
        if self.budget.unpriced and self.settings.budget_usd is not None:
            out["unpriced_calls"] = self.budget.unpriced
        return out


def check_available(settings: JudgeSettings) -> None:
    """Fail up front when judges are asked for but litellm is not installed."""
    import importlib.util

    if settings.dry_run:
        return
    if importlib.util.find_spec("litellm") is None:
        raise ConfigError(
            "LLM judges need litellm: pip install 'pytest-ragproof[llm]' "
            f"(asked for: {', '.join(sorted(settings.judges))})"
        )
