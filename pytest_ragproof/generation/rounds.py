"""Top-up rounds: requests planned for what the earlier rounds did not deliver.

Round 1 runs the plan. When verification, near-duplicate removal or invalid
output leave a kind and question type short, the next round asks for exactly
the missing items from chunks not used yet (:func:`~pytest_ragproof.generation.
sampling.plan_top_up`), and the rounds are assembled again one after the
other, so a round never changes the cases of an earlier one. Rounds
stop when every count is met (``complete``), after ``max_rounds``
(``max_rounds``), when no short kind and type has an unused chunk left
(``corpus_exhausted``), or when the only shortfall left comes from provider
failures (``provider_errors``: a failing provider would fail again, so those are
never topped up). Each round depends only on the replies of the earlier ones,
so the same seed and cache give the same rounds and the same output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pytest_ragproof.generation.assemble import Assembly, assemble
from pytest_ragproof.generation.runner import Progress, RequestOutcome, execute
from pytest_ragproof.generation.sampling import Need, plan_top_up

if TYPE_CHECKING:
    from pytest_ragproof.generation.plan import GenerationPlan
    from pytest_ragproof.llm import LLMClient

Stop = Literal["complete", "max_rounds", "corpus_exhausted", "provider_errors"]
#: Called before a top-up round runs: (round number, requests, items asked for).
RoundStart = Callable[[int, int, int], None]


@dataclass(frozen=True)
class RoundReport:
    """One round: its requests and items, and the written total and shortfall after it."""

    round: int
    requests: int
    items: int
    written: int
    shortfall: int


@dataclass(frozen=True)
class Rounds:
    """Every outcome of a run, their assembly, and how the rounds went."""

    outcomes: tuple[RequestOutcome, ...]
    assembly: Assembly
    reports: tuple[RoundReport, ...]
    stopped: Stop
    out_of_chunks: tuple[tuple[str, str], ...]

    @property
    def requests(self) -> int:
        return len(self.outcomes)


def top_up_needs(plan: GenerationPlan, assembly: Assembly) -> list[Need]:
    """Per kind and type, in plan order: the shortfall less its provider failures."""
    needs: list[Need] = []
    for need in plan.needs:
        tally = assembly.tally.get((need.kind, need.question_type))
        if not need.n or tally is None:
            continue
        missing = tally.shortfall - tally.discarded["provider_error"]
        if missing > 0:
            needs.append(Need(need.kind, need.question_type, missing))
    return needs


def run_rounds(
    plan: GenerationPlan,
    client: LLMClient,
    *,
    on_outcome: Progress | None = None,
    on_round: RoundStart | None = None,
) -> Rounds:
    """Run the plan, then top-up rounds until a stop of the module docstring."""
    settings = plan.settings
    model = client.config.model
    first = execute(plan, client, on_outcome=on_outcome)
    rounds = [first]
    outcomes = list(first)
    assembly = assemble(plan, rounds, model)
    reports = [_report(1, first, assembly)]
    out_of_chunks: tuple[tuple[str, str], ...] = ()
    stopped: Stop
    while True:
        if not assembly.shortfall:
            stopped = "complete"
            break
        needs = top_up_needs(plan, assembly)
        if not needs:
            stopped = "provider_errors"
            break
        requests, unplanned = plan_top_up(
            plan.chunks,
            needs,
            seed=settings.seed,
            items_per_request=settings.items_per_request,
            sent=[o.request for o in outcomes],
            first_position=len(outcomes),
        )
        out_of_chunks = tuple(unplanned)
        if not requests:
            stopped = "corpus_exhausted"
            break
        if len(reports) >= settings.max_rounds:
            stopped = "max_rounds"
            break
        number = len(reports) + 1
        if on_round is not None:
            on_round(number, len(requests), sum(r.n_items for r in requests))
        new = execute(plan, client, requests=requests, on_outcome=on_outcome)
        rounds.append(new)
        outcomes += new
        assembly = assemble(plan, rounds, model)
        reports.append(_report(number, new, assembly))
    return Rounds(tuple(outcomes), assembly, tuple(reports), stopped, out_of_chunks)


def _report(number: int, outcomes: list[RequestOutcome], assembly: Assembly) -> RoundReport:
    written = sum(t.written for t in assembly.tally.values())
    items = sum(o.request.n_items for o in outcomes)
    return RoundReport(number, len(outcomes), items, written, assembly.shortfall)
