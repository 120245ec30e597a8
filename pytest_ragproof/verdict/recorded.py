"""The run settings as a results file records them, and back (pytest-free).

``ragproof merge`` rebuilds the :class:`RunConfig` of the shards from their
results files and decides the verdict with it, so the record holds everything
the verdict depends on: the thresholds as parsed (the defaults included), the
population filters, the summary options, the baseline options and the judges'
settings. Nothing secret or machine-bound is recorded: no judge API base, no
cache folder, no endpoint headers; the baseline as the user wrote its path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig, make_config

if TYPE_CHECKING:
    from pytest_ragproof.judges import JudgeSettings
    from pytest_ragproof.results.recorded import RecordedConfig


def config_record(cfg: RunConfig) -> dict[str, Any]:
    """What ``cfg`` decides a verdict with, as JSON values."""
    baseline = cfg.baseline
    judges = cfg.judges
    return {
        "pipeline_fixture": cfg.pipeline_fixture,
        "k": list(cfg.ks),
        "source_match": cfg.source_match,
        "kinds": sorted(cfg.kinds),
        "splits": sorted(cfg.splits),
        "tags": sorted(cfg.tags),
        "xfail_tags": sorted(cfg.xfail_tags),
        # "none" first: the list is exactly the case thresholds (defaults spelled out).
        "case_thresholds": ["none", *(t.expression for t in cfg.case_thresholds)],
        "aggregate_thresholds": [t.expression for t in cfg.aggregate_thresholds],
        "timeout": cfg.timeout,
        "injection_delivery": cfg.injection_delivery,
        "abstain_language": cfg.abstain_language,
        "abstain_patterns": list(cfg.abstain_patterns),
        "redact": cfg.redact,
        "worst": cfg.worst,
        "components": cfg.components,
        "repeat": cfg.repeat,
        "min_pass_rate": cfg.min_pass_rate,
        "baseline": None
        if baseline is None
        else {
            "path": baseline.shown,
            "update": baseline.update,
            "tolerances": list(baseline.tolerances),
            "alpha": baseline.alpha,
            "allow_dataset_change": baseline.allow_dataset_change,
            "fail_on_case_regression": baseline.fail_on_case_regression,
        },
        "judges": None if judges is None else _judges_record(judges),
    }


def _judges_record(judges: JudgeSettings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "judges": sorted(judges.judges),
        "model": judges.model,
        "concurrency": judges.concurrency,
        "budget_usd": judges.budget_usd,
        "max_calls": judges.max_calls,
        "dry_run": judges.dry_run,
        "response_format": judges.response_format,
    }
    # Recorded only when set, so the files of runs without them read as before.
    if judges.max_tokens is not None:
        out["max_tokens"] = judges.max_tokens
    if judges.instructions != defaults.JUDGE_INSTRUCTIONS:
        out["instructions"] = judges.instructions
    return out


def config_from_record(
    record: Mapping[str, Any], base: Path, name: str = "the results file"
) -> RunConfig:
    """The RunConfig a results file recorded; the baseline path is resolved against ``base``.

    Raises ConfigError (bad values, a baseline path that is not a results file) like the
    options of a run would; one naming ``name`` and the field when a field is missing or
    of the wrong type (:func:`recorded`).
    """
    from pytest_ragproof.verdict.baseline import baseline_settings

    r = recorded(record, name)
    b = r.baseline
    baseline = (
        None
        if b is None
        else baseline_settings(
            (base / b.path).resolve(),
            shown=b.path,
            update=b.update,
            tolerances=tuple(b.tolerances),
            alpha=b.alpha,
            allow_dataset_change=b.allow_dataset_change,
            fail_on_case_regression=b.fail_on_case_regression,
        )
    )
    j = r.judges
    return make_config(
        pipeline_fixture=r.pipeline_fixture,
        k=list(r.k),
        source_match=r.source_match,
        kinds=list(r.kinds),
        splits=list(r.splits),
        tags=list(r.tags),
        xfail_tags=list(r.xfail_tags),
        case_thresholds=list(r.case_thresholds),
        aggregate_thresholds=list(r.aggregate_thresholds),
        timeout=r.timeout,
        injection_delivery=r.injection_delivery,
        abstain_language=r.abstain_language,
        abstain_patterns=list(r.abstain_patterns),
        redact=r.redact,
        worst=r.worst,
        components=r.components,
        repeat=r.repeat,
        min_pass_rate=r.min_pass_rate,
        baseline=baseline,
        judges=[] if j is None else list(j.judges),
        judge_model=None if j is None else j.model,
        judge_concurrency=defaults.JUDGE_CONCURRENCY if j is None else j.concurrency,
        judge_budget_usd=None if j is None else j.budget_usd,
        judge_max_calls=None if j is None else j.max_calls,
        judge_dry_run=False if j is None else j.dry_run,
        judge_response_format=defaults.RESPONSE_FORMAT if j is None else j.response_format,
        judge_max_tokens=None if j is None else j.max_tokens,
        judge_instructions=defaults.JUDGE_INSTRUCTIONS if j is None else j.instructions,
    )


def recorded(record: Mapping[str, Any], name: str = "the results file") -> RecordedConfig:
    """``run.config`` as its typed model; ConfigError naming ``name`` (the file) and the
    field that is missing or of the wrong type (a file edited by hand: a run writes every
    field)."""
    from pydantic import ValidationError

    from pytest_ragproof.results.recorded import RecordedConfig

    try:
        return RecordedConfig.model_validate(record)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in err["loc"])
        problem = "missing" if err["type"] == "missing" else err["msg"].rstrip(".")
        raise ConfigError(
            f"{name}: field run.config.{field}: {problem}; the file was edited: use the file "
            "pytest-ragproof wrote"
        ) from None
