"""LLM judges: faithfulness, relevancy, correctness, context quality, refusal, injection.

Importing this package is cheap (names and settings only): the prompts, the pydantic
schemas and the engine are imported by :mod:`pytest_ragproof.execution.judging` when a
run asks for a judge, and litellm only when a judge call misses the cache.

Layout: :mod:`~pytest_ragproof.judges.engine` makes the calls (budget, dry run, usage,
errors) and runs the judges of a case; each judge is one module holding its versioned
prompt step, what it needs and how it scores (``faithfulness``, ``answer_relevancy``,
``answer_correctness``, ``context_relevance``, ``context_recall``, ``abstained``,
``injection``), on what :mod:`~pytest_ragproof.judges.base` defines;
:mod:`~pytest_ragproof.judges.claims` extracts the answer's claims the first three share.

A judge is named by the metric it produces; ``answer_correctness`` also reports
``answer_correctness_precision`` and ``answer_correctness_recall``. A run asks for
judges by naming one of these metrics in a threshold or a tolerance, or with
``--ragproof-judges`` (``all`` for every judge).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pytest_ragproof import defaults
from pytest_ragproof.defaults import RESPONSE_FORMATS as RESPONSE_FORMATS
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.metrics.judged import JUDGE_SPECS

# Read from the one judge registry (pytest_ragproof.metrics.judged).
#: Every judge, in the order docs and reports list them.
JUDGES: tuple[str, ...] = tuple(s.name for s in JUDGE_SPECS)

#: Extra metrics a judge reports besides its own name.
SIDE_METRICS: dict[str, tuple[str, ...]] = {
    s.name: tuple(m.name for m in s.side) for s in JUDGE_SPECS if s.side
}

#: The case kinds each judge applies to.
JUDGE_KINDS: dict[str, frozenset[str]] = {s.name: s.kinds for s in JUDGE_SPECS}

#: Why a judged metric is absent on a case (``not_judged`` in the results).
NOT_JUDGED_REASONS: dict[str, str] = {
    "no_answer": "the pipeline returned no answer (or an empty one)",
    "no_claims": "the answer makes no claim that could be checked",
    "abstained": "the answer declines to answer",
    "no_contexts": "the pipeline returned no contexts",
    "no_reference": "the case has no expected_answer",
    "no_payload": "the case has no adversarial_payload",
    "budget": "the judge budget was reached before this case was judged",
    "dry_run": "--ragproof-judge-dry-run: nothing was judged",
    "not_run": "judging stopped before this case (interrupted run)",
}


def judge_of(metric: str) -> str | None:
    """The judge that produces ``metric`` (its own name or a side metric), else None."""
    if metric in JUDGE_KINDS:
        return metric
    for judge, side in SIDE_METRICS.items():
        if metric in side:
            return judge
    return None


def metrics_of(judges: Iterable[str]) -> list[str]:
    """Every metric name the given judges report."""
    out: list[str] = []
    for judge in judges:
        out.append(judge)
        out.extend(SIDE_METRICS.get(judge, ()))
    return out


def parse_judges(values: Iterable[str]) -> frozenset[str]:
    """``--ragproof-judges`` values (comma-separated, repeatable; ``all``) as judge names."""
    names: set[str] = set()
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if not name:
                continue
            if name == "all":
                names.update(JUDGES)
                continue
            judge = judge_of(name)
            if judge is None:
                import difflib

                close = difflib.get_close_matches(name, [*JUDGES, "all"], n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise ConfigError(
                    f"--ragproof-judges: unknown judge '{name}'{hint}; "
                    f"choose from all, {', '.join(JUDGES)}"
                )
            names.add(judge)
    return frozenset(names)


@dataclass(frozen=True)
class JudgeSettings:
    """How a run judges: which judges, which model, how many calls at once, what budget."""

    judges: frozenset[str]
    model: str
    api_base: str | None = None
    concurrency: int = defaults.JUDGE_CONCURRENCY
    budget_usd: float | None = None
    max_calls: int | None = None
    dry_run: bool = False
    response_format: str = defaults.RESPONSE_FORMAT
    cache_dir: str | None = None
    cache: bool = True
    timeout_s: float = defaults.LLM_TIMEOUT_S
    max_retries: int = defaults.LLM_RETRIES
    #: Completion budget of every judge call; None: each step's own (llm.request).
    max_tokens: int | None = None
    #: ``system`` or ``user``: where the judge instructions go (llm.config).
    instructions: str = defaults.JUDGE_INSTRUCTIONS

    def settings(self) -> dict[str, object]:
        """What the results document records (no secrets: keys come from the environment).

        The budget and the instructions' place are recorded only when set: they change
        what the judge sees, and a run without them reads as it always did.
        """
        out: dict[str, object] = {
            "judges": sorted(self.judges),
            "judge_model": self.model,
            "judge_response_format": self.response_format,
        }
        if self.max_tokens is not None:
            out["judge_max_tokens"] = self.max_tokens
        if self.instructions != defaults.JUDGE_INSTRUCTIONS:
            out["judge_instructions"] = self.instructions
        return out
