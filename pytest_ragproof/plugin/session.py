"""Per-run state of the pytest runner, registered as a plugin object.

Loads the datasets once per process (controller and each xdist worker), runs
and scores cases, gathers case records on the controller (they travel on the
test reports), decides the aggregate gate and the exit code in
``pytest_sessionfinish``, and writes the summary and the results file.

Longer than the 400-line habit because it is the one object whose hooks see a case
from collection to verdict (collection, shards, running with look-ahead and repeats,
report round trips, the end of the run); the work each hook delegates lives in
``runner/``, ``selection``, ``lookahead`` and ``scorers``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_ragproof.plugin.options as options
import pytest_ragproof.plugin.xdist_support as xdist_support
from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import (
    ConfigError,
    DatasetError,
    EndpointError,
    FrozenDatasetModifiedError,
    PipelineSignatureError,
)
from pytest_ragproof.execution.call import LoopOwner, NotCallableError
from pytest_ragproof.execution.execute import Outcome, call_case, finish_case
from pytest_ragproof.execution.repeat import finish_repeats, repeat_keys
from pytest_ragproof.plugin.collect import CaseItem, DatasetFile
from pytest_ragproof.plugin.lookahead import LookAhead
from pytest_ragproof.plugin.scorers import Scorers, check_judges
from pytest_ragproof.plugin.selection import add_collection_args, select_datasets
from pytest_ragproof.plugin.settings import build, check_outputs
from pytest_ragproof.results.document import write_results
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.decide import DatasetFacts, RunFacts, RunOutcome, decide
from pytest_ragproof.verdict.exports import EXPORTERS, write_export
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.shard import Shard, parse_shard

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.execute import Judged
    from pytest_ragproof.execution.judging import JudgeStage

RECORD_KEY = pytest.StashKey[CaseRecord]()


@dataclass(frozen=True)
class CaseRef:
    """What a ragproof test item evaluates: a case, for a pipeline, from a dataset file."""

    case: Case
    pipeline: str
    dataset: Path
    origin: str = "dataset"  # "dataset" (a dataset file's item) or "marker" (@pytest.mark.rag)


CASE_KEY = pytest.StashKey[CaseRef]()
RUN_KEY = pytest.StashKey["RagproofRun"]()


@functools.lru_cache(maxsize=1024)
def _property_name(metric: str) -> str:
    return f"ragproof.{metric}"


def case_ref(item: pytest.Item) -> CaseRef | None:
    """The case of a ragproof item (dataset item or ``@pytest.mark.rag`` test), else None."""
    return item.stash.get(CASE_KEY, None)


def get_run(config: pytest.Config) -> RagproofRun:
    """The run object, created on first use when no dataset option activated it."""
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        run = RagproofRun(config)
        config.stash[RUN_KEY] = run
        config.pluginmanager.register(run, "ragproof-run")
    return run


@functools.lru_cache(maxsize=256)
def _relpath_cached(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _relpath(config: pytest.Config, path: Path) -> str:
    """``path`` relative to the rootdir with ``/`` (absolute when outside it)."""
    return _relpath_cached(config.rootpath, path)


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


def _load(path: Path, config: pytest.Config) -> Dataset:
    """A dataset, or the usage error that stops the run before any case runs."""
    if not path.exists():
        origin = options.origin(config, "dataset")
        raise pytest.UsageError(
            f"ragproof: dataset {path} does not exist{origin}; check the path (relative to "
            "the ini file for ragproof_dataset, to the current folder for --ragproof-dataset)"
        )
    try:
        return load_dataset(path)
    except DatasetError as exc:
        also = ""
        if not isinstance(exc, FrozenDatasetModifiedError) and exc.record is not None:
            also = f"\n  to list every bad record: ragproof validate {path}"
        raise pytest.UsageError(f"ragproof: invalid dataset: {exc}{also}") from None


class RagproofRun:
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
        except ConfigError as exc:
            raise pytest.UsageError(f"ragproof: {exc}{options.origin_of(config, exc)}") from None
        self.is_worker = xdist_support.is_worker(config)
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
            f"{_relpath(config, path)}::{case.id}"
            for path in self.datasets
            for case in self.share(path)
        }
        self.marker_population: dict[str, int] = {}  # marked function -> cases without shard
        # Only the joining datasets become collectors; a marker test's dataset is not one.
        self.collect_paths = frozenset(self.selection.joined)
        self.selected: set[str] | None = None
        self.records: dict[str, CaseRecord] = {}
        self.skipped: set[str] = set()
        self.marker_ids: set[str] = set()  # marker-mode items (their population is collected)
        self.ahead = LookAhead(self.cfg, self.notes)
        check_judges(config, self.cfg)
        self.scorers = Scorers(config, self.cfg)
        self.written: list[str] = []
        self.outcome: RunOutcome | None = None
        self._local: dict[str, CaseRecord] = {}  # serial: a report's record until it is logged
        # Metrics as user_properties only for the reports that print them (JUnit XML,
        # pytest-reportlog): 30 properties per case are copied into every test report.
        self.properties = bool(
            getattr(config.option, "xmlpath", None) or getattr(config.option, "report_log", None)
        )
        self._add_dataset_args()
        if not self.is_worker:
            config.pluginmanager.register(
                xdist_support.XdistHooks(self._on_worker_collected, self._on_worker_done),
                "ragproof-xdist",
            )

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
                shown, owns = _relpath(self.config, path), self.shard.owns
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

    def _add_dataset_args(self) -> None:
        add_collection_args(self.config, self.selection.joined)

    # -- collection ---------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        if self.collect_paths and file_path.resolve() in self.collect_paths:
            node: DatasetFile = DatasetFile.from_parent(parent, path=file_path)
            node.run = self
            return node
        return None

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        # Marker items have no population known up front: deselected ones count too.
        for item in items:
            self._count_marker_item(item)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if xdist_support.is_controller(self.config):
            return
        self.selected = {i.nodeid for i in session.items if self._count_marker_item(i)}

    def _count_marker_item(self, item: pytest.Item) -> bool:
        """Is ``item`` ragproof's? A marker-mode one joins the expected population too."""
        ref = case_ref(item)
        if ref is not None and ref.origin == "marker":
            self.expected.add(item.nodeid)
            self.marker_ids.add(item.nodeid)
        return ref is not None

    def _on_worker_collected(self, ids: list[str]) -> None:
        if self.selected is None:
            self.selected = {i for i in ids if i in self.expected}

    def _on_worker_done(self, info: dict[str, Any]) -> None:
        # Workers report their marker-mode population (collected and deselected).
        self.expected.update(info["expected"])
        self.marker_population.update(info.get("marker_population", {}))
        self.selected = (self.selected or set()) | set(info["selected"])
        self.notes.extend(n for n in info.get("notes", []) if n not in self.notes)

    def attach(self, item: pytest.Item, case: Case, dataset: Path) -> None:
        """A dataset file's item for ``case``: what it evaluates, for the run's fixture."""
        item.stash[CASE_KEY] = CaseRef(case, self.cfg.pipeline_fixture, dataset)

    # -- running ------------------------------------------------------------
    def new_record(self, item: pytest.Item) -> CaseRecord:
        ref = case_ref(item)
        assert ref is not None
        return CaseRecord.for_case(
            ref.case,
            dataset=_relpath(self.config, ref.dataset),
            nodeid=item.nodeid,
            pipeline=ref.pipeline,
        )

    def run_case(self, item: CaseItem, pipeline: Any) -> None:
        __tracebackhide__ = True
        record = self.new_record(item)
        item.stash[RECORD_KEY] = record
        stage = self.judging(item)
        prefetcher = self.ahead.prefetcher_for(item, None if stage is None else stage.submit)
        n = self.cfg.repeat
        keys = repeat_keys(item.nodeid, n)
        outcomes: list[Outcome] = []
        judged: list[Judged | None] = []
        if prefetcher is None:
            for key in keys:
                outcome = call_case(pipeline, item.case, self.cfg, self.loops)
                outcomes.append(outcome)
                judged.append(None if stage is None else stage.judge_now(key, item.case, outcome))
        else:
            # Each repeat is a submission of its own, so a case's repeats run concurrently.
            upcoming = self.ahead.upcoming(item, prefetcher.window)
            prefetcher.submit(
                [(key, case) for nodeid, case in upcoming for key in repeat_keys(nodeid, n)],
                pipeline,
            )
            for key in keys:
                outcome = prefetcher.outcome(key)
                outcomes.append(outcome)
                judged.append(None if stage is None else stage.collect(key, outcome))
        self.conclude(item, record, outcomes, judged, judged_already=True)

    def judging(self, item: pytest.Item) -> JudgeStage | None:
        return self.scorers.judging(item)

    def evaluator_runner(self, item: pytest.Item) -> EvaluatorRunner | None:
        return self.scorers.evaluator_runner(item)

    def conclude(
        self,
        item: pytest.Item,
        record: CaseRecord,
        outcomes: Sequence[Outcome],
        judged: Sequence[Judged | None] = (),
        *,
        judged_already: bool = False,
    ) -> None:
        """Score a case's outcomes (one per repeat), attach metrics, fail the item if due."""
        __tracebackhide__ = True
        ref = case_ref(item)
        assert ref is not None
        if not judged_already:
            stage = self.judging(item)
            keys = repeat_keys(item.nodeid, len(outcomes))
            judged = [
                None if stage is None else stage.judge_now(key, ref.case, outcome)
                for key, outcome in zip(keys, outcomes, strict=True)
            ]
        judgements = list(judged) or [None] * len(outcomes)
        evaluators = self.evaluator_runner(item)
        if len(outcomes) == 1:
            verdict = finish_case(
                record, ref.case, outcomes[0], self.cfg, judgements[0], evaluators
            )
            decisive: Outcome | None = outcomes[0]
        else:
            # A repeat's error speaks only when no repeat was scored; otherwise it is a
            # repeat that did not pass, named in the case's message.
            repeated = finish_repeats(record, ref.case, outcomes, self.cfg, judgements, evaluators)
            verdict, decisive = repeated.verdict, repeated.decisive
        if self.properties:
            item.user_properties.extend(
                (_property_name(name), value) for name, value in record.metrics.items()
            )
            item.user_properties.append(("ragproof.status", record.status))
        if record.error_type == "JudgeConfigError":
            # The same for every case: say it once and stop the run (a usage error).
            item.session.shouldstop = "ragproof: the judge model cannot be called"
            pytest.fail(verdict.message or "ragproof: the judge model cannot be called", False)
        error = None if decisive is None else decisive.error
        if isinstance(error, PipelineSignatureError):
            # The same for every case: say it once and stop the run.
            item.session.shouldstop = "ragproof: the pipeline cannot take what ragproof passes"
            fixture = self.cfg.pipeline_fixture
            pytest.fail(f"ragproof: fixture '{fixture}': {error}", pytrace=False)
        if isinstance(error, NotCallableError):
            message = error.for_fixture(self.cfg.pipeline_fixture)
            pytest.fail(message, pytrace=False)  # our message; no traceback to show
        if isinstance(error, EndpointError):  # no traceback: its frames hold headers
            pytest.fail(f"ragproof case {ref.case.id}: {error}", pytrace=False)
        if error is not None and not self.cfg.redact:
            raise error  # the user's exception, shown as usual
        if verdict.message is not None:
            pytest.fail(verdict.message, pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if case_ref(item) is None:
            return report
        record = item.stash.get(RECORD_KEY, None)
        if report.when == "setup" and report.skipped:
            report.ragproof_skipped = True
        elif report.when == "setup" and report.failed:
            record = self.new_record(item)
            record.status = "error"
            record.error_type = call.excinfo.typename if call.excinfo else "SetupError"
            self._attach(report, record)
        elif report.when == "call" and record is not None:
            if hasattr(report, "wasxfail"):
                record.status = "xfailed" if report.skipped else "xpassed"
            elif report.failed and record.status == "passed":
                record.status = "failed"  # xfail(strict=True) that passed: pytest fails it
            self._attach(report, record)
        return report

    def _attach(self, report: pytest.TestReport, record: CaseRecord) -> None:
        """A worker's record travels on its report as a dict; serially it is kept as is."""
        if self.is_worker:
            setattr(report, "ragproof", record.to_dict())  # noqa: B010 - pytest's report
        else:
            # Kept beside the report, not on it: plugins such as pytest-reportlog serialize
            # every attribute of a report.
            self._local[report.nodeid] = record

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return  # the controller gathers records (xdist sends this report on)
        local = self._local.pop(report.nodeid, None)
        data = getattr(report, "ragproof", None)
        if local is not None:
            self.records[report.nodeid] = local
        elif data is not None:
            self.records[report.nodeid] = CaseRecord.from_dict(data)
            del report.ragproof
        elif getattr(report, "ragproof_skipped", False) or (
            report.skipped and report.nodeid in self.expected
        ):
            self.skipped.add(report.nodeid)

    # -- the verdict --------------------------------------------------------
    def _stopped(self, session: pytest.Session, exitstatus: int) -> bool:
        """Did the run end before its cases did (-x, --maxfail, Ctrl-C)?"""
        return bool(
            session.shouldstop or session.shouldfail or exitstatus == pytest.ExitCode.INTERRUPTED
        )

    def facts(self, session: pytest.Session, exitstatus: int) -> RunFacts:
        """What this run collected, for the verdict."""
        records = list(self.records.values())
        # An xdist controller never collected marker-mode tests: load their datasets now.
        for rel in sorted({r.dataset for r in records}):
            path = Path(rel) if Path(rel).is_absolute() else self.config.rootpath / rel
            self.dataset(path.resolve())
        selected = self.selected if self.selected is not None else set()
        chosen = selected & self.expected if self.expected else selected
        joined = set(self.selection.joined)
        return RunFacts(
            records=records,
            datasets=[
                DatasetFacts(_relpath(self.config, path), ds, len(self.share(path)))
                for path, ds in sorted(self.datasets.items())
            ],
            expected=len(self.expected),
            selected=len(chosen),
            missing=sorted(selected - set(self.records) - self.skipped),
            stopped=self._stopped(session, exitstatus),
            not_selected=[_relpath(self.config, p) for p in self.selection.not_selected],
            notes=self.notes,
            shard=self.shard,
            population=sum(n for p, n in self.populations.items() if p in joined)
            + sum(self.marker_population.values()),
            populations={_relpath(self.config, p): n for p, n in self.populations.items()},
            skipped=sorted(self.skipped & chosen),
            deselected=sorted(self.expected - chosen),
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.loops.close()
        self.ahead.close()
        self.scorers.close()
        if self.is_worker:
            xdist_support.send_to_controller(
                self.config,
                {
                    "expected": sorted(self.marker_ids),
                    "selected": sorted((self.selected or set()) & self.marker_ids),
                    "marker_population": self.marker_population,
                    "notes": list(self.notes),
                },
            )
            return
        if self.config.option.collectonly:
            return
        self._note_stale_sources()
        facts = self.facts(session, exitstatus)
        self.outcome = outcome = decide(facts, self.cfg)
        if facts.records or facts.datasets:
            self.write_outputs(outcome)
        if any(
            r.error_type in ("PipelineSignatureError", "JudgeConfigError") for r in facts.records
        ):
            # The pipeline cannot take what ragproof passes: a usage error, not a result.
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif outcome.gate_failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _note_stale_sources(self) -> None:
        """A frozen dataset beside a same-stem JSONL with other cases: say so once."""
        from pytest_ragproof.dataset.freeze import stale_message, stale_source

        for path in self.selection.joined:
            ds = self.datasets.get(path)
            if ds is None or not ds.frozen:
                continue
            # Only a source edited after the freeze is compared (make's rule): comparing
            # cases means loading the whole JSONL, which is not free on every run.
            source = stale_source(path, ds, edited_after_only=True)
            if source is not None:
                shown = _relpath(self.config, source)
                self.notes.append(f"{path.name} differs from {source.name}: {stale_message(shown)}")

    def write_outputs(self, outcome: RunOutcome) -> None:
        results = outcome.document
        if outcome.baseline_write is not None and self.cfg.baseline is not None:
            write_results(outcome.baseline_write, self.cfg.baseline.path)
        if self.cfg.report is not None:
            write_results(results, self.cfg.report)
            self.written.append(f"results written to {self.cfg.report}")
        base = self.config.invocation_params.dir
        for name in EXPORTERS:
            target = options.get(self.config, name)
            if target:
                path = (base / str(target)).resolve()
                files = write_export(name, results, path)
                self.written.append(f"{name} written to {', '.join(str(f) for f in files)}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        outcome = self.outcome
        if self.is_worker or self.config.option.collectonly or outcome is None:
            return
        tr = terminalreporter
        if not outcome.lines:
            return
        tr.write_sep("=", "ragproof summary")
        for line in outcome.lines:
            tr.write_line(line.text, **line.markup)
        for written in self.written:
            tr.write_line(written)
        if outcome.gate_failures:
            # pytest's own final line counts the failed gates, so a red run never ends on
            # a green-looking "N passed".
            stats = tr.stats.setdefault("ragproof gate failed", [])
            stats.extend(_GateFailure(g) for g in outcome.gate_failures)


class _GateFailure:
    """An entry of the terminal reporter's stats: one failed ragproof gate."""

    count_towards_summary = True

    def __init__(self, text: str) -> None:
        self.text = text
