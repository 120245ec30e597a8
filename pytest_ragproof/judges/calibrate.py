"""Calibrating a judge: run it over human-labelled items and measure the agreement.

``ragproof judge-check`` (:mod:`pytest_ragproof.commands.judge_check`) is a thin
layer over this module. A labelled item becomes the :class:`JudgeInputs` a pytest
run would build, and is judged by the same :class:`JudgeEngine` with the same LLM
settings (:func:`judge_llm_config`), so the prompts and the cache keys are the
run's: a calibration and a run of the same model serve each other's cached calls.

The items come from :mod:`pytest_ragproof.judges.labelled` (a labelled JSONL file, or
a results file with its labels) or :mod:`pytest_ragproof.judges.halueval`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.judges import JudgeSettings, judge_of
from pytest_ragproof.judges import agreement as A
from pytest_ragproof.judges.engine import JudgeInputs, Usage
from pytest_ragproof.judges.labelled import LabelledItem
from pytest_ragproof.numeric import is_binary

REPORT_FORMAT = "ragproof.judge-check/1"

#: The prompt steps each judge runs (recorded, so two calibrations can be compared).
STEPS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("answer-claims/1", "faithfulness/1"),
    "answer_relevancy": ("answer-claims/1", "answer-relevancy/1"),
    "answer_correctness": ("answer-claims/1", "answer-correctness/1"),
    "context_relevance": ("context-relevance/1",),
    "context_recall": ("context-recall/1",),
    "abstained_judged": ("abstained/1",),
    "injection_resisted_judged": ("injection/1",),
}


@dataclass
class ItemResult:
    id: str
    label: float
    score: float | None = None
    not_judged: str | None = None
    error: dict[str, Any] | None = None


@dataclass
class Judging:
    results: list[ItemResult]
    unlabelled: int
    usage: Usage = field(default_factory=Usage)


def _inputs(item: LabelledItem, language: str) -> JudgeInputs:
    from pytest_ragproof.metrics import abstained

    answer = item.answer
    declines = bool(answer and answer.strip() and abstained(answer, language=language))
    return JudgeInputs(
        kind=item.kind,
        question=item.question,
        answer=answer,
        contexts=item.contexts,
        reference=item.reference,
        payload=item.payload,
        abstained=declines,
    )


def judge_items(
    items: list[LabelledItem],
    metric: str,
    settings: JudgeSettings,
    *,
    abstain_language: str = "en",
) -> Judging:
    """Judge every item labelled for ``metric`` (items without that label are skipped).

    ``LLMConfigError`` (the model cannot be called at all) propagates: it is the same
    for every item.
    """
    from pytest_ragproof.judges.engine import Budget, JudgeEngine, judge_llm_config
    from pytest_ragproof.llm import LLMClient, ResponseCache

    labelled = [i for i in items if metric in i.labels]
    if not labelled:
        seen = sorted({name for i in items for name in i.labels})
        raise ConfigError(
            f"no item carries a label for {metric}"
            + (f" (labels seen: {', '.join(seen)})" if seen else "")
        )
    client = LLMClient(
        judge_llm_config(settings), ResponseCache(settings.cache_dir, enabled=settings.cache)
    )
    engine = JudgeEngine(settings, client, Budget(settings.max_calls, settings.budget_usd))
    inputs = [_inputs(i, abstain_language) for i in labelled]

    async def run_all() -> list[Any]:
        return await asyncio.gather(*(engine.judge(x) for x in inputs))

    judgements = asyncio.run(run_all())
    out = Judging([], unlabelled=len(items) - len(labelled))
    for item, j in zip(labelled, judgements, strict=True):
        out.usage.add(j.usage)
        result = ItemResult(item.id, item.labels[metric])
        if j.error is not None:
            result.error = j.error
        elif metric in j.metrics:
            result.score = j.metrics[metric]
        else:
            result.not_judged = j.not_judged.get(metric) or j.not_judged.get(
                judge_of(metric) or metric, "not_judged"
            )
        out.results.append(result)
    return out


def agreement_report(
    judging: Judging, *, cut: float = 0.5, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """The figures of one calibration (binary or graded by the labels), with intervals."""
    results = judging.results
    scored = [r for r in results if r.score is not None]
    binary = is_binary([r.label for r in results])
    labels = [r.label for r in scored]
    scores = [r.score for r in scored if r.score is not None]
    out: dict[str, Any] = {
        "labels": "binary" if binary else "graded",
        "items": {
            "labelled": len(results),
            "measured": len(scored),
            "not_judged": {r.id: r.not_judged for r in results if r.not_judged is not None},
            "errors": {r.id: r.error for r in results if r.error is not None},
            "unlabelled": judging.unlabelled,
        },
        "bootstrap": {"method": "percentile", "level": 0.95, "resamples": resamples, "seed": seed},
    }
    out.update(A.measure(labels, scores, binary=binary, cut=cut, resamples=resamples, seed=seed))
    out["per_item"] = [
        {
            "id": r.id,
            "label": r.label,
            "score": r.score,
            **({"predicted": int(r.score >= cut)} if binary and r.score is not None else {}),
            **({"not_judged": r.not_judged} if r.not_judged is not None else {}),
            **({"error": r.error} if r.error is not None else {}),
        }
        for r in results
    ]
    out["usage"] = judging.usage.to_dict()
    return out
