"""Per-run state of the pytest runner, registered as a plugin object.

Loads the datasets once per process (controller and each xdist worker), runs
and scores cases, gathers case records on the controller (they travel on the
test reports), decides the aggregate gate and the exit code in
``pytest_sessionfinish``, and writes the summary and the results file.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof import options
from pytest_ragproof.collect import CaseItem, DatasetFile, case_ref
from pytest_ragproof.dataset.io import Dataset, load_dataset
from pytest_ragproof.errors import ConfigError, DatasetError, FrozenDatasetModifiedError
from pytest_ragproof.runner.call import LoopOwner, NotCallableError
from pytest_ragproof.runner.config import RunConfig, build
from pytest_ragproof.runner.execute import Outcome, call_case, finish_case
from pytest_ragproof.runner.exports import EXPORTERS, write_export
from pytest_ragproof.runner.gates import (
    ThresholdResult,
    all_aggregates,
    evaluate_aggregates,
    summarize_case_thresholds,
)
from pytest_ragproof.runner.prefetch import Prefetcher
from pytest_ragproof.runner.record import CaseRecord
from pytest_ragproof.runner.results import build_results, dataset_entry, write_results
from pytest_ragproof.runner.summary import latency_line, threshold_table, worst_cases

RECORD_KEY = pytest.StashKey[CaseRecord]()


def _fixture_scope(item: pytest.Item, name: str) -> str:
    """Scope of the pipeline fixture as resolved for this item ('function' if unknown)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}).get(name) if info is not None else None
    return str(defs[-1].scope) if defs else "function"


def _run_order(item: pytest.Item) -> list[pytest.Item]:
    """Items after ``item`` in the order this process will run them.

    Serially that is ``session.items``. An xdist worker runs only what the
    controller sent it: its queue (read from xdist's worker object), falling back
    to the next item only when that is not available.
    """
    items = item.session.items
    if hasattr(item.config, "workerinput"):
        for plugin in item.config.pluginmanager.get_plugins():
            if type(plugin).__name__ == "WorkerInteractor":
                try:
                    indices = [plugin.nextitem_index]
                    with plugin.torun.lock() as pending:
                        indices.extend(pending)
                    return [items[i] for i in indices if isinstance(i, int)]
                except (AttributeError, TypeError, IndexError):
                    break
        return []
    try:
        index = items.index(item)
    except ValueError:
        return []
    return items[index + 1 :]


@functools.lru_cache(maxsize=256)
def _relpath_cached(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _relpath(config: pytest.Config, path: Path) -> str:
    """``path`` relative to the rootdir with ``/`` (absolute when outside it)."""
    return _relpath_cached(config.rootpath, path)


def _load(path: Path) -> Dataset:
    """A dataset, or the usage error that stops the run before any case runs."""
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
        try:
            self.cfg: RunConfig = build(config)
        except ConfigError as exc:
            raise pytest.UsageError(f"ragproof: {exc}") from None
        self.is_worker = hasattr(config, "workerinput")
        if options.get(config, "baseline"):
            self._check_regression_options()
        self.loops = LoopOwner()
        self.datasets: dict[Path, Dataset] = {}
        for path in self.cfg.datasets:
            self.datasets[path] = _load(path)
        self._check_unique_ids()
        self.expected: set[str] = {
            f"{_relpath(config, path)}::{case.id}"
            for path, ds in self.datasets.items()
            for case in self.cfg.population(ds.cases)
        }
        self.collected_paths: set[Path] = set()
        self.selected: set[str] | None = None
        self.records: dict[str, CaseRecord] = {}
        self.skipped: set[str] = set()
        self.threshold_results: list[ThresholdResult] = []
        self.gate_failures: list[str] = []
        self.notes: list[str] = []
        self.passed = True
        self.baseline_lines: list[str] = []
        self.prefetcher: Prefetcher | None = None
        self._prefetch_scope = "session"
        self._concurrency_warned = False
        self.written: list[str] = []
        self.components: dict[str, Any] = {}
        self._add_dataset_args()

    def _check_regression_options(self) -> None:
        """Bad tolerances or alpha are usage errors before any case runs."""
        from pytest_ragproof.regression.tolerance import parse_tolerances
        from pytest_ragproof.runner.baseline import _alpha

        try:
            parse_tolerances(options.get(self.config, "regression_tolerance"))
            alpha = _alpha(self.config)
        except ConfigError as exc:
            raise pytest.UsageError(f"ragproof: {exc}") from None
        if not 0 < alpha < 1:
            raise pytest.UsageError(
                f"ragproof: --ragproof-regression-alpha must be between 0 and 1, got {alpha:g}; "
                "e.g. --ragproof-regression-alpha 0.05"
            )

    def dataset(self, path: Path) -> Dataset:
        """Load a dataset once per process (marker mode asks during collection)."""
        ds = self.datasets.get(path)
        if ds is None:
            ds = self.datasets[path] = _load(path)
        return ds

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
        """Make pytest collect the dataset files, wherever they are."""
        base = self.config.invocation_params.dir
        present = {(base / a.split("::")[0]).resolve() for a in self.config.args}
        for path in self.cfg.datasets:
            covered = any(path == p or p in path.parents for p in present)
            if not covered:
                self.config.args.append(str(path))

    # -- collection ---------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        resolved = file_path.resolve()
        if resolved in self.datasets and resolved not in self.collected_paths:
            self.collected_paths.add(resolved)
            return DatasetFile.from_parent(parent, path=file_path)
        return None

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        # Marker items have no population known up front: deselected ones count too.
        self.expected.update(i.nodeid for i in items if case_ref(i) is not None)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self._xdist_controller():
            return
        ours = {i.nodeid for i in session.items if case_ref(i) is not None}
        self.expected.update(i for i in ours if not self._is_dataset_item(i))
        self.selected = ours

    def _is_dataset_item(self, nodeid: str) -> bool:
        return nodeid.split("::", 1)[0].endswith((".json", ".jsonl", ".csv"))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.selected is None:
            self.selected = {i for i in ids if i in self.expected}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # Workers report their marker-mode population (collected and deselected).
        info = getattr(node, "workeroutput", {}).get("ragproof")
        if info:
            self.expected.update(info["expected"])
            self.selected = (self.selected or set()) | set(info["selected"])
            self.notes.extend(n for n in info.get("notes", []) if n not in self.notes)

    def _xdist_controller(self) -> bool:
        return self.config.pluginmanager.has_plugin("dsession")

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
        prefetcher = self._prefetcher_for(item)
        if prefetcher is None:
            outcome = call_case(pipeline, item.case, self.cfg, self.loops)
        else:
            prefetcher.submit(self._upcoming(item, prefetcher.n), pipeline)
            outcome = prefetcher.outcome(item.nodeid)
        self.conclude(item, record, outcome)

    def conclude(self, item: pytest.Item, record: CaseRecord, outcome: Outcome) -> None:
        """Score an outcome, attach metrics to the item and fail it when it should fail."""
        __tracebackhide__ = True
        ref = case_ref(item)
        assert ref is not None
        verdict = finish_case(record, ref.case, outcome, self.cfg)
        for name, value in record.metrics.items():
            item.user_properties.append((f"ragproof.{name}", value))
        item.user_properties.append(("ragproof.status", record.status))
        if isinstance(outcome.error, NotCallableError):
            message = outcome.error.for_fixture(self.cfg.pipeline_fixture)
            pytest.fail(message, pytrace=False)  # our message; no traceback to show
        if outcome.error is not None and not self.cfg.redact:
            raise outcome.error  # the user's exception, shown as usual
        if verdict.message is not None:
            pytest.fail(verdict.message, pytrace=False)

    # -- concurrency (--ragproof-concurrency) -------------------------------
    def _prefetcher_for(self, item: CaseItem) -> Prefetcher | None:
        n = self.cfg.concurrency
        if n <= 1:
            return None
        scope = _fixture_scope(item, self.cfg.pipeline_fixture)
        if scope not in ("session", "module", "package"):
            if not self._concurrency_warned:
                self._concurrency_warned = True
                self.notes.append(
                    f"--ragproof-concurrency={n} did not apply: the fixture "
                    f"'{self.cfg.pipeline_fixture}' is {scope}-scoped, so each case gets a new "
                    "pipeline and cases cannot run ahead; make it session- or module-scoped"
                )
            return None
        if self.prefetcher is None:
            self.prefetcher = Prefetcher(self.cfg, n)
        self._prefetch_scope = scope
        return self.prefetcher

    def _upcoming(self, item: CaseItem, n: int) -> list[tuple[str, Any]]:
        """The current item and the next case items this process will run (at most n)."""
        order = _run_order(item)
        out: list[tuple[str, Any]] = [(item.nodeid, item.case)]
        for other in order:
            if len(out) >= n:
                break
            if other is item or not isinstance(other, CaseItem):
                continue
            if self._prefetch_scope == "module" and other.parent is not item.parent:
                break
            out.append((other.nodeid, other.case))
        return out

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
            report.ragproof = record.to_dict()
        elif report.when == "call" and record is not None:
            report.ragproof = record.to_dict()
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "ragproof", None)
        if data is not None:
            self.records[report.nodeid] = CaseRecord.from_dict(data)
        elif getattr(report, "ragproof_skipped", False) or (
            report.skipped and report.nodeid in self.expected
        ):
            self.skipped.add(report.nodeid)

    # -- the verdict --------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.loops.close()
        if self.prefetcher is not None:
            self.prefetcher.close(self.cfg.timeout or 5.0)
        if self.is_worker:
            markers = {n for n in (self.selected or set()) if not self._is_dataset_item(n)}
            self.config.workeroutput["ragproof"] = {  # type: ignore[attr-defined]
                "expected": sorted(n for n in self.expected if not self._is_dataset_item(n)),
                "selected": sorted(markers),
                "notes": list(self.notes),
            }
            return
        if self.config.option.collectonly:
            return
        records = sorted(self.records.values(), key=lambda r: (r.pipeline, r.nodeid))
        selected = self.selected if self.selected is not None else set()
        partial = selected != self.expected
        if partial and self.expected:
            left_out = len(self.expected - selected)
            self.notes.append(
                f"pytest's selection (-k, -m, --lf, node ids or deselection) left out "
                f"{left_out} of {len(self.expected)} case(s): aggregates are reported, not gated"
            )
        missing = sorted(selected - set(self.records) - self.skipped)
        if missing:
            self.gate_failures.append(
                f"scores missing for {len(missing)} case(s) (a crashed worker or an "
                f"interrupted run?), e.g. {missing[0]}"
            )
        aggregate_results = evaluate_aggregates(
            records,
            self.cfg.aggregate_thresholds,
            gated=not partial,
            narrowed=bool(self.cfg.kinds or self.cfg.splits or self.cfg.tags),
        )
        for r in aggregate_results:
            if r.failed:
                observed = "no scored cases" if r.observed is None else f"{r.observed:.4g}"
                self.gate_failures.append(
                    f"aggregate {r.expression} [{r.pipeline}]: {r.aggregator} = {observed} "
                    f"(expected {r.bound}, n={r.n})"
                )
        self.threshold_results = [
            *summarize_case_thresholds(records, self.cfg.case_thresholds),
            *aggregate_results,
        ]
        for path, ds in self.datasets.items():
            if not ds.frozen:
                self.notes.append(f"dataset {path.name} is not frozen (ragproof freeze)")
        items_failed = any(r.status != "passed" for r in records)
        self.passed = not self.gate_failures and not items_failed and not missing
        results = self.results(records)
        self.components = results["components"]  # the summary prints what the file holds
        if options.get(self.config, "baseline"):
            from pytest_ragproof.runner.baseline import apply_baseline

            outcome = apply_baseline(self.config, results)
            self.gate_failures.extend(outcome.gate_failures)
            self.baseline_lines = list(outcome.summary_lines)
            if outcome.gate_failures:
                self.passed = False
                results["passed"] = False
        self.write_outputs(results)
        if self.gate_failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def write_outputs(self, results: dict[str, Any]) -> None:
        if self.cfg.report is not None:
            write_results(results, self.cfg.report)
        base = self.config.invocation_params.dir
        for name in EXPORTERS:
            target = options.get(self.config, name)
            if target:
                path = (base / str(target)).resolve()
                write_export(name, results, path)
                self.written.append(f"{name} written to {path}")

    def results(self, records: list[CaseRecord]) -> dict[str, Any]:
        # An xdist controller never collected marker-mode tests: load their datasets now.
        for rel in sorted({r.dataset for r in records}):
            path = Path(rel) if Path(rel).is_absolute() else self.config.rootpath / rel
            self.dataset(path.resolve())
        datasets = [
            dataset_entry(_relpath(self.config, path), ds, len(self.cfg.population(ds.cases)))
            for path, ds in sorted(self.datasets.items())
        ]
        return build_results(
            passed=self.passed,
            datasets=datasets,
            records=records,
            aggregates=all_aggregates(
                records, [*self.cfg.case_thresholds, *self.cfg.aggregate_thresholds]
            ),
            thresholds=self.threshold_results,
            settings=self.cfg.settings(),
            redact=self.cfg.redact,
            notes=self.notes,
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or self.config.option.collectonly:
            return
        tr = terminalreporter
        records = sorted(self.records.values(), key=lambda r: (r.pipeline, r.nodeid))
        tr.write_sep("=", "ragproof summary")
        for path, ds in self.datasets.items():
            state = "frozen" if ds.frozen else "NOT frozen"
            evaluated = len(self.cfg.population(ds.cases))
            scope = (
                f"{len(ds.cases)} case(s)"
                if evaluated == len(ds.cases)
                else f"{evaluated} of {len(ds.cases)} case(s) selected"
            )
            tr.write_line(
                f"dataset {_relpath(self.config, path)}: {scope}, {state}, sha256 {ds.sha256[:12]}"
            )
        by_status = {
            s: sum(1 for r in records if r.status == s) for s in ("passed", "failed", "error")
        }
        tr.write_line(
            f"cases: {by_status['passed']} passed, {by_status['failed']} failed, "
            f"{by_status['error']} error"
        )
        if self.threshold_results:
            tr.write_line(threshold_table(self.threshold_results, records))
        errors = [r for r in records if r.status == "error"]
        if errors:
            tr.write_line(
                "errors: "
                + ", ".join(f"{r.id} ({r.error_type})" for r in errors[:10])
                + (f", … (+{len(errors) - 10})" if len(errors) > 10 else "")
            )
        worst = worst_cases(records, self.cfg.worst)
        if worst:
            tr.write_line("worst cases:")
            for line in worst:
                tr.write_line(f"  {line}")
        latency = latency_line(records)
        if latency:
            tr.write_line(latency)
        if records and self.components:
            from pytest_ragproof.reporting.components import format_components

            for line in format_components(self.components):
                tr.write_line(line)
        for line in self.baseline_lines:
            tr.write_line(line)
        for note in self.notes:
            tr.write_line(f"note: {note}", yellow=True)
        for failure in self.gate_failures:
            tr.write_line(f"ragproof gate FAILED: {failure}", red=True, bold=True)
        if self.cfg.report is not None:
            tr.write_line(f"results written to {self.cfg.report}")
        for line in self.written:
            tr.write_line(line)
