"""The run settings as a results file records them, and back (pytest-free).

``ragproof merge`` rebuilds the :class:`RunConfig` of the shards from their
results files and decides the verdict with it, so the record holds everything
the verdict depends on: the thresholds as parsed (the defaults included), the
population filters, the summary options, the baseline options and the judges'
settings. Nothing secret or machine-bound is recorded: no judge API base, no
cache folder, no endpoint headers; the baseline as the user wrote its path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults
from pytest_ragproof.verdict.config import RunConfig, make_config

if TYPE_CHECKING:
    from pytest_ragproof.judges import JudgeSettings


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
    if judges.instructions != "system":
        out["instructions"] = judges.instructions
    return out


def config_from_record(record: dict[str, Any], base: Path) -> RunConfig:
    """The RunConfig a results file recorded; the baseline path is resolved against ``base``.

    Raises ConfigError (bad values, a baseline path that is not a results file) like the
    options of a run would.
    """
    from pytest_ragproof.verdict.baseline import baseline_settings

    b = record.get("baseline")
    baseline = (
        None
        if b is None
        else baseline_settings(
            (base / str(b["path"])).resolve(),
            shown=str(b["path"]),
            update=bool(b["update"]),
            tolerances=tuple(b["tolerances"]),
            alpha=b["alpha"],
            allow_dataset_change=bool(b["allow_dataset_change"]),
            fail_on_case_regression=bool(b["fail_on_case_regression"]),
        )
    )
    j = record.get("judges")
    return make_config(
        pipeline_fixture=str(record["pipeline_fixture"]),
        k=[int(v) for v in record["k"]],
        source_match=str(record["source_match"]),
        kinds=list(record["kinds"]),
        splits=list(record["splits"]),
        tags=list(record["tags"]),
        xfail_tags=list(record["xfail_tags"]),
        case_thresholds=list(record["case_thresholds"]),
        aggregate_thresholds=list(record["aggregate_thresholds"]),
        timeout=record["timeout"],
        injection_delivery=str(record["injection_delivery"]),
        abstain_language=str(record["abstain_language"]),
        abstain_patterns=list(record["abstain_patterns"]),
        redact=bool(record["redact"]),
        worst=int(record["worst"]),
        components=bool(record["components"]),
        # Absent from the files of earlier versions, which merged runs of one call per case.
        repeat=int(record.get("repeat", 1)),
        min_pass_rate=record.get("min_pass_rate", 1.0),
        baseline=baseline,
        judges=[] if j is None else list(j["judges"]),
        judge_model=None if j is None else str(j["model"]),
        judge_concurrency=defaults.JUDGE_CONCURRENCY if j is None else int(j["concurrency"]),
        judge_budget_usd=None if j is None else j["budget_usd"],
        judge_max_calls=None if j is None else j["max_calls"],
        judge_dry_run=False if j is None else bool(j["dry_run"]),
        judge_response_format="auto" if j is None else str(j["response_format"]),
        judge_max_tokens=None if j is None else j.get("max_tokens"),
        judge_instructions="system" if j is None else str(j.get("instructions", "system")),
    )
