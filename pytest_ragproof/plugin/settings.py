"""pytest's options and ini keys, read into a run's settings objects.

The pytest side of :mod:`pytest_ragproof.verdict.config` and of the baseline
settings: only ``plugin/`` imports pytest (an import-linter contract), so the
execution, verdict, regression and reporting packages get their settings from
here, where a ``pytest.Config`` becomes a :class:`RunConfig` and a
:class:`BaselineSettings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig, make_config

if TYPE_CHECKING:
    from pytest_ragproof.verdict.baseline import BaselineSettings


def _dataset_paths(config: pytest.Config) -> tuple[Path, ...]:
    cli = config.getoption("ragproof_dataset", default=None)
    if cli:
        base = config.invocation_params.dir
        paths = [(base / p).resolve() for p in cli]
    else:
        paths = [Path(p).resolve() for p in config.getini("ragproof_dataset")]
    unique: list[Path] = []
    for p in paths:
        if p not in unique:
            unique.append(p)
    return tuple(unique)


def build(config: pytest.Config) -> RunConfig:
    """Read and validate every ragproof option of a pytest run."""
    get = options.get
    report = get(config, "report")
    return make_config(
        datasets=_dataset_paths(config),
        pipeline_fixture=str(get(config, "pipeline_fixture")),
        k=str(get(config, "k")),
        source_match=str(get(config, "source_match")),
        kinds=get(config, "kind"),
        splits=get(config, "split"),
        tags=get(config, "tag"),
        case_thresholds=get(config, "case_threshold"),
        aggregate_thresholds=get(config, "aggregate_threshold"),
        timeout=get(config, "timeout"),
        injection_delivery=str(get(config, "injection_delivery")),
        abstain_language=str(get(config, "abstain_language")),
        abstain_patterns=get(config, "abstain_pattern"),
        report=(config.invocation_params.dir / str(report)).resolve() if report else None,
        concurrency=get(config, "concurrency"),
        repeat=get(config, "repeat"),
        min_pass_rate=get(config, "min_pass_rate"),
        redact=bool(get(config, "redact")),
        worst=get(config, "worst"),
        xfail_tags=get(config, "xfail_tag"),
        components=str(get(config, "components")),
        baseline=baseline_settings(config),
        judges=get(config, "judges"),
        judge_model=get(config, "judge_model"),
        judge_api_base=get(config, "judge_api_base"),
        judge_concurrency=get(config, "judge_concurrency"),
        evaluator_concurrency=get(config, "evaluator_concurrency"),
        judge_budget_usd=get(config, "judge_budget_usd"),
        judge_max_calls=get(config, "judge_max_calls"),
        judge_dry_run=bool(get(config, "judge_dry_run")),
        judge_response_format=str(get(config, "judge_response_format")),
        judge_timeout=get(config, "judge_timeout"),
        judge_retries=get(config, "judge_retries"),
        judge_max_tokens=get(config, "judge_max_tokens"),
        judge_instructions=str(get(config, "judge_instructions")),
        cache_dir=cache_dir(config),
        cache=not bool(get(config, "no_cache")),
    )


def cache_dir(config: pytest.Config) -> str | None:
    """``--ragproof-cache-dir`` resolved against the invocation folder (None: the default)."""
    given = options.get(config, "cache_dir")
    return str((config.invocation_params.dir / str(given)).resolve()) if given else None


def baseline_settings(config: pytest.Config) -> BaselineSettings | None:
    """``--ragproof-baseline`` and the regression options, validated; None without a baseline."""
    from pytest_ragproof.verdict.baseline import baseline_settings as settings

    get = options.get
    shown = get(config, "baseline")
    if not shown:
        return None
    return settings(
        (config.invocation_params.dir / str(shown)).resolve(),
        shown=str(shown),
        update=bool(get(config, "baseline_update")),
        tolerances=tuple(get(config, "regression_tolerance")),
        alpha=get(config, "regression_alpha"),
        allow_dataset_change=bool(get(config, "baseline_allow_dataset_change")),
        fail_on_case_regression=bool(get(config, "fail_on_case_regression")),
    )


def check_outputs(config: pytest.Config, report: Path | None) -> None:
    """Refuse output paths that would replace a file ragproof did not write for that purpose."""
    from pytest_ragproof.verdict.baseline import sniff
    from pytest_ragproof.verdict.exports import EXPORTERS, refusal

    for name in EXPORTERS:
        target = options.get(config, name)
        if target:
            path = (config.invocation_params.dir / str(target)).resolve()
            why = refusal(name, path, f"--ragproof-{name} {target}")
            if why is not None:
                raise ConfigError(why)
    labels = options.get(config, "inspectorraget_labels")
    if labels:
        if not options.get(config, "inspectorraget"):
            raise ConfigError(
                "--ragproof-inspectorraget-labels goes with --ragproof-inspectorraget PATH "
                "(the export that shows the labels)"
            )
        if options.get(config, "redact"):
            raise ConfigError(
                "--ragproof-inspectorraget-labels: a run with --ragproof-redact keeps no answer "
                "or context to match labels with; drop one of the two options"
            )
        from pytest_ragproof.errors import DatasetError
        from pytest_ragproof.labels import read_labels

        try:
            read_labels(config.invocation_params.dir / str(labels))
        except DatasetError as exc:
            raise ConfigError(f"--ragproof-inspectorraget-labels: {exc}") from None
    kind = sniff(report) if report is not None else None
    if kind in ("dataset", "other"):
        what = "a ragproof dataset" if kind == "dataset" else "not a ragproof results file"
        raise ConfigError(
            f"--ragproof-report {options.get(config, 'report')} is {what}; ragproof will not "
            "replace it; choose a new path such as results.json"
        )
