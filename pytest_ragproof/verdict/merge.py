"""``ragproof merge``: the verdict of a run from the results files of its shards (pytest-free).

Each shard wrote its results file with ``--ragproof-report``, under
``--ragproof-shard K/N`` or under another plugin's deselection (pytest-shard,
pytest-split): every file records, in its ``run`` section, the items it selected
that have no case record (skipped, never scored), the population of the whole
run and the full settings. :func:`merge` checks that the files belong together
(same settings, same datasets by hash, same population) and cover every item of
the population exactly once, that each file's cases are ones the run wrote
(:mod:`.merge_checks`; the schema, ranges and digest were checked on read),
then rebuilds the run's facts and decides them with the same
:func:`~pytest_ragproof.verdict.decide.decide` as a pytest run, so every
aggregate, gate and baseline comparison is the one a single run would compute.

The verdict needs no dataset: their recorded entries (path, sha256, frozen, cases)
are all it needs. A frozen dataset found at its recorded path with its recorded
sha256 is loaded only to check the files' case ids against it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.decide import DatasetFacts, RunFacts, RunOutcome, decide
from pytest_ragproof.verdict.merge_checks import ShardFile
from pytest_ragproof.verdict.merge_gates import Gates
from pytest_ragproof.verdict.record import CaseRecord

__all__ = ["Gates", "ShardFile", "merge", "recheck"]

_EXAMPLES = 3


def _flat(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            yield from _flat(value[key], f"{prefix}.{key}")
    else:
        yield prefix, value


def _first_difference(a: Any, b: Any, prefix: str) -> tuple[str, Any, Any] | None:
    left, right = dict(_flat(a, prefix)), dict(_flat(b, prefix))
    for key in sorted(set(left) | set(right)):
        if left.get(key) != right.get(key):
            return key, left.get(key), right.get(key)
    return None


def _datasets(f: ShardFile) -> dict[str, dict[str, Any]]:
    """The file's dataset entries (the keys they hold) without their per-shard ``evaluated``
    count."""
    return {
        d.path: d.model_dump(exclude={"evaluated"}, exclude_unset=True) for d in f.results.datasets
    }


def _shared(f: ShardFile) -> dict[str, Any]:
    """What every file of one run records alike (only the shard's K may differ)."""
    run = f.run
    return {
        "settings": f.results.settings.model_dump(exclude_unset=True),
        "redacted": f.results.redacted,
        "run.config": run.config,
        "run.population": run.population,
        "run.datasets": run.datasets,
        "run.shard.n": None if run.shard is None else run.shard.n,
    }


def _check_together(files: Sequence[ShardFile]) -> None:
    """Same settings, datasets (by hash) and population in every file, or ConfigError."""
    first = files[0]
    for f in files:
        f.run  # noqa: B018 - ConfigError for a file without a run section
    for f in files[1:]:
        own, theirs = _datasets(first), _datasets(f)
        for path in sorted(set(own) | set(theirs)):
            if path not in own or path not in theirs:
                has, lacks = (f, first) if path not in own else (first, f)
                raise ConfigError(
                    f"dataset {path} is in {has.name} but not in {lacks.name}; merge the "
                    "results of one run's shards (same datasets, same settings)"
                )
            diff = _first_difference(own[path], theirs[path], "")
            if diff is not None:
                key, a, b = diff
                raise ConfigError(
                    f"dataset {path} differs: {key.lstrip('.')} is {a!r} in {first.name} and "
                    f"{b!r} in {f.name}; run every shard on the same frozen dataset"
                )
        mine, theirs = _shared(first), _shared(f)
        for section in mine:
            diff = _first_difference(mine[section], theirs[section], section)
            if diff is not None:
                key, a, b = diff
                raise ConfigError(
                    f"{first.name} and {f.name} differ in {key}: {a!r} vs {b!r}; run every "
                    "shard with the same options (only --ragproof-shard's K may differ)"
                )


def _examples(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_EXAMPLES])
    return shown + (f", … (+{len(ids) - _EXAMPLES})" if len(ids) > _EXAMPLES else "")


def _check_coverage(files: Sequence[ShardFile]) -> list[set[str]]:
    """Every item of the population in exactly one file, or ConfigError naming the gap."""
    covered = [f.covered() for f in files]
    owner: dict[str, int] = {}
    shared: dict[tuple[int, int], list[str]] = {}
    for i, ids in enumerate(covered):
        for nodeid in ids:
            j = owner.setdefault(nodeid, i)
            if j != i:
                shared.setdefault((j, i), []).append(nodeid)
    if shared:
        parts = [
            f"{files[a].label} and {files[b].label} both ran {len(ids)} case(s), e.g. "
            f"{_examples(sorted(ids))}"
            for (a, b), ids in sorted(shared.items())
        ]
        raise ConfigError(
            "the files overlap: "
            + "; ".join(parts)
            + "; give each shard's file once, from shards of one split"
        )
    population = files[0].run.population
    if len(owner) == population:
        return covered
    known = set().union(
        *(ids | set(f.run.deselected) for ids, f in zip(covered, files, strict=True))
    )
    unowned = sorted(known - set(owner))
    why = [f"the files cover {len(owner)} of {population} case(s)"]
    shards = [f.run.shard for f in files if f.run.shard]
    if len(shards) == len(files):
        n = shards[0].n
        given = {s.k for s in shards}
        absent = [f"{k}/{n}" for k in range(1, n + 1) if k not in given]
        if absent:
            why.append(f"no file for shard {', '.join(absent)}")
    if unowned:
        why.append(
            f"{len(unowned)} case(s) were deselected in every file (a missing pytest-shard or "
            f"pytest-split group, or -k/-m in the shards?), e.g. {_examples(unowned)}"
        )
    raise ConfigError(
        "; ".join(why) + "; merge needs the file of every shard, each run without -k or -m"
    )


def _unique(values: Iterator[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def _git(files: Sequence[ShardFile]) -> Mapping[str, str] | None:
    """The commit and branch the shards recorded, when they all recorded the same."""
    found = [f.run.git for f in files]
    first = found[0]
    if first is None or any(g != first for g in found):
        return None
    # As recorded: the keys the shards wrote (the merged document's ``run.git``).
    git: dict[str, str] = first.model_dump(exclude_unset=True)
    return git


def _records(files: Sequence[ShardFile]) -> list[CaseRecord]:
    """The shards' case records, from their entries as written (the merged file's bytes)."""
    return [CaseRecord.from_dict(dict(c)) for f in files for c in f.entries]


def _dataset_facts(first: ShardFile) -> list[DatasetFacts]:
    per_dataset = first.run.datasets
    return [
        DatasetFacts(d.path, None, per_dataset[d.path], recorded=d.model_dump(exclude_unset=True))
        for d in first.results.datasets
    ]


def merge(
    files: Sequence[ShardFile],
    base: Path,
    notes: list[str] | None = None,
    gates: Gates | None = None,
) -> tuple[RunOutcome, RunConfig]:
    """The verdict of the run whose shards wrote ``files`` and the settings that gated it.

    ConfigError (naming the files) when the files do not belong together, leave a
    gap, or hold cases the run cannot have written (:mod:`.merge_checks`; the files
    were read with ``read_results(check=True)``).

    ``base``: where a recorded relative baseline path and the datasets' paths are
    resolved (the merge's folder, the one pytest ran in). ``notes``: receives what
    could not be checked (a dataset not at hand) and the gates that differ from the
    files'. ``gates``: the thresholds, xfail tags, pass rate and baseline of the
    configuration the merge runs in (:mod:`.merge_gates`); None: the files' own (a
    library caller that trusts them).
    """
    from pytest_ragproof.verdict.merge_checks import (
        check_dataset_ids,
        check_shards,
        check_skipped,
        check_statuses,
    )
    from pytest_ragproof.verdict.recorded import config_from_record

    if not files:
        raise ConfigError("no results files given; e.g. ragproof merge shard-*.json")
    _check_together(files)
    check_shards(files)
    check_skipped(files)
    _check_coverage(files)
    first = files[0]
    cfg = config_from_record(dict(first.run.config), base, first.name)
    if cfg.settings() != first.results.settings.model_dump(exclude_unset=True):
        raise ConfigError(
            f"{first.name}: its recorded settings do not rebuild the same run configuration "
            "(written by another pytest-ragproof version?); merge with the version that ran it"
        )
    check_statuses(files, cfg)
    unchecked = check_dataset_ids(files, base, cfg)
    if gates is not None:
        from pytest_ragproof.verdict.merge_gates import gated_config, restatus

        cfg, differ, case_level = gated_config(first.run.config, cfg, gates, base)
        unchecked.extend(differ)
        if case_level:
            files = restatus(files, cfg, gates.xfail_strict)
    if notes is not None:
        notes.extend(unchecked)
    population = first.run.population
    facts = RunFacts(
        records=_records(files),
        datasets=_dataset_facts(first),
        expected=population,
        selected=population,
        missing=sorted(m for f in files for m in f.run.missing),
        stopped=any(f.run.stopped for f in files),
        not_selected=_unique(p for f in files for p in f.run.not_selected),
        notes=_unique(n for f in files for n in f.run.notes),
        skipped=sorted(s for f in files for s in f.run.skipped),
        skip_reasons={k: v for f in files for k, v in (f.run.skip_reasons or {}).items()},
        git=_git(files),
    )
    return decide(facts, cfg), cfg


def _count(file: ShardFile, name: str, value: int | None) -> int:
    """``run.<name>``, which every pytest run writes; ConfigError naming it when absent."""
    if value is None:
        raise ConfigError(
            f"{file.name}: field run.{name}: missing; the file was edited or written by an "
            "older pytest-ragproof: add the file as pytest-ragproof wrote it"
        )
    return value


def recheck(file: ShardFile, base: Path) -> list[str]:
    """Decide the run of one results file again, as :func:`merge` decides shards, and
    check that the file's ``passed`` is that verdict (``ragproof history add``).

    The file's statuses are checked against its metrics, case thresholds and xfail tags,
    its case ids against its frozen dataset when that is at hand, and its verdict is
    decided from its cases and the settings it recorded (a shard's, a selection's or a
    stopped run's as pytest decided it). ConfigError naming the file when ``passed``
    differs. Returns notes on what could not be checked (a dataset or the baseline not at
    hand: without its baseline a file's "failed" is believed, its "passed" still checked).
    """
    from pytest_ragproof.verdict.merge_checks import (
        check_dataset_ids,
        check_shards,
        check_skipped,
        check_statuses,
    )
    from pytest_ragproof.verdict.recorded import config_from_record, recorded
    from pytest_ragproof.verdict.shard import Shard

    check_shards([file])
    check_skipped([file])
    record = dict(file.run.config)
    notes: list[str] = []
    baseline = recorded(record, file.name).baseline
    dropped = baseline is not None and not (base / baseline.path).is_file()
    if dropped:
        assert baseline is not None
        notes.append(
            f"verdict checked without the baseline {baseline.path}: not found at "
            f"{base / baseline.path}"
        )
        record["baseline"] = None  # the record being rebuilt without it
    cfg = config_from_record(record, base, file.name)
    if not dropped and cfg.settings() != file.results.settings.model_dump(exclude_unset=True):
        raise ConfigError(
            f"{file.name}: its recorded settings do not rebuild the same run configuration "
            "(written by another pytest-ragproof version?); add it with the version that ran it"
        )
    check_statuses([file], cfg)
    notes.extend(check_dataset_ids([file], base, cfg))
    run = file.run
    shard = run.shard
    facts = RunFacts(
        records=_records([file]),
        datasets=_dataset_facts(file),
        expected=_count(file, "expected", run.expected),
        selected=_count(file, "selected", run.selected),
        missing=sorted(run.missing),
        stopped=run.stopped,
        not_selected=list(run.not_selected),
        notes=list(run.notes),
        shard=None if not shard else Shard(shard.k, shard.n),
        population=run.population if shard else None,
        populations=dict(run.datasets) if shard else {},
        skipped=sorted(run.skipped),
        skip_reasons=dict(run.skip_reasons or {}),
        deselected=sorted(run.deselected),
    )
    outcome = decide(facts, cfg)
    said = file.results.passed
    if outcome.passed == said or (dropped and not said):
        return notes
    failed = sum(1 for r in facts.records if r.status in ("failed", "error"))
    why = (
        f"{failed} case(s) failed or errored"
        if failed
        else outcome.gate_failures[0]
        if outcome.gate_failures
        else "the run stopped before its cases did"
        if facts.stopped
        else "every gate and case passed"
    )
    raise ConfigError(
        f"{file.name}: field passed: {str(said).lower()} but its cases and the settings it "
        f"recorded give a {'passed' if outcome.passed else 'failed'} run ({why}); the file "
        "was edited or written by another run: add the file as pytest-ragproof wrote it"
    )
