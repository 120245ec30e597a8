"""The state of one pytest run of ragproof: settings, datasets, shard, what was collected.

:class:`RunState` is built once per process (controller and each xdist worker) and is
the base of the registered run object (:class:`~pytest_ragproof.plugin.session.RagproofRun`),
whose hooks live beside it by responsibility: collection and the xdist merge
(``session``), running a case (``items``), the end of the run (``finish``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

import pytest_ragproof.plugin.options as options
import pytest_ragproof.plugin.usage as usage
import pytest_ragproof.plugin.xdist_support as xdist_support
from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError, DatasetError, FrozenDatasetModifiedError
from pytest_ragproof.execution.call import LoopOwner
from pytest_ragproof.plugin.history import history_target
from pytest_ragproof.plugin.lookahead import LookAhead
from pytest_ragproof.plugin.refs import CASE_KEY, CaseRef, case_ref, relpath
from pytest_ragproof.plugin.scorers import Scorers, check_judges
from pytest_ragproof.plugin.selection import add_collection_args, select_datasets
from pytest_ragproof.plugin.settings import build, check_outputs
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.exports import EXPORTERS
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.shard import Shard, parse_shard

if TYPE_CHECKING:
    from pytest_ragproof.verdict.decide import Line, RunOutcome


def _shard(config: pytest.Config, cfg: RunConfig) -> Shard | None:
    """``--ragproof-shard K/N``, checked against the options it cannot go with."""
    shard = parse_shard(options.get(config, "shard"))
    if shard is not None and shard.n > 1 and cfg.baseline is not None and cfg.baseline.update:
        raise ConfigError(
            f"--ragproof-shard {shard.text} with --ragproof-baseline-update would write a "
            "baseline of one shard's cases; run the shards without --ragproof-baseline-update "
            "and write the baseline from their merged results: ragproof merge shard-*.json "
            f"-o {cfg.baseline.shown}"
        )
    return shard


def _others_here(config: pytest.Config, shard: Shard | None) -> bool:
    """``--ragproof-shard-others``: do this shard's tests that are not dataset cases run?"""
    others = str(options.get(config, "shard_others")).strip()
    if others not in ("first", "all"):
        raise ConfigError(
            f"--ragproof-shard-others expects 'first' or 'all'; got '{others}': 'first' runs "
            "the tests that are not dataset cases in shard 1 only, 'all' in every shard"
        )
    return shard is None or shard.k == 1 or others == "all"


def _load(path: Path, config: pytest.Config) -> Dataset:
    """A dataset, or the usage error that stops the run before any case runs."""
    if not path.exists():
        origin = usage.origin(config, "dataset")
        raise pytest.UsageError(
            f"ragproof: dataset {path} does not exist{origin}; check the path (relative to "
            "the ini file for ragproof_dataset, to the current folder for --ragproof-dataset)"
        )
    try:
        dataset = load_dataset(path)
    except DatasetError as exc:
        also = ""
        if not isinstance(exc, FrozenDatasetModifiedError) and exc.record is not None:
            also = f"\n  to list every bad record: ragproof validate {path}"
        raise pytest.UsageError(f"ragproof: invalid dataset: {exc}{also}") from None
    # Each case's canonical JSON text serves freezing and its checks, not a run: about
    # half a kilobyte a case, held to the end of the run otherwise.
    return dataclasses.replace(dataset, canonical_cases=())


def _entries_read(config: pytest.Config, cfg: RunConfig) -> bool:
    """Does an output of this run read its case entries (the results document's cases)?

    The results file, a baseline, an export and the history store do; the run's verdict
    and summary read each case's status and scores only. Without them a case's record
    drops what only its entry shows once the case is scored (the answer, the retrieved
    contexts and their texts, the judges' reasons), instead of keeping it to the end.
    """
    outputs = ("history", *EXPORTERS)
    read = cfg.report is not None or cfg.baseline is not None
    return read or any(options.get(config, name) for name in outputs)


class RunState:
    """Everything one pytest run of ragproof knows."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.notes: list[str] = []
        try:
            self.cfg: RunConfig = build(config)
            check_outputs(config, self.cfg.report)
            if options.get(config, "endpoint"):  # the service is the pipeline (no fixture)
                from pytest_ragproof.plugin.endpoint import install

                self.cfg = install(config, self.cfg, self.notes)
            self.shard = _shard(config, self.cfg)
            self.others_here = _others_here(config, self.shard)
            self.is_worker = xdist_support.is_worker(config)
            # Checked and opened on the process that writes it only (not on xdist workers).
            self.history = None if self.is_worker else history_target(config)
        except ConfigError as exc:
            raise pytest.UsageError(f"ragproof: {exc}{usage.origin_of(config, exc)}") from None
        self.loops = LoopOwner()
        self.selection = select_datasets(config, self.cfg.datasets)
        self.datasets: dict[Path, Dataset] = {}
        for path in self.selection.joined:
            self.datasets[path] = _load(path, self.config)
        self._check_unique_ids()
        # Each dataset's evaluated cases (--ragproof-shard applied), sorted by id, and how
        # many there are without the shard; a shard hashes each case once, here.
        self.shares: dict[Path, list[Case]] = {}
        self.populations: dict[Path, int] = {}
        self.expected: set[str] = {
            f"{relpath(config, path)}::{case.id}"
            for path in self.datasets
            for case in self.share(path)
        }
        self.marker_population: dict[str, int] = {}  # marked function -> cases without shard
        # Only the joining datasets become collectors; a marker test's dataset is not one.
        self.collect_paths = frozenset(self.selection.joined)
        self.selected: set[str] | None = None
        self.records: dict[str, CaseRecord] = {}
        self.skipped: set[str] = set()
        self.skip_reasons: dict[str, str] = {}  # skipped node id -> the reason pytest gave
        self.marker_ids: set[str] = set()  # marker-mode items (their population is collected)
        self.ahead = LookAhead(self.cfg, self.notes)
        check_judges(config, self.cfg)
        self.scorers = Scorers(config, self.cfg, self.notes)
        self.written: list[str] = []
        self.history_line: Line | None = None
        self.outcome: RunOutcome | None = None
        self._local: dict[str, CaseRecord] = {}  # serial: a report's record until it is logged
        # Each running item's record (by node id) until its call is reported: kept off the
        # item's stash, which one more key makes grow for the rest of the run.
        self.running: dict[str, CaseRecord] = {}
        # Metrics as user_properties only for the reports that print them (JUnit XML,
        # pytest-reportlog): 30 properties per case are copied into every test report.
        self.properties = bool(
            getattr(config.option, "xmlpath", None) or getattr(config.option, "report_log", None)
        )
        self.entries_read = _entries_read(config, self.cfg)
        # Each running item's setup report's keywords, shared by its call and teardown
        # reports (pytest gives each of the three an equal dict, kept to the end of the run).
        self.keywords: dict[str, Mapping[str, Literal[1]]] = {}
        add_collection_args(self.config, self.selection.joined)

    def dataset(self, path: Path) -> Dataset:
        """Load a dataset once per process (marker mode asks during collection)."""
        ds = self.datasets.get(path)
        if ds is None:
            ds = self.datasets[path] = _load(path, self.config)
        return ds

    def share(self, path: Path) -> list[Case]:
        """The cases of dataset ``path`` this run evaluates, sorted by id (computed once)."""
        cases = self.shares.get(path)
        if cases is None:
            population = self.cfg.population(self.dataset(path).cases)
            self.populations[path] = len(population)
            if self.shard is not None:
                shown, owns = relpath(self.config, path), self.shard.owns
                population = [c for c in population if owns(shown, c.id)]
            cases = self.shares[path] = sorted(population, key=lambda c: c.id)
        return cases

    def _check_unique_ids(self) -> None:
        seen: dict[str, Path] = {}
        for path, ds in self.datasets.items():
            for case in ds.cases:
                other = seen.setdefault(case.id, path)
                if other != path:
                    raise pytest.UsageError(
                        f"ragproof: case id '{case.id}' is in both {other.name} and {path.name}; "
                        "case ids must be unique across datasets"
                    )

    def attach(self, item: pytest.Item, case: Case, dataset: Path) -> None:
        """A dataset file's item for ``case``: what it evaluates, for the run's fixture."""
        item.stash[CASE_KEY] = CaseRef(case, self.cfg.pipeline_fixture, dataset)
        nodeid = item.nodeid
        if nodeid in self.expected:
            # The item's own string from now on: an equal one per case was held twice.
            self.expected.discard(nodeid)
            self.expected.add(nodeid)

    def new_record(self, item: pytest.Item) -> CaseRecord:
        ref = case_ref(item)
        assert ref is not None
        return CaseRecord.for_case(
            ref.case,
            dataset=relpath(self.config, ref.dataset),
            nodeid=item.nodeid,
            pipeline=ref.pipeline,
        )
