"""The one per-case path: a case's pipeline calls, judgement, scoring and repeats.

``evaluate()`` (:mod:`pytest_ragproof.evaluation`) and the pytest items
(:mod:`pytest_ragproof.plugin.items`, marker tests in :mod:`pytest_ragproof.plugin.marker`)
run every case through a :class:`CasePath`, so the two reach the same verdict by the
same code (``tests/judges/test_one_path.py`` compares the two and checks that nothing
else in the package calls the steps below):

1. the case's calls, one per repeat (:func:`repeat_keys`): taken from the look-ahead
   when a :class:`~pytest_ragproof.execution.prefetch.Prefetcher` runs ahead (judged as
   they landed), otherwise made now and judged in turn; a marked test makes its own
   calls and :meth:`CasePath.conclude` judges them;
2. :func:`~pytest_ragproof.execution.repeat.finish_repeats` scores each call
   (:func:`~pytest_ragproof.execution.execute.finish_case`: the judgement, the
   evaluators' scores, the deterministic metrics and case thresholds) and folds N calls
   into the case's record; one call is that call's record.

What the caller does with the verdict differs: pytest fails the item, ``evaluate()``
keeps the record. Pure and pytest-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.execution.execute import Outcome, call_case
from pytest_ragproof.execution.repeat import RepeatVerdict, finish_repeats
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.record import CaseRecord

if TYPE_CHECKING:
    from pytest_ragproof.execution.call import LoopOwner
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.execute import Judged
    from pytest_ragproof.execution.judging import JudgeStage
    from pytest_ragproof.execution.prefetch import Prefetcher

__all__ = ["CasePath", "repeat_keys"]


def repeat_keys(key: str, n: int) -> list[str]:
    """The prefetch/judging keys of a case's calls: ``key`` itself when it runs once."""
    return [key] if n == 1 else [f"{key}#r{i}" for i in range(1, n + 1)]


@dataclass(slots=True)
class CasePath:
    """What a run gives each case: its settings, event loops, judge stage, evaluators and
    look-ahead (``None`` where the run has none)."""

    cfg: RunConfig
    loops: LoopOwner
    stage: JudgeStage | None = None
    evaluators: EvaluatorRunner | None = None
    prefetcher: Prefetcher | None = None

    def run_ahead(self, cases: Iterable[tuple[str, Case]], pipeline: Any) -> None:
        """Start the calls of these ``(key, case)`` pairs on the look-ahead, if any: each
        repeat is a submission of its own, so a case's repeats run concurrently."""
        if self.prefetcher is None:
            return
        n = self.cfg.repeat
        self.prefetcher.submit([(k, c) for key, c in cases for k in repeat_keys(key, n)], pipeline)

    def run(self, record: CaseRecord, case: Case, key: str, pipeline: Any) -> RepeatVerdict:
        """Call ``pipeline`` for ``case`` (``cfg.repeat`` times), judge, score, conclude
        into ``record``. ``key`` names the case in the look-ahead (:meth:`run_ahead`)."""
        __tracebackhide__ = True
        outcomes: list[Outcome] = []
        judged: list[Judged | None] = []
        stage, prefetcher = self.stage, self.prefetcher
        for k in repeat_keys(key, self.cfg.repeat):
            if prefetcher is None:
                outcome = call_case(pipeline, case, self.cfg, self.loops)
                judged.append(None if stage is None else stage.judge_now(k, case, outcome))
            else:
                outcome = prefetcher.outcome(k)
                judged.append(None if stage is None else stage.collect(k, outcome))
            outcomes.append(outcome)
        return finish_repeats(record, case, outcomes, self.cfg, judged, self.evaluators)

    def conclude(
        self, record: CaseRecord, case: Case, key: str, outcomes: Sequence[Outcome]
    ) -> RepeatVerdict:
        """The same for calls the caller made (a marked test): judged now, in turn."""
        stage = self.stage
        judged = [
            None if stage is None else stage.judge_now(k, case, outcome)
            for k, outcome in zip(repeat_keys(key, len(outcomes)), outcomes, strict=True)
        ]
        return finish_repeats(record, case, outcomes, self.cfg, judged, self.evaluators)
