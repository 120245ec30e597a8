"""The effective run configuration, validated once (pytest-free).

``make_config`` is the one parser of run settings, derived from the option table
(:mod:`pytest_ragproof.verdict.option_table`): the pytest plugin reads its options and
ini keys into it (:mod:`pytest_ragproof.plugin.settings`) and ``evaluate()`` passes its
keyword arguments to it; each value goes through its option's parser into its field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.thresholds import Threshold, cutoffs

if TYPE_CHECKING:
    from pytest_ragproof.judges import JudgeSettings
    from pytest_ragproof.verdict.baseline import BaselineSettings
    from pytest_ragproof.verdict.options import Option


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
    repeat: int = defaults.REPEAT
    min_pass_rate: float = defaults.MIN_PASS_RATE
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


_FIELDS = frozenset(f.name for f in fields(RunConfig))


def make_config(*, baseline: BaselineSettings | None = None, **given: Any) -> RunConfig:
    """Validate run settings (shared by the pytest plugin and ``evaluate()``).

    Takes the keyword of each option of :mod:`pytest_ragproof.verdict.option_table`
    (``make_config(concurrency=4, case_thresholds=[...])``; an option not given takes
    its default) and ``baseline``, the settings :func:`baseline_from` made. Each value is
    validated by its option's parser into its RunConfig field (``extra`` for a field
    RunConfig does not spell out); the judge options are read only when a judge runs.
    Raises ConfigError with the fix on any bad value.
    """
    from pytest_ragproof.metrics import validate_ks
    from pytest_ragproof.verdict.option_table import options_of

    run = options_of("run")
    judging = options_of("judges")
    known = {o.keyword for o in (*run, *judging)}
    for key in given:
        if key not in known:
            raise TypeError(f"make_config() got an unexpected keyword argument '{key}'")
    values: dict[str, Any] = {
        o.target: o.value(given.get(str(o.keyword), o.keyword_default)) for o in run
    }
    case, aggregate = values["case_thresholds"], values["aggregate_thresholds"]
    values["ks"] = validate_ks(sorted(set(values["ks"]) | cutoffs([*case, *aggregate])))
    repeats = values["repeat"]
    if values["min_pass_rate"] != 1 and repeats == 1:
        raise ConfigError(
            f"--ragproof-min-pass-rate={values['min_pass_rate']:g} needs --ragproof-repeat N "
            "with N >= 2: with one call per case the pass rate is 0 or 1"
        )
    _check_pass_rate_metric(case, aggregate, _tolerance_metrics(baseline), repeats)
    judge_given = {o.attribute: given.get(str(o.keyword), o.keyword_default) for o in judging}
    judge_settings = _judge_settings(
        judge_given,
        [t.metric for t in (*case, *aggregate)] + _tolerance_metrics(baseline),
        judging,
    )
    extra = {k: v for k, v in values.items() if k not in _FIELDS}
    known_fields = {k: v for k, v in values.items() if k in _FIELDS}
    return RunConfig(**known_fields, judges=judge_settings, baseline=baseline, extra=extra)


def keyword_config(
    given: Mapping[str, Any], more: Mapping[str, Any], caller: str
) -> tuple[RunConfig, BaselineSettings | None]:
    """The settings of a call's keywords, by the option table: each option with an
    ``api`` name (``evaluate()``'s keyword) takes that keyword's value from ``given``
    (the call's named parameters; the others are the caller's own) or ``more`` (its
    ``**options``, which may only name options not spelled out); ``baseline``, a path
    relative to the current folder, brings the baseline options."""
    from pytest_ragproof.verdict.option_table import OPTIONS

    declared = {o.api: o for o in OPTIONS if o.api is not None}
    for key in more:
        if key not in declared or key in given:
            raise TypeError(f"{caller} got an unexpected keyword argument '{key}'")
    values = {**given, **more}
    run: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    for api, o in declared.items():
        if api in values and o.keyword is not None:
            (kept if o.group == "baseline" else run)[o.keyword] = values[api]
    path = kept.pop("baseline", None)
    baseline = None if path is None else baseline_from(Path(path).resolve(), str(path), kept)
    return make_config(baseline=baseline, **run), baseline


def baseline_from(path: Path, shown: str, given: Mapping[str, Any]) -> BaselineSettings:
    """The baseline settings of the baseline options' keywords (``regression_alpha``...),
    validated; ``path`` is the baseline file, ``shown`` as the user wrote it."""
    from pytest_ragproof.verdict.baseline import baseline_settings
    from pytest_ragproof.verdict.option_table import options_of

    chosen = [o for o in options_of("baseline") if o.attribute != "path"]
    known = {o.keyword for o in chosen}
    for key in given:
        if key not in known:
            raise TypeError(f"unexpected baseline keyword argument '{key}'")
    return baseline_settings(
        path,
        shown=shown,
        **{o.attribute: o.value(given.get(str(o.keyword), o.keyword_default)) for o in chosen},
    )


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
    given: Mapping[str, Any], metrics: Sequence[str], judging: Sequence[Option]
) -> JudgeSettings | None:
    """The judges a run asks for (by option, or by naming a judged metric), or None.

    ``given`` holds the judge options' values by JudgeSettings field; they are validated
    only when a judge runs."""
    import os

    from pytest_ragproof.judges import JudgeSettings, judge_of, parse_judges

    asked = given["judges"]
    names = set(parse_judges(asked))
    named_by = {m: judge_of(m) for m in metrics}
    names.update(j for j in named_by.values() if j is not None)
    if not names:
        return None
    model = given["model"]
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
    by_field = {o.attribute: o for o in judging}
    order = ("response_format", "instructions")  # checked first, as they always were
    first = {f: by_field[f].value(given[f]) for f in order}
    rest = {
        f: o.value(given[f]) for f, o in by_field.items() if f not in ("judges", "model", *order)
    }
    return JudgeSettings(judges=frozenset(names), model=chosen, **first, **rest)
