"""What ``ragproof merge`` checks in each shard's cases before it trusts them (pytest-free).

The schema, metric ranges, duplicates and digest of each file are checked on read
(:mod:`pytest_ragproof.results.schema`). Here, with the run's settings rebuilt:

* every case's status follows from its metrics, the run's case thresholds and its
  xfail tags (a case edited to ``hit@5: 0`` that still says ``passed``, or a failed
  case relabelled ``xfailed`` without an xfail tag or a recorded marker, is refused);
* a file labelled shard K/N holds only cases that hash to shard K (a relabelled
  file);
* when the frozen dataset a file names is at hand (same path, same sha256), every
  case id is one of its cases (a renamed case).

Each refusal is a ConfigError naming the file, the case and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.shard import shard_of
from pytest_ragproof.verdict.thresholds import Threshold, misses

if TYPE_CHECKING:
    from pytest_ragproof.results.checked import CheckedCase, CheckedResults, CheckedRun
    from pytest_ragproof.results.models import Case, Results

__all__ = [
    "ShardFile",
    "check_dataset_ids",
    "check_shards",
    "check_skipped",
    "check_statuses",
    "expected_statuses",
    "missed",
]

_PASSING = ("passed", "xpassed")


@dataclass(frozen=True)
class ShardFile:
    """One results file given to ``ragproof merge``: the name it is shown by, the document
    as parsed and its checked model.

    The checks and the verdict read :attr:`results`; the merged document is built from the
    parsed document's own entries (:attr:`entries`), so its bytes are the shards'.
    ``checked``: the model of ``doc`` as :func:`~pytest_ragproof.results.schema.load_results`
    gave it (None: checked here).
    """

    name: str
    doc: Mapping[str, Any]
    checked: InitVar[Results | None] = None
    results: CheckedResults = field(init=False, repr=False, compare=False)

    def __post_init__(self, checked: Results | None) -> None:
        from pytest_ragproof.results.checked import CheckedResults
        from pytest_ragproof.results.schema import load_results

        model = load_results(self.doc, self.name) if checked is None else checked
        if not isinstance(model, CheckedResults):
            raise TypeError("ShardFile: give the model load_results returned")
        object.__setattr__(self, "results", model)

    @property
    def run(self) -> CheckedRun:
        """The file's ``run`` section; ConfigError when it has none (not a pytest run's)."""
        run = self.results.run
        if run is None:
            raise ConfigError(
                f"{self.name} has no 'run' section (written by evaluate() or an older "
                "pytest-ragproof); merge takes the --ragproof-report files of pytest runs"
            )
        return run

    @property
    def cases(self) -> list[CheckedCase]:
        return self.results.cases

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The case entries as the file holds them: what the merged document is built of."""
        entries: list[dict[str, Any]] = self.doc["cases"]
        return entries

    @property
    def label(self) -> str:
        shard = self.run.shard
        return self.name if not shard else f"{self.name} (shard {shard.k}/{shard.n})"

    def covered(self) -> set[str]:
        """The items this file selected: scored, skipped or never scored (node ids)."""
        ids = {c.nodeid for c in self.cases}
        return ids | set(self.run.skipped) | set(self.run.missing)


def missed(case: Case, thresholds: Sequence[Threshold]) -> list[str]:
    """The case thresholds ``case`` misses by its recorded metrics (absent counts as missed),
    as ``expression: why``."""
    out: list[str] = []
    for t, value in misses(case, case.metrics, thresholds):
        why = f"{t.metric} absent" if value is None else f"{t.metric} = {value:.4g}"
        out.append(f"{t.expression}: {why}")
    return out


def _xfail(case: Case, cfg: RunConfig) -> str | None:
    """Why ``case`` is expected to fail under ``cfg`` (a configured xfail tag, or the pytest
    xfail marker the run recorded), or None."""
    tags = sorted(cfg.xfail_tags.intersection(case.tags))
    if tags:
        return f"tag {tags[0]}"
    return "a pytest xfail marker" if case.xfail_reason is not None else None


def expected_statuses(case: Case, cfg: RunConfig) -> tuple[str, ...] | None:
    """The statuses ``case``'s metrics, tags and recorded marker give under ``cfg``'s case
    thresholds and xfail tags (None: not decided by them: an error, repeats)."""
    if case.repeats is not None or (case.status == "error" and case.error_type is not None):
        return None
    failed = bool(missed(case, cfg.case_thresholds)) or case.error_type is not None
    if _xfail(case, cfg) is not None:
        # xfail(strict=True), the ini's xfail_strict: a case that passed fails, with no miss.
        return ("xfailed",) if failed else ("xpassed", "failed")
    return ("failed",) if failed else ("passed",)


def check_statuses(files: Sequence[ShardFile], cfg: RunConfig) -> None:
    """Every case's status is the one its metrics, the case thresholds and the xfail tags
    give, for every status (an error's is the error it records)."""
    for f in files:
        for i, case in enumerate(f.cases):
            allowed = expected_statuses(case, cfg)
            if allowed is None:
                continue
            status = case.status
            missing = missed(case, cfg.case_thresholds)
            where = f"{f.name}: case {case.id} (cases[{i}])"
            if status in _PASSING and missing:
                raise ConfigError(
                    f"{where}, field status: '{status}' but its metrics miss {missing[0]}; the "
                    "file was edited or written by another run: use each shard's file as "
                    "pytest-ragproof wrote it"
                )
            if status not in allowed:
                tags = ", ".join(sorted(cfg.xfail_tags)) or "none"
                why = (
                    f"no xfail tag of the run (--ragproof-xfail-tag: {tags}) is on the case and "
                    "the run recorded no pytest xfail marker for it"
                    if status in ("xfailed", "xpassed")
                    else f"its metrics and the run's settings give {' or '.join(allowed)}"
                )
                raise ConfigError(
                    f"{where}, field status: '{status}' but {why}; the file was edited or "
                    "written by another run: use each shard's file as pytest-ragproof wrote it"
                )
            recorded = sorted(x.expression for x in case.failures)
            expected = sorted(m.split(": ", 1)[0] for m in missing)
            if status == "failed" and recorded != expected:
                raise ConfigError(
                    f"{where}, field failures: records {recorded or 'none'} but its metrics "
                    f"and the run's case thresholds give {expected or 'none'}; use each shard's "
                    "file as pytest-ragproof wrote it"
                )


def check_skipped(files: Sequence[ShardFile]) -> None:
    """Every case a file says pytest skipped carries the reason pytest gave (a marker's, a
    ``pytest.skip`` call's): a failed case moved into ``run.skipped`` has none."""
    for f in files:
        reasons = f.run.skip_reasons or {}
        for nodeid in f.run.skipped:
            if not str(reasons.get(nodeid) or "").strip():
                raise ConfigError(
                    f"{f.name}: field run.skipped: {nodeid} is skipped, but the file records "
                    "no reason pytest gave for it (field run.skip_reasons); the file was edited "
                    "or written by an older pytest-ragproof: run that shard again"
                )


def check_shards(files: Sequence[ShardFile]) -> None:
    """Files labelled K/N hold only shard K's cases (a file given twice, or two files of
    one shard, are the coverage check's overlap)."""
    for f in files:
        shard = f.run.shard
        if not shard or shard.n == 1:
            continue
        k, n = shard.k, shard.n
        if k > n:
            raise ConfigError(f"{f.name}: field run.shard: shard {k}/{n} does not exist")
        datasets = set(f.run.datasets)
        for i, case in enumerate(f.cases):
            if case.dataset in datasets and shard_of(case.dataset, case.id, n) != k:
                owner = shard_of(case.dataset, case.id, n)
                raise ConfigError(
                    f"{f.name}: case {case.id} (cases[{i}]), field id: belongs to shard "
                    f"{owner}/{n}, not to the file's shard {k}/{n} (field run.shard); the file "
                    "was relabelled or its cases edited"
                )


def check_dataset_ids(
    files: Sequence[ShardFile], base: Path, cfg: RunConfig | None = None
) -> list[str]:
    """Every case names one of the run's datasets and is a case of it, and each dataset's
    recorded population is the frozen dataset's under the run's kinds, splits and tags
    (``cfg``), when that dataset is at hand.

    Returns notes for the datasets that could not be checked (not found, or another
    version at that path).
    """
    notes: list[str] = []
    entries = files[0].results.datasets
    named = {e.path for e in entries}
    for f in files:
        for i, case in enumerate(f.cases):
            if case.dataset not in named:
                raise ConfigError(
                    f"{f.name}: case {case.id} (cases[{i}]), field dataset: "
                    f"{case.dataset!r} is not a dataset of the run (field datasets: "
                    f"{', '.join(sorted(named)) or 'none'}); the file was edited"
                )
    run = files[0].run
    by_dataset = run.datasets
    # A run whose population is its datasets' (marked tests add cases of their own).
    counted = run.population == sum(by_dataset.values())
    for entry in entries:
        path = entry.path
        dataset = _dataset(base / path, entry.sha256)
        if dataset is None:
            notes.append(
                f"case ids not checked against dataset {path}: not found at {base / path} with "
                f"sha256 {entry.sha256[:12]} (the files' digests still were)"
            )
            continue
        ids = {c.id for c in dataset.cases}
        for f in files:
            for i, case in enumerate(f.cases):
                if case.dataset == path and case.id not in ids:
                    raise ConfigError(
                        f"{f.name}: case {case.id} (cases[{i}]), field id: not a case of "
                        f"dataset {path} (sha256 {entry.sha256[:12]}); the file was "
                        "edited or belongs to another dataset"
                    )
        if cfg is None or not counted or path not in by_dataset:
            continue
        population = len(cfg.population(dataset.cases))
        if by_dataset[path] != population:
            raise ConfigError(
                f"{files[0].name}: field run.datasets[{path!r}]: {by_dataset[path]} case(s), but "
                f"the frozen dataset {path} (sha256 {entry.sha256[:12]}) has "
                f"{population} in the run's population (its kinds, splits and tags); the file "
                "was edited: use each shard's file as pytest-ragproof wrote it"
            )
    return notes


def _dataset(path: Path, sha256: str) -> Any:
    """The frozen dataset at ``path`` when its sha256 is ``sha256``, else None."""
    if not path.is_file():
        return None
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.errors import DatasetError

    try:
        dataset = load_dataset(path)
    except DatasetError:
        return None
    return dataset if dataset.sha256 == sha256 else None
