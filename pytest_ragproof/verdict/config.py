"""The effective run configuration, validated once (pytest-free).

``make_config`` is the one parser of run settings: the pytest plugin reads its
options and ini keys into it (:mod:`pytest_ragproof.plugin.settings`) and
``evaluate()`` passes its keyword arguments to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.thresholds import (
    Threshold,
    cutoffs,
    parse_aggregate_thresholds,
    parse_case_thresholds,
)
from pytest_ragproof.vocabulary import KINDS, SPLITS

if TYPE_CHECKING:
    from pytest_ragproof.judges import JudgeSettings
    from pytest_ragproof.verdict.baseline import BaselineSettings


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
    # --ragproof-repeat: pipeline calls per case; a case passes when the share of its
    # repeats that passed is at least min_pass_rate (see execution/repeat.py).
    repeat: int = 1
    min_pass_rate: float = 1.0
    # --ragproof-baseline and the regression options, parsed once (None: no baseline).
    baseline: BaselineSettings | None = None
    # The LLM judges this run asked for (None: no judge runs, nothing LLM is imported).
    judges: JudgeSettings | None = None
    # --ragproof-evaluator-concurrency: cases scored at once by bring-your-own evaluators.
    evaluator_concurrency: int = defaults.EVALUATOR_CONCURRENCY
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def lookahead(self) -> int:
        """How many calls may be started ahead of the current case: the pipeline's
        concurrency, or the judges' so that judge calls overlap (1: none ahead)."""
        return max(self.concurrency, self.judges.concurrency if self.judges is not None else 1)

    def lookahead_with_evaluators(self) -> int:
        """:attr:`lookahead` when the run has evaluators: their cases are handed over
        ahead too, so that up to ``evaluator_concurrency`` of them are scored at once."""
        return max(self.lookahead, self.evaluator_concurrency)

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
            **(self.judges.settings() if self.judges is not None else {}),
            # Only a repeating run records them: a run of one call per case writes what it
            # always wrote.
            **(
                {"repeat": self.repeat, "min_pass_rate": self.min_pass_rate}
                if self.repeat > 1
                else {}
            ),
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


def make_config(
    *,
    datasets: Sequence[Path] = (),
    pipeline_fixture: str = defaults.PIPELINE_FIXTURE,
    k: str | Sequence[int] = defaults.K,
    source_match: str = defaults.SOURCE_MATCH,
    kinds: Sequence[str] = (),
    splits: Sequence[str] = (),
    tags: Sequence[str] = (),
    case_thresholds: Sequence[str] = (),
    aggregate_thresholds: Sequence[str] = (),
    timeout: float | str | None = None,
    injection_delivery: str = defaults.INJECTION_DELIVERY,
    abstain_language: str = defaults.ABSTAIN_LANGUAGE,
    abstain_patterns: Sequence[str] = (),
    report: Path | None = None,
    concurrency: int | str = defaults.CONCURRENCY,
    repeat: int | str = defaults.REPEAT,
    min_pass_rate: float | str = defaults.MIN_PASS_RATE,
    redact: bool = False,
    worst: int | str = defaults.WORST,
    xfail_tags: Sequence[str] = (),
    components: bool | str = True,
    baseline: BaselineSettings | None = None,
    judges: Sequence[str] = (),
    judge_model: str | None = None,
    judge_api_base: str | None = None,
    judge_concurrency: int | str = defaults.JUDGE_CONCURRENCY,
    evaluator_concurrency: int | str = defaults.EVALUATOR_CONCURRENCY,
    judge_budget_usd: float | str | None = None,
    judge_max_calls: int | str | None = None,
    judge_dry_run: bool = False,
    judge_response_format: str = "auto",
    judge_timeout: float | str | None = None,
    judge_retries: int | str | None = None,
    judge_max_tokens: int | str | None = None,
    judge_instructions: str = "system",
    cache_dir: str | None = None,
    cache: bool = True,
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
    repeats = _int("repeat", str(repeat), 1)
    rate = _pass_rate(min_pass_rate, repeats)
    _check_pass_rate_metric(case, aggregate, _tolerance_metrics(baseline), repeats)
    judge_settings = _judge_settings(
        judges,
        [t.metric for t in (*case, *aggregate)] + _tolerance_metrics(baseline),
        model=judge_model,
        api_base=judge_api_base,
        concurrency=judge_concurrency,
        budget_usd=judge_budget_usd,
        max_calls=judge_max_calls,
        dry_run=judge_dry_run,
        response_format=judge_response_format,
        timeout=judge_timeout,
        retries=judge_retries,
        max_tokens=judge_max_tokens,
        instructions=judge_instructions,
        cache_dir=cache_dir,
        cache=cache,
    )
    return RunConfig(
        judges=judge_settings,
        components=_on_off("components", components),
        baseline=baseline,
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
        evaluator_concurrency=_int("evaluator_concurrency", str(evaluator_concurrency), 1),
        repeat=repeats,
        min_pass_rate=rate,
        redact=redact,
        worst=_int("worst", str(worst), 0),
        xfail_tags=frozenset(_split_list(list(xfail_tags))),
    )


def _pass_rate(value: float | str, repeats: int) -> float:
    """``--ragproof-min-pass-rate``: above 0 (an all-error case never passes), at most 1."""
    try:
        rate = float(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"--ragproof-min-pass-rate expects a share of the repeats, e.g. "
            f"--ragproof-min-pass-rate=0.8; got '{value}'"
        ) from None
    if not 0 < rate <= 1:
        raise ConfigError(
            f"--ragproof-min-pass-rate must be above 0 and at most 1 (the share of a case's "
            f"repeats that must pass); got '{value}'"
        )
    if rate != 1 and repeats == 1:
        raise ConfigError(
            f"--ragproof-min-pass-rate={rate:g} needs --ragproof-repeat N with N >= 2: with one "
            "call per case the pass rate is 0 or 1"
        )
    return rate


def _check_pass_rate_metric(
    case: Sequence[Threshold], aggregate: Sequence[Threshold], tolerated: Sequence[str], n: int
) -> None:
    """``pass_rate`` is measured per case over its repeats; say where it can be named."""
    for t in case:
        if t.metric == "pass_rate":
            raise ConfigError(
                f"case threshold '{t.expression}' names pass_rate, the share of a case's "
                "repeats that passed: set it per case with --ragproof-min-pass-rate, or gate "
                "it across cases with --ragproof-aggregate-threshold 'qa:pass_rate.mean>=0.9'"
            )
    named = [f"aggregate threshold '{t.expression}'" for t in aggregate if t.metric == "pass_rate"]
    if "pass_rate" in tolerated:
        named.append("a --ragproof-regression-tolerance")
    if named and n == 1:
        raise ConfigError(
            f"{named[0]} names pass_rate, which is measured only when cases repeat: add "
            "--ragproof-repeat N (N >= 2)"
        )


def _tolerance_metrics(baseline: BaselineSettings | None) -> list[str]:
    if baseline is None or not baseline.tolerances:
        return []
    from pytest_ragproof.regression.tolerance import parse_tolerances

    return [t.metric for t in parse_tolerances(baseline.tolerances)]


def _judge_settings(
    asked: Sequence[str],
    metrics: Sequence[str],
    *,
    model: str | None,
    api_base: str | None,
    concurrency: int | str,
    budget_usd: float | str | None,
    max_calls: int | str | None,
    dry_run: bool,
    response_format: str,
    timeout: float | str | None,
    retries: int | str | None,
    max_tokens: int | str | None,
    instructions: str,
    cache_dir: str | None,
    cache: bool,
) -> JudgeSettings | None:
    """The judges a run asks for (by option, or by naming a judged metric), or None."""
    import os

    from pytest_ragproof.judges import RESPONSE_FORMATS, JudgeSettings, judge_of, parse_judges

    names = set(parse_judges(asked))
    named_by = {m: judge_of(m) for m in metrics}
    names.update(j for j in named_by.values() if j is not None)
    if not names:
        return None
    chosen = (model or os.environ.get("RAGPROOF_JUDGE_MODEL") or "").strip()
    if not chosen:
        why = (
            "--ragproof-judges"
            if asked and any(a.strip() for a in asked)
            else "a threshold or tolerance on "
            + ", ".join(sorted(m for m, j in named_by.items() if j is not None))
        )
        raise ConfigError(
            f"LLM judges were asked for ({why}) but no judge model is configured: set "
            "RAGPROOF_JUDGE_MODEL (e.g. RAGPROOF_JUDGE_MODEL=openai/gpt-4o-mini) or pass "
            "--ragproof-judge-model (ini ragproof_judge_model)"
        )
    fmt = response_format.strip()
    if fmt not in RESPONSE_FORMATS:
        raise ConfigError(
            f"--ragproof-judge-response-format takes {', '.join(RESPONSE_FORMATS)}; got '{fmt}'"
        )
    place = instructions.strip()
    if place not in ("system", "user"):
        raise ConfigError(f"--ragproof-judge-instructions takes system or user; got '{place}'")
    return JudgeSettings(
        judges=frozenset(names),
        model=chosen,
        api_base=(api_base or "").strip() or None,
        concurrency=_int("judge_concurrency", str(concurrency), 1),
        budget_usd=_positive("judge_budget_usd", budget_usd, float),
        max_calls=None if max_calls in (None, "") else _int("judge_max_calls", str(max_calls), 0),
        dry_run=bool(dry_run),
        response_format=fmt,
        cache_dir=cache_dir or None,
        cache=cache,
        timeout_s=_positive("judge_timeout", timeout, float) or defaults.LLM_TIMEOUT_S,
        max_retries=(
            defaults.LLM_RETRIES
            if retries in (None, "")
            else _int("judge_retries", str(retries), 0)
        ),
        max_tokens=(
            None if max_tokens in (None, "") else _int("judge_max_tokens", str(max_tokens), 1)
        ),
        instructions=place,
    )


def _positive(name: str, value: float | str | None, kind: type[float]) -> float | None:
    if value in (None, ""):
        return None
    flag = f"--ragproof-{name.replace('_', '-')}"
    try:
        number = kind(value)
    except ValueError:
        raise ConfigError(f"{flag} expects a number, e.g. {flag}=2.5; got '{value}'") from None
    if not number >= 0:
        raise ConfigError(f"{flag} must not be negative; got '{value}'")
    return number
