"""The gates ``ragproof merge`` decides with: its own configuration's, not the files' (pytest-free).

A shard's ``run.config`` says which thresholds, xfail tags, pass rate and baseline the
shard ran with; the files serve to check that their cases are the ones such a run
writes (:mod:`.merge_checks`), but the verdict of the merge is decided with the gates
of the configuration the merge runs in: the project's ``ragproof_*`` ini keys and the
merge's own ``--ragproof-*`` options (:class:`Gates`, built by the command). Where the
shards recorded other gates a note says so, and the cases' statuses are decided again
under the merge's case thresholds and xfail tags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.merge_checks import ShardFile, expected_statuses
from pytest_ragproof.verdict.record import Failure
from pytest_ragproof.verdict.thresholds import misses

if TYPE_CHECKING:
    from pytest_ragproof.results.checked import CheckedCase
    from pytest_ragproof.results.recorded import RecordedConfig

__all__ = ["Gates", "gated_config", "restatus"]

# run.config keys that decide a case's status.
_CASE_LEVEL = ("case_thresholds", "xfail_tags", "min_pass_rate")
_SHOWN = {
    "case_thresholds": "case thresholds",
    "aggregate_thresholds": "aggregate thresholds",
    "xfail_tags": "xfail tags",
    "min_pass_rate": "min pass rate",
    "baseline": "baseline",
}


@dataclass(frozen=True)
class Gates:
    """What a verdict is gated with, as the options and ini keys of a pytest run give it
    (strings as written; parsed and checked like a run's options)."""

    case_thresholds: Sequence[str]
    aggregate_thresholds: Sequence[str]
    xfail_tags: Sequence[str]
    min_pass_rate: float | str
    baseline: str | None
    allow_dataset_change: bool
    tolerances: Sequence[str]
    alpha: float | str
    fail_on_case_regression: bool
    xfail_strict: bool  # pytest's own xfail_strict ini key
    source: str  # where they came from, e.g. "pyproject.toml and the command line"


def _record(record: Mapping[str, Any], theirs: RecordedConfig, gates: Gates) -> dict[str, Any]:
    """``record`` (the shards' ``run.config``, read as ``theirs``) with ``gates`` in place."""
    out = dict(record)
    out["case_thresholds"] = list(gates.case_thresholds)
    out["aggregate_thresholds"] = list(gates.aggregate_thresholds)
    out["xfail_tags"] = list(gates.xfail_tags)
    out["min_pass_rate"] = gates.min_pass_rate
    before = theirs.baseline
    if gates.baseline is None:
        out["baseline"] = None
    else:
        same = before is not None and before.path == gates.baseline
        out["baseline"] = {
            "path": gates.baseline,
            # Writing the baseline is what the shards asked for; only at the path they named.
            "update": bool(same and before is not None and before.update),
            "tolerances": list(gates.tolerances),
            "alpha": gates.alpha,
            "allow_dataset_change": gates.allow_dataset_change,
            "fail_on_case_regression": gates.fail_on_case_regression,
        }
    return out


def _shown(key: str, value: Any) -> str:
    if value is None:
        return "none"
    if key == "case_thresholds":
        value = [v for v in value if v != "none"]
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, Mapping):
        from pytest_ragproof.results.recorded import RecordedBaseline

        baseline = RecordedBaseline.model_validate(value)
        flags = [f"tolerances {', '.join(baseline.tolerances) or 'none'}"]
        flags.append(f"alpha {baseline.alpha:g}")
        if baseline.fail_on_case_regression:
            flags.append("fail on case regression")
        if baseline.allow_dataset_change:
            flags.append("dataset change allowed")
        return f"{baseline.path} ({'; '.join(flags)})"
    return f"{value:g}" if isinstance(value, float) else str(value)


def gated_config(
    record: Mapping[str, Any], theirs_cfg: RunConfig, gates: Gates, base: Path
) -> tuple[RunConfig, list[str], bool]:
    """The run configuration the shards recorded (``record``, rebuilt as ``theirs_cfg``)
    with the merge's gates in place of theirs, the notes on each gate that differs, and
    whether a case-level gate differs (then :func:`restatus` decides the cases again)."""
    from pytest_ragproof.verdict.recorded import config_from_record, config_record, recorded

    theirs = config_record(theirs_cfg)
    try:
        cfg = config_from_record(_record(record, recorded(record), gates), base)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (from {gates.source})") from None
    mine = config_record(cfg)
    notes = [
        f"gated with the {_SHOWN[key]} of {gates.source}: {_shown(key, mine[key])}; the files "
        f"recorded {_shown(key, theirs[key])}"
        for key in _SHOWN
        if _comparable(mine[key]) != _comparable(theirs[key])
    ]
    changed = any(mine[key] != theirs[key] for key in _CASE_LEVEL)
    return cfg, notes, changed


def _comparable(value: Any) -> Any:
    """A baseline entry without its update flag (writing is not gating)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k != "update"}
    return value


def restatus(files: Sequence[ShardFile], cfg: RunConfig, xfail_strict: bool) -> list[ShardFile]:
    """The files with each case's status and failures decided by ``cfg``'s case thresholds
    and xfail tags (the files' statuses were checked against the gates they recorded)."""
    out: list[ShardFile] = []
    for f in files:
        cases = [
            _case(f, i, case, dict(entry), cfg, xfail_strict)
            for i, (case, entry) in enumerate(zip(f.cases, f.entries, strict=True))
        ]
        model = f.results.model_copy(update={"cases": [_checked(c) for c in cases]})
        out.append(ShardFile(f.name, {**f.doc, "cases": cases}, model))
    return out


def _checked(entry: dict[str, Any]) -> CheckedCase:
    """The model of a case entry decided again (its fields were checked on read)."""
    from pytest_ragproof.results.checked import CheckedCase

    return CheckedCase.model_validate(entry)


def _case(
    f: ShardFile, i: int, case: CheckedCase, entry: dict[str, Any], cfg: RunConfig, strict: bool
) -> dict[str, Any]:
    """``entry`` (a copy of ``case`` as written) with the status and failures ``cfg`` gives."""
    if case.repeats is not None:
        raise ConfigError(
            f"{f.name}: case {case.id} (cases[{i}]) ran {case.repeats.n} repeats "
            "under the case thresholds, xfail tags and pass rate the files recorded, and the "
            "merge's differ; repeats are decided when they run: give the merge the shards' "
            "--ragproof-case-threshold, --ragproof-xfail-tag and --ragproof-min-pass-rate"
        )
    allowed = expected_statuses(case, cfg)
    if allowed is None:
        return entry  # an error, decided by what failed
    # A failure the shard wrote is kept as written (the merged file's bytes are the shard's).
    written: list[dict[str, Any]] = list(entry.get("failures") or [])
    before = {x.expression: w for x, w in zip(case.failures, written, strict=True)}
    failures: list[dict[str, Any]] = []
    for t, _ in misses(case, case.metrics, cfg.case_thresholds):
        known = before.get(t.expression)
        if known is not None:
            failures.append(known)
            continue
        observed = entry_metric(entry, t.metric)
        reason = (
            "missed"
            if observed is not None
            else case.not_judged.get(t.metric, "not recorded for this case")
        )
        failures.append(Failure(t.expression, t.metric, observed, t.bound, reason).to_dict())
    status = allowed[0]
    if status == "xpassed" and strict:
        status = "failed"
    entry["status"] = status
    entry["failures"] = failures
    return entry


def entry_metric(entry: dict[str, Any], metric: str) -> float | None:
    """A metric's value as the shard wrote it (an integer stays one in the merged file)."""
    value: float | None = entry["metrics"].get(metric)
    return value
