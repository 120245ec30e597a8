"""pytest's options and ini keys, read into a run's settings objects.

The pytest side of :mod:`pytest_ragproof.verdict.config` and of the baseline
settings: only ``plugin/`` imports pytest (an import-linter contract), so the
execution, verdict, regression and reporting packages get their settings from
here, where a ``pytest.Config`` becomes a :class:`RunConfig` and a
:class:`BaselineSettings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig, baseline_from, make_config
from pytest_ragproof.verdict.option_table import options_of
from pytest_ragproof.verdict.options import Option

if TYPE_CHECKING:
    from pytest_ragproof.verdict.baseline import BaselineSettings


def _dataset_paths(config: pytest.Config, opt: Option) -> tuple[Path, ...]:
    cli = config.getoption(opt.dest, default=None)
    if cli:
        base = config.invocation_params.dir
        paths = [(base / p).resolve() for p in cli]
    else:
        paths = [Path(p).resolve() for p in config.getini(opt.ini)]
    unique: list[Path] = []
    for p in paths:
        if p not in unique:
            unique.append(p)
    return tuple(unique)


def keyword_value(config: pytest.Config, opt: Option) -> Any:
    """An option's value as ``make_config`` takes its keyword: paths resolved against the
    folder pytest was started in (an ini ``paths`` list against the ini file's, as pytest
    does), a negated flag turned round (``--ragproof-no-cache``: ``cache=False``)."""
    if opt.ini_type == "paths":
        return _dataset_paths(config, opt)
    value = options.get(config, opt.name)
    if opt.path:
        value = (config.invocation_params.dir / str(value)).resolve() if value else None
    return (not value) if opt.negated else value


def build(config: pytest.Config) -> RunConfig:
    """Read and validate every ragproof option of a pytest run: each option of the table
    (:mod:`pytest_ragproof.verdict.option_table`) that ``make_config`` takes, by its keyword."""
    values = {str(o.keyword): keyword_value(config, o) for o in options_of("run", "judges")}
    return make_config(baseline=baseline_settings(config), **values)


def cache_dir(config: pytest.Config) -> str | None:
    """``--ragproof-cache-dir`` resolved against the invocation folder (None: the default)."""
    given = options.get(config, "cache_dir")
    return str((config.invocation_params.dir / str(given)).resolve()) if given else None


def baseline_settings(config: pytest.Config) -> BaselineSettings | None:
    """``--ragproof-baseline`` and the regression options, validated; None without a baseline."""
    shown = options.get(config, "baseline")
    if not shown:
        return None
    values = {
        str(o.keyword): keyword_value(config, o)
        for o in options_of("baseline")
        if o.attribute != "path"
    }
    return baseline_from((config.invocation_params.dir / str(shown)).resolve(), str(shown), values)


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
