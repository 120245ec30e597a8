"""A pytest run's LLM judges and bring-your-own evaluators, made on first use.

The pytest side of :mod:`pytest_ragproof.execution.judging` and
:mod:`pytest_ragproof.execution.evaluating`: which fixtures choose what they see
(``rag_judge_inputs``, ``rag_evaluators``), the up-front checks, and closing them at the
end of the session. Nothing here is imported unless a run judges or has evaluators.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof.errors import ConfigError, RagproofError
from pytest_ragproof.plugin.settings import cache_dir
from pytest_ragproof.verdict.config import RunConfig

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.judging import JudgeStage

INPUTS_FIXTURE = "rag_judge_inputs"
EVALUATORS_FIXTURE = "rag_evaluators"


def fixture_value(item: pytest.Item, name: str) -> Any:
    """The value of fixture ``name`` for ``item``, or None when no such fixture exists."""
    request = getattr(item, "_request", None)
    if request is None:
        return None
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return None


def check_judges(config: pytest.Config, cfg: RunConfig) -> None:
    """Up front: judges asked for need litellm and, without the cache, their model's key;
    litellm's own warnings are not the user's."""
    if cfg.judges is None:
        return
    from pytest_ragproof.execution.judging import check_available

    try:
        check_available(cfg.judges)
    except ConfigError as exc:
        raise pytest.UsageError(f"ragproof: {exc}") from None
    if cfg.judges.budget_usd is not None and not cfg.judges.dry_run:
        from pytest_ragproof.llm.provider import has_price

        if not has_price(cfg.judges.model):
            # Costs of such a model are unknown: the budget could never be reached.
            raise pytest.UsageError(
                f"ragproof: --ragproof-judge-budget-usd: litellm has no price for the judge "
                f"model {cfg.judges.model}, so a budget in USD cannot be counted; bound the "
                "run with --ragproof-judge-max-calls N instead, or register the model's "
                "price with litellm.register_model() in conftest.py"
            )
    if not cfg.judges.cache and not cfg.judges.dry_run:
        # Every judge call will be sent (litellm is imported anyway): a missing key is
        # one usage error now, not an error on every case. With the cache on, litellm
        # is imported only on a miss, and the first miss makes the same check.
        from pytest_ragproof.judges.engine import judge_llm_config
        from pytest_ragproof.llm.provider import check_environment

        try:
            check_environment(judge_llm_config(cfg.judges))
        except RagproofError as exc:
            raise pytest.UsageError(f"ragproof: --ragproof-judge-model: {exc}") from None
    # litellm's first calls import provider modules that warn about litellm's own
    # pydantic models; pytest would pin those warnings on whichever case was running.
    config.addinivalue_line("filterwarnings", "ignore:Items? .* on TypedDict class:UserWarning")


class Scorers:
    """The judge stage and the evaluator runner of one pytest process."""

    def __init__(self, config: pytest.Config, cfg: RunConfig, notes: list[str]) -> None:
        self.config = config
        self.cfg = cfg
        self.notes = notes  # the run's notes: what went wrong with the LLM cache goes there
        self.stage: JudgeStage | None = None
        self.evaluators: EvaluatorRunner | None = None
        self._evaluators_looked_up = False
        self._inputs_fixture: Any = None
        self._inputs_looked_up = False

    def judging(self, item: pytest.Item) -> JudgeStage | None:
        """The run's judges, with ``rag_judge_inputs`` if defined."""
        stage = self._stage()
        if stage is None:
            return None
        if not self._inputs_looked_up:
            self._inputs_looked_up = True
            self._inputs_fixture = fixture_value(item, INPUTS_FIXTURE)
        if self._inputs_fixture is not None:
            stage.inputs_fn = self._inputs_fixture
        return stage

    def warm_up(self) -> None:
        """Once the cases are collected: the judges get ready while the first tests run
        (litellm imported on their thread when every call will miss the cache)."""
        stage = self._stage()
        if stage is not None:
            stage.warm_up()

    def _stage(self) -> JudgeStage | None:
        settings = self.cfg.judges
        if settings is None:
            return None
        if self.stage is None:
            from pytest_ragproof.execution.judging import JudgeStage

            share = int(getattr(self.config, "workerinput", {}).get("workercount", 1) or 1)
            self.stage = JudgeStage(settings, self.cfg, share=share)
        return self.stage

    def evaluator_runner(self, item: pytest.Item) -> EvaluatorRunner | None:
        """The run's bring-your-own evaluators (fixture ``rag_evaluators``), looked up once."""
        if self._evaluators_looked_up:
            return self.evaluators
        self._evaluators_looked_up = True
        found = fixture_value(item, EVALUATORS_FIXTURE)
        if not found:
            return None
        from pytest_ragproof.execution.evaluating import EvaluatorRunner, check_evaluators

        try:
            evaluators = check_evaluators(found)
        except ConfigError as exc:
            item.session.shouldstop = "ragproof: rag_evaluators is not usable"
            raise pytest.UsageError(f"ragproof: {exc}") from None
        enabled = not bool(options.get(self.config, "no_cache"))
        self.evaluators = EvaluatorRunner(
            evaluators, cache_dir(self.config), enabled, self.cfg.evaluator_concurrency
        )
        return self.evaluators

    def stop_judging(self) -> None:
        """Stop the judge loop now (cancelling what was judged ahead); the cache stays open."""
        if self.stage is not None:
            self.stage.close()

    def close(self) -> None:
        caches = []
        if self.stage is not None:
            self.stage.close()
            caches.append(self.stage.client.cache)
        if self.evaluators is not None:
            self.evaluators.close()
            caches.append(self.evaluators.cache)
        for cache in caches:
            # Closed, the store is one file again (a CI cache step saves just that file).
            cache.close()
            self.notes.extend(n for n in cache.notes() if n not in self.notes)
