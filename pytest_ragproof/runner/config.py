"""The effective run configuration, validated once from pytest's options and ini."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragproof import options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.thresholds import (
    Threshold,
    cutoffs,
    parse_aggregate_thresholds,
    parse_case_thresholds,
)
from pytest_ragproof.vocabulary import KINDS, SPLITS

if TYPE_CHECKING:
    from pytest_ragproof.runner.baseline import BaselineSettings


@dataclass(frozen=True)
class RunConfig:
    datasets: tuple[Path, ...]
    pipeline_fixture: str
    ks: tuple[int, ...]
    source_match: str
    kinds: frozenset[str]
    splits: frozenset[str]
    tags: frozenset[str]
    case_thresholds: tuple[Threshold, ...]
    aggregate_thresholds: tuple[Threshold, ...]
    timeout: float | None
    injection_delivery: str
    abstain_language: str
    abstain_patterns: tuple[str, ...]
    report: Path | None
    concurrency: int
    redact: bool
    worst: int
    xfail_tags: frozenset[str] = frozenset()
    components: bool = True  # print the component scores table (--ragproof-components)
    extra: dict[str, object] = field(default_factory=dict)

    def settings(self) -> dict[str, object]:
        """The scoring settings recorded in the results document."""
        return {
            "k": list(self.ks),
            "source_match": self.source_match,
            "injection_delivery": self.injection_delivery,
            "abstain_language": self.abstain_language,
            "kinds": sorted(self.kinds),
            "splits": sorted(self.splits),
            "tags": sorted(self.tags),
        }

    def population(self, cases: Iterable[Any]) -> list[Any]:
        """The cases this run evaluates (--ragproof-kind/-split/-tag), in the given order."""
        return [c for c in cases if self.selects(c.kind, c.split, c.tags)]

    def selects(self, kind: str, split: str | None, tags: tuple[str, ...]) -> bool:
        """Is a case part of the evaluated population (--ragproof-kind/-split/-tag)?"""
        if self.kinds and kind not in self.kinds:
            return False
        if self.splits and split not in self.splits:
            return False
        return not (self.tags and not self.tags.intersection(tags))


def _int(name: str, text: str, minimum: int) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise ConfigError(
            f"--ragproof-{name.replace('_', '-')} expects an integer, e.g. "
            f"--ragproof-{name.replace('_', '-')}={max(minimum, 4)}; got '{text}'"
        ) from None
    if value < minimum:
        raise ConfigError(f"--ragproof-{name.replace('_', '-')} must be at least {minimum}")
    return value


def _on_off(name: str, value: bool | str) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower()
    if text not in ("on", "off"):
        raise ConfigError(
            f"--ragproof-{name.replace('_', '-')} must be 'on' or 'off'; got '{value.strip()}'"
        )
    return text == "on"


def _split_list(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


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
        redact=bool(get(config, "redact")),
        worst=get(config, "worst"),
        xfail_tags=get(config, "xfail_tag"),
        components=str(get(config, "components")),
    )


def make_config(
    *,
    datasets: Sequence[Path] = (),
    pipeline_fixture: str = "rag_pipeline",
    k: str | Sequence[int] = "1,3,5,10",
    source_match: str = "chunk",
    kinds: Sequence[str] = (),
    splits: Sequence[str] = (),
    tags: Sequence[str] = (),
    case_thresholds: Sequence[str] = (),
    aggregate_thresholds: Sequence[str] = (),
    timeout: float | str | None = None,
    injection_delivery: str = "append",
    abstain_language: str = "en",
    abstain_patterns: Sequence[str] = (),
    report: Path | None = None,
    concurrency: int | str = 1,
    redact: bool = False,
    worst: int | str = 5,
    xfail_tags: Sequence[str] = (),
    components: bool | str = True,
) -> RunConfig:
    """Validate run settings (shared by the pytest plugin and ``evaluate()``).

    Raises ConfigError with the fix on any bad value.
    """
    import re

    from pytest_ragproof.metrics import validate_ks

    case = parse_case_thresholds(case_thresholds)
    aggregate = parse_aggregate_thresholds(aggregate_thresholds)
    k_text = k if isinstance(k, str) else ",".join(str(v) for v in k)
    try:
        ks_user = [int(v) for v in _split_list([k_text])]
    except ValueError:
        raise ConfigError(
            f"--ragproof-k expects comma-separated integers, e.g. --ragproof-k 1,3,5,10; "
            f"got '{k_text}'"
        ) from None
    ks = validate_ks(sorted(set(ks_user) | cutoffs([*case, *aggregate])))
    source_match = source_match.strip()
    if source_match not in ("chunk", "document"):
        raise ConfigError(
            f"--ragproof-source-match must be 'chunk' or 'document'; got '{source_match}'"
        )
    delivery = injection_delivery.strip()
    if delivery not in ("append", "none"):
        raise ConfigError(
            f"--ragproof-injection-delivery must be 'append' or 'none'; got '{delivery}'"
        )
    kind_set = frozenset(_split_list(list(kinds)))
    if not kind_set <= set(KINDS):
        bad = ", ".join(sorted(kind_set - set(KINDS)))
        raise ConfigError(f"--ragproof-kind takes {', '.join(KINDS)}; got {bad}")
    split_set = frozenset(_split_list(list(splits)))
    if not split_set <= set(SPLITS):
        bad = ", ".join(sorted(split_set - set(SPLITS)))
        raise ConfigError(f"--ragproof-split takes {', '.join(SPLITS)}; got {bad}")
    seconds: float | None = None
    if timeout not in (None, "", "0", "none", 0):
        try:
            seconds = float(timeout)
        except ValueError:
            raise ConfigError(
                f"--ragproof-timeout expects seconds, e.g. --ragproof-timeout=30; got '{timeout}'"
            ) from None
        if not seconds > 0:
            raise ConfigError("--ragproof-timeout must be positive")
    for pattern in abstain_patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"--ragproof-abstain-pattern '{pattern}' is not a valid regular expression "
                f"({exc.msg})"
            ) from None
    return RunConfig(
        components=_on_off("components", components),
        datasets=tuple(datasets),
        pipeline_fixture=pipeline_fixture.strip(),
        ks=ks,
        source_match=source_match,
        kinds=kind_set,
        splits=split_set,
        tags=frozenset(_split_list(list(tags))),
        case_thresholds=tuple(case),
        aggregate_thresholds=tuple(aggregate),
        timeout=seconds,
        injection_delivery=delivery,
        abstain_language=abstain_language.strip(),
        abstain_patterns=tuple(abstain_patterns),
        report=report,
        concurrency=_int("concurrency", str(concurrency), 1),
        redact=redact,
        worst=_int("worst", str(worst), 0),
        xfail_tags=frozenset(_split_list(list(xfail_tags))),
    )


def baseline_settings(config: pytest.Config) -> BaselineSettings | None:
    """``--ragproof-baseline`` and the regression options, validated; None without a baseline."""
    from pytest_ragproof.regression.tolerance import parse_tolerances
    from pytest_ragproof.runner.baseline import BaselineSettings, parse_alpha

    get = options.get
    shown = get(config, "baseline")
    if not shown:
        return None
    tolerances = tuple(get(config, "regression_tolerance"))
    parse_tolerances(tolerances)  # a bad expression is a usage error before any case runs
    return BaselineSettings(
        path=(config.invocation_params.dir / str(shown)).resolve(),
        shown=str(shown),
        update=bool(get(config, "baseline_update")),
        tolerances=tolerances,
        alpha=parse_alpha(get(config, "regression_alpha")),
        allow_dataset_change=bool(get(config, "baseline_allow_dataset_change")),
        fail_on_case_regression=bool(get(config, "fail_on_case_regression")),
    )


def check_outputs(
    config: pytest.Config, report: Path | None, baseline: BaselineSettings | None
) -> None:
    """Refuse output paths that would replace a file ragproof did not write for that purpose."""
    from pytest_ragproof.runner.baseline import check_baseline_path, sniff

    if baseline is not None:
        check_baseline_path(baseline)
    if report is not None and sniff(report) in ("dataset", "other"):
        what = "a ragproof dataset" if sniff(report) == "dataset" else "not a ragproof results file"
        raise ConfigError(
            f"--ragproof-report {options.get(config, 'report')} is {what}; ragproof will not "
            "replace it; choose a new path such as results.json"
        )
