"""``evaluate()``: the pytest runner's scoring and verdicts from a notebook or script.

::

    from pytest_ragproof import evaluate

    results = evaluate("cases.frozen.json", my_pipeline,
                       thresholds=["qa:recall@5>=0.8"], concurrency=8)
    results.passed, results.failed_cases()
    results.write("results.json")      # the same ragproof.results/1 format as pytest

Several pipelines are compared by passing a mapping ``{"name": callable}``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.execution.call import LoopOwner, check_signature
from pytest_ragproof.execution.execute import Outcome, hand_over
from pytest_ragproof.execution.prefetch import Prefetcher
from pytest_ragproof.execution.repeat import case_outcomes, finish_repeats, repeat_keys
from pytest_ragproof.results.document import dumps, write_results
from pytest_ragproof.verdict.config import RunConfig, make_config
from pytest_ragproof.verdict.decide import DatasetFacts, RunFacts, decide
from pytest_ragproof.verdict.gates import ThresholdResult
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.summary import fmt_score, threshold_table

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.execute import Judged
    from pytest_ragproof.execution.judging import JudgeStage
    from pytest_ragproof.results.models import Aggregate
    from pytest_ragproof.results.models import Results as ResultsModel

__all__ = ["Results", "evaluate"]


@dataclass
class Results:
    """Scored cases, threshold verdicts and the results document of one evaluation."""

    records: list[CaseRecord]
    thresholds: list[ThresholdResult]
    document: dict[str, Any] = field(repr=False)
    config: RunConfig = field(repr=False)

    @cached_property
    def model(self) -> ResultsModel:
        """The results document as its typed model (:mod:`pytest_ragproof.results.models`)."""
        from pytest_ragproof.results.schema import results_model

        return results_model(self.document)

    @property
    def passed(self) -> bool:
        return self.model.passed

    def failed_cases(self) -> list[CaseRecord]:
        """Cases that failed a threshold or errored."""
        return [r for r in self.records if r.status != "passed"]

    def to_dict(self) -> dict[str, Any]:
        """The results document (``ragproof.results/1``), as pytest writes it."""
        return self.document

    def to_json(self) -> str:
        return dumps(self.document)

    def to_pandas(self) -> Any:
        """The scored cases as a pandas DataFrame: one row per case and pipeline, metrics as
        columns (``<NA>`` where a case has no value). Redacted runs have no text columns'
        values. Needs pandas (``pip install pandas``).
        """
        from pytest_ragproof.dataset.frames import results_frame

        return results_frame(self.model.cases)

    def write(self, path: str | os.PathLike[str]) -> Path:
        target = Path(path)
        write_results(self.document, target)
        return target

    def summary(self) -> str:
        """The threshold table the pytest summary prints; a run without thresholds
        (``case_thresholds=["none"]``) gets its aggregates per pipeline and case kind."""
        if self.thresholds:
            return threshold_table(self.thresholds, self.records)
        return _aggregate_table(self.model.aggregates)

    def __repr__(self) -> str:
        failed = len(self.failed_cases())
        verdict = "passed" if self.passed else "FAILED"
        return f"<Results {verdict}: {len(self.records)} case run(s), {failed} not passed>"


def _aggregate_table(aggregates: Sequence[Aggregate]) -> str:
    from tabulate import tabulate

    from pytest_ragproof.vocabulary import KINDS

    rows = [
        [a.pipeline, a.selector, a.metric, a.n]
        + [fmt_score(a.values.get(v)) for v in ("mean", "min", "p50", "p95")]
        for a in aggregates
        if a.selector in KINDS
    ]
    if not rows:
        return "no case was scored: no aggregates"
    headers = ["pipeline", "selector", "metric", "n", "mean", "min", "p50", "p95"]
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))


def _as_dataset(dataset: Dataset | str | os.PathLike[str] | Iterable[Mapping[str, Any]]) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else load_dataset(dataset)


def _run_pipeline(
    name: str,
    pipeline: Callable[..., Any],
    dataset: Dataset,
    cases: Sequence[Any],
    cfg: RunConfig,
    loops: LoopOwner,
    stage: JudgeStage | None,
    evaluators: EvaluatorRunner | None = None,
) -> list[CaseRecord]:
    label = str(dataset.source or "<python>")
    keys = {c.id: repeat_keys(c.id, cfg.repeat) for c in cases}
    gathered: dict[str, tuple[list[Outcome], list[Judged | None]]] = {}
    ahead = cfg.lookahead if evaluators is None else cfg.lookahead_with_evaluators()
    prefetcher = None
    if ahead > 1:
        prefetcher = Prefetcher(
            cfg,
            cfg.concurrency,
            window=len(cases) * cfg.repeat,
            on_outcome=hand_over(stage, evaluators),
        )
    try:
        if prefetcher is not None:
            prefetcher.submit(((k, c) for c in cases for k in keys[c.id]), pipeline)
        for c in cases:
            gathered[c.id] = case_outcomes(c, keys[c.id], pipeline, cfg, loops, stage, prefetcher)
    finally:
        if prefetcher is not None:
            prefetcher.close(cfg.timeout or 5.0)
    records = []
    for case in cases:
        record = CaseRecord.for_case(
            case, dataset=label, nodeid=f"{label}::{case.id}", pipeline=name
        )
        outcomes, judged = gathered[case.id]
        finish_repeats(record, case, outcomes, cfg, judged, evaluators)
        records.append(record)
    return records


def evaluate(
    dataset: Dataset | str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    pipeline: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    *,
    thresholds: Sequence[str] = (),
    case_thresholds: Sequence[str] = (),
    k: Sequence[int] | str = defaults.K,
    source_match: str = defaults.SOURCE_MATCH,
    concurrency: int = defaults.CONCURRENCY,
    repeat: int = defaults.REPEAT,
    min_pass_rate: float = defaults.MIN_PASS_RATE,
    timeout: float | None = None,
    injection_delivery: str = defaults.INJECTION_DELIVERY,
    kinds: Sequence[str] = (),
    splits: Sequence[str] = (),
    tags: Sequence[str] = (),
    abstain_language: str = defaults.ABSTAIN_LANGUAGE,
    abstain_patterns: Sequence[str] = (),
    redact: bool = False,
    pipeline_name: str = defaults.PIPELINE_FIXTURE,
    baseline: str | os.PathLike[str] | None = None,
    baseline_update: bool = False,
    regression_tolerances: Sequence[str] = (),
    regression_alpha: float = defaults.REGRESSION_ALPHA,
    baseline_allow_dataset_change: bool = False,
    fail_on_case_regression: bool = False,
    judges: Sequence[str] = (),
    judge_model: str | None = None,
    judge_api_base: str | None = None,
    judge_concurrency: int = defaults.JUDGE_CONCURRENCY,
    evaluator_concurrency: int = defaults.EVALUATOR_CONCURRENCY,
    judge_budget_usd: float | None = None,
    judge_max_calls: int | None = None,
    judge_dry_run: bool = False,
    judge_response_format: str = "auto",
    judge_timeout: float | None = None,
    judge_retries: int | None = None,
    judge_max_tokens: int | None = None,
    judge_instructions: str = "system",
    judge_inputs: Callable[[Any, Any], Mapping[str, Any]] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    cache: bool = True,
    evaluators: Sequence[Any] = (),
) -> Results:
    """Run ``pipeline`` over the dataset's cases and score them as the pytest plugin does.

    ``thresholds`` are aggregate thresholds (``'qa:recall@5>=0.8'``); ``case_thresholds``
    are per-case ones (the defaults apply unless one of them is ``'none'``). A pipeline
    exception or timeout is a case with status ``error``; nothing raises for a bad case.
    ``pipeline`` may be a mapping of names to callables to compare several pipelines.
    ``baseline`` compares the run with a results file as ``--ragproof-baseline`` does
    (``baseline_update=True`` writes it instead), with the same regression settings.
    ``repeat`` calls the pipeline that many times per case (``--ragproof-repeat``): a case
    then carries the repeats' mean metrics, ``pass_rate`` and ``repeats``, and passes when
    its pass rate is at least ``min_pass_rate``.

    ``evaluators`` (bring-your-own, docs/evaluators.md) score at most
    ``evaluator_concurrency`` cases at once (``--ragproof-evaluator-concurrency``).

    A pipeline that requires a parameter ragproof never passes (anything but the
    question, ``history`` and ``case`` without a default) raises
    :class:`~pytest_ragproof.errors.PipelineSignatureError` (a ``ConfigError``)
    before any case runs.
    """
    base_settings = None
    if baseline is not None:
        from pytest_ragproof.verdict.baseline import baseline_settings

        base_settings = baseline_settings(
            Path(baseline).resolve(),
            shown=str(baseline),
            update=baseline_update,
            tolerances=regression_tolerances,
            alpha=regression_alpha,
            allow_dataset_change=baseline_allow_dataset_change,
            fail_on_case_regression=fail_on_case_regression,
        )
    cfg = make_config(
        k=k,
        source_match=source_match,
        kinds=kinds,
        splits=splits,
        tags=tags,
        case_thresholds=case_thresholds,
        aggregate_thresholds=thresholds,
        timeout=timeout,
        injection_delivery=injection_delivery,
        abstain_language=abstain_language,
        abstain_patterns=abstain_patterns,
        concurrency=concurrency,
        repeat=repeat,
        min_pass_rate=min_pass_rate,
        redact=redact,
        baseline=base_settings,
        judges=judges,
        judge_model=judge_model,
        judge_api_base=judge_api_base,
        judge_concurrency=judge_concurrency,
        evaluator_concurrency=evaluator_concurrency,
        judge_budget_usd=judge_budget_usd,
        judge_max_calls=judge_max_calls,
        judge_dry_run=judge_dry_run,
        judge_response_format=judge_response_format,
        judge_timeout=judge_timeout,
        judge_retries=judge_retries,
        judge_max_tokens=judge_max_tokens,
        judge_instructions=judge_instructions,
        cache_dir=None if cache_dir is None else str(cache_dir),
        cache=cache,
    )
    stage: JudgeStage | None = None
    if cfg.judges is not None:
        from pytest_ragproof.execution.judging import JudgeStage, check_available

        check_available(cfg.judges)
        stage = JudgeStage(cfg.judges, cfg)
        stage.inputs_fn = judge_inputs
    runner: EvaluatorRunner | None = None
    if evaluators:
        from pytest_ragproof.execution.evaluating import EvaluatorRunner, check_evaluators

        runner = EvaluatorRunner(
            check_evaluators(list(evaluators)),
            None if cache_dir is None else str(cache_dir),
            cache,
            cfg.evaluator_concurrency,
        )
    ds = _as_dataset(dataset)
    pipelines = dict(pipeline) if isinstance(pipeline, Mapping) else {pipeline_name: pipeline}
    for fn in pipelines.values():
        check_signature(fn)
    cases = sorted(cfg.population(ds.cases), key=lambda c: c.id)
    loops = LoopOwner()
    records: list[CaseRecord] = []
    try:
        if stage is not None and cases:
            stage.warm_up()  # litellm imported meanwhile, when the cache cannot answer
        for name, fn in pipelines.items():
            records.extend(_run_pipeline(name, fn, ds, cases, cfg, loops, stage, runner))
    finally:
        loops.close()
        caches = []
        if stage is not None:
            stage.close()
            caches.append(stage.client.cache)
        if runner is not None:
            runner.close()
            caches.append(runner.cache)
        notes: list[str] = []
        for store in caches:
            store.close()  # the store is one file again
            notes.extend(n for n in store.notes() if n not in notes)
    label = str(ds.source or "<python>")
    facts = RunFacts(
        records=records,
        datasets=[DatasetFacts(label, ds, len(cases))],
        expected=len(records),
        selected=len(records),
        notes=notes,
    )
    outcome = decide(facts, cfg)
    if outcome.baseline_write is not None and base_settings is not None:
        write_results(outcome.baseline_write, base_settings.path)
    records = sorted(records, key=lambda r: (r.pipeline, r.nodeid))
    verdicts = outcome.thresholds
    document = outcome.document
    return Results(records=records, thresholds=verdicts, document=document, config=cfg)
