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
from typing import Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.merge_checks import CaseEntry, ShardFile, expected_statuses
from pytest_ragproof.verdict.record import Failure
from pytest_ragproof.verdict.thresholds import misses

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


def _record(recorded: Mapping[str, Any], gates: Gates) -> dict[str, Any]:
    out = dict(recorded)
    out["case_thresholds"] = list(gates.case_thresholds)
    out["aggregate_thresholds"] = list(gates.aggregate_thresholds)
    out["xfail_tags"] = list(gates.xfail_tags)
    out["min_pass_rate"] = gates.min_pass_rate
    before = recorded.get("baseline")
    if gates.baseline is None:
        out["baseline"] = None
    else:
        same = isinstance(before, Mapping) and before.get("path") == gates.baseline
        out["baseline"] = {
            "path": gates.baseline,
            # Writing the baseline is what the shards asked for; only at the path they named.
            "update": bool(same and isinstance(before, Mapping) and before.get("update")),
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
        flags = [f"tolerances {', '.join(value['tolerances']) or 'none'}"]
        flags.append(f"alpha {value['alpha']:g}")
        if value["fail_on_case_regression"]:
            flags.append("fail on case regression")
        if value["allow_dataset_change"]:
            flags.append("dataset change allowed")
        return f"{value['path']} ({'; '.join(flags)})"
    return f"{value:g}" if isinstance(value, float) else str(value)


def gated_config(
    recorded: Mapping[str, Any], theirs_cfg: RunConfig, gates: Gates, base: Path
) -> tuple[RunConfig, list[str], bool]:
    """The run configuration the shards recorded (``recorded``, rebuilt as ``theirs_cfg``)
    with the merge's gates in place of theirs, the notes on each gate that differs, and
    whether a case-level gate differs (then :func:`restatus` decides the cases again)."""
    from pytest_ragproof.verdict.recorded import config_from_record, config_record

    theirs = config_record(theirs_cfg)
    try:
        cfg = config_from_record(_record(recorded, gates), base)
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
        cases = [_case(f, i, dict(c), cfg, xfail_strict) for i, c in enumerate(f.doc["cases"])]
        out.append(ShardFile(f.name, {**f.doc, "cases": cases}))
    return out


def _case(
    f: ShardFile, i: int, case: dict[str, Any], cfg: RunConfig, strict: bool
) -> dict[str, Any]:
    if case.get("repeats"):
        raise ConfigError(
            f"{f.name}: case {case['id']} (cases[{i}]) ran {case['repeats'].get('n')} repeats "
            "under the case thresholds, xfail tags and pass rate the files recorded, and the "
            "merge's differ; repeats are decided when they run: give the merge the shards' "
            "--ragproof-case-threshold, --ragproof-xfail-tag and --ragproof-min-pass-rate"
        )
    allowed = expected_statuses(case, cfg)
    if allowed is None:
        return case  # an error, decided by what failed
    before = {str(x["expression"]): x for x in case.get("failures") or []}
    failures: list[dict[str, Any]] = []
    for t, observed in misses(CaseEntry(case), case["metrics"], cfg.case_thresholds):
        known = before.get(t.expression)
        if known is not None:
            failures.append(known)
            continue
        reason = (
            "missed"
            if observed is not None
            else str((case.get("not_judged") or {}).get(t.metric, "not recorded for this case"))
        )
        failures.append(Failure(t.expression, t.metric, observed, t.bound, reason).to_dict())
    status = allowed[0]
    if status == "xpassed" and strict:
        status = "failed"
    case["status"] = status
    case["failures"] = failures
    return case
