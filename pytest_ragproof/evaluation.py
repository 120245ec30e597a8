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
from pytest_ragproof.execution.case_path import CasePath
from pytest_ragproof.execution.execute import hand_over
from pytest_ragproof.execution.prefetch import Prefetcher
from pytest_ragproof.results.document import dumps, write_results
from pytest_ragproof.verdict.config import RunConfig, keyword_config
from pytest_ragproof.verdict.decide import DatasetFacts, RunFacts, decide
from pytest_ragproof.verdict.gates import ThresholdResult
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.summary import fmt_score, threshold_table

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
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
    """Every case through the one per-case path, with every call started ahead at once
    when the run looks ahead (the pytest items take the same path, one item at a time)."""
    label = str(dataset.source or "<python>")
    path = CasePath(cfg, loops, stage, evaluators)
    ahead = cfg.lookahead if evaluators is None else cfg.lookahead_with_evaluators()
    if ahead > 1:
        path.prefetcher = Prefetcher(
            cfg,
            cfg.concurrency,
            window=len(cases) * cfg.repeat,
            on_outcome=hand_over(stage, evaluators),
        )
    records = []
    try:
        path.run_ahead(((c.id, c) for c in cases), pipeline)
        for case in cases:
            record = CaseRecord.for_case(
                case, dataset=label, nodeid=f"{label}::{case.id}", pipeline=name
            )
            path.run(record, case, case.id, pipeline)
            records.append(record)
    finally:
        if path.prefetcher is not None:
            path.prefetcher.close(cfg.timeout or 5.0)
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
    judge_response_format: str = defaults.RESPONSE_FORMAT,
    judge_timeout: float | None = None,
    judge_retries: int | None = None,
    judge_max_tokens: int | None = None,
    judge_instructions: str = defaults.JUDGE_INSTRUCTIONS,
    judge_inputs: Callable[[Any, Any], Mapping[str, Any]] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    cache: bool = True,
    evaluators: Sequence[Any] = (),
    **options: Any,
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

    Each keyword above that sets an option is that option's entry of the option table
    (:mod:`pytest_ragproof.verdict.option_table`, its ``api`` name); ``options`` takes the
    keyword of an option declared there and not spelled out above.
    """
    cfg, base_settings = keyword_config(locals(), options, "evaluate()")
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
