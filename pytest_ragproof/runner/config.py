"""The effective run configuration, validated once from pytest's options and ini."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_ragproof import options
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.thresholds import (
    KINDS,
    Threshold,
    cutoffs,
    parse_aggregate_thresholds,
    parse_case_thresholds,
)

SPLITS = ("optimize", "validation", "test")


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
    extra: dict[str, object] = field(default_factory=dict)

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
    """Read and validate every ragproof option; raise ConfigError with the fix."""
    from pytest_ragproof.metrics import validate_ks

    get = options.get
    case_thresholds = parse_case_thresholds(get(config, "case_threshold"))
    aggregate_thresholds = parse_aggregate_thresholds(get(config, "aggregate_threshold"))
    try:
        ks_user = [int(k) for k in _split_list([str(get(config, "k"))])]
    except ValueError:
        raise ConfigError(
            f"--ragproof-k expects comma-separated integers, e.g. --ragproof-k 1,3,5,10; "
            f"got '{get(config, 'k')}'"
        ) from None
    ks = validate_ks(sorted(set(ks_user) | cutoffs([*case_thresholds, *aggregate_thresholds])))
    source_match = str(get(config, "source_match")).strip()
    if source_match not in ("chunk", "document"):
        raise ConfigError(
            f"--ragproof-source-match must be 'chunk' or 'document'; got '{source_match}'"
        )
    delivery = str(get(config, "injection_delivery")).strip()
    if delivery not in ("append", "none"):
        raise ConfigError(
            f"--ragproof-injection-delivery must be 'append' or 'none'; got '{delivery}'"
        )
    kinds = frozenset(_split_list(get(config, "kind")))
    if not kinds <= set(KINDS):
        raise ConfigError(
            f"--ragproof-kind takes {', '.join(KINDS)}; got {', '.join(sorted(kinds - set(KINDS)))}"
        )
    splits = frozenset(_split_list(get(config, "split")))
    if not splits <= set(SPLITS):
        raise ConfigError(
            f"--ragproof-split takes {', '.join(SPLITS)}; "
            f"got {', '.join(sorted(splits - set(SPLITS)))}"
        )
    timeout_text = get(config, "timeout")
    timeout: float | None = None
    if timeout_text not in (None, "", "0", "none"):
        try:
            timeout = float(timeout_text)
        except ValueError:
            raise ConfigError(
                f"--ragproof-timeout expects seconds, e.g. --ragproof-timeout=30; got "
                f"'{timeout_text}'"
            ) from None
        if not timeout > 0:
            raise ConfigError("--ragproof-timeout must be positive")
    patterns = tuple(get(config, "abstain_pattern"))
    import re

    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"--ragproof-abstain-pattern '{pattern}' is not a valid regular expression "
                f"({exc.msg})"
            ) from None
    report = get(config, "report")
    return RunConfig(
        datasets=_dataset_paths(config),
        pipeline_fixture=str(get(config, "pipeline_fixture")).strip(),
        ks=ks,
        source_match=source_match,
        kinds=kinds,
        splits=splits,
        tags=frozenset(_split_list(get(config, "tag"))),
        case_thresholds=tuple(case_thresholds),
        aggregate_thresholds=tuple(aggregate_thresholds),
        timeout=timeout,
        injection_delivery=delivery,
        abstain_language=str(get(config, "abstain_language")).strip(),
        abstain_patterns=patterns,
        report=(config.invocation_params.dir / str(report)).resolve() if report else None,
        concurrency=_int("concurrency", get(config, "concurrency"), 1),
        redact=bool(get(config, "redact")),
        worst=_int("worst", get(config, "worst"), 0),
    )
