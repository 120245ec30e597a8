"""Running one ragproof item: calling the pipeline, scoring, and the report round trip.

:class:`ItemHooks` is the part of the run object that runs a case (with look-ahead and
repeats), concludes it (metrics, the item's failure), and carries its record on the
test report to the process that decides the run (the xdist controller, or this one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragproof.errors import EndpointError, PipelineSignatureError
from pytest_ragproof.execution.call import NotCallableError
from pytest_ragproof.execution.case_path import CasePath
from pytest_ragproof.execution.execute import Outcome, hand_over
from pytest_ragproof.plugin.collect import XFAIL_TAG_REASON
from pytest_ragproof.plugin.refs import case_ref, property_name
from pytest_ragproof.plugin.state import RunState
from pytest_ragproof.verdict.record import CaseRecord, sorted_metrics

if TYPE_CHECKING:
    from pytest_ragproof.execution.evaluating import EvaluatorRunner
    from pytest_ragproof.execution.judging import JudgeStage
    from pytest_ragproof.execution.repeat import RepeatVerdict
    from pytest_ragproof.plugin.collect import CaseItem


class ItemHooks(RunState):
    """The run's per-item work and hooks."""

    def _stop_work_ahead(self) -> None:
        """Stop the pipeline calls and judging started ahead before the run is stopped.

        Their results would not be reported, and pytest formats the stop with
        ``ast.parse`` on this thread: on CPython 3.11 another thread building an AST at
        that moment (litellm imports modules lazily on its error paths, compiled from
        source in a fresh environment) makes that fail with "SystemError: AST constructor
        recursion depth mismatch" (python/cpython#106905), an internal error instead of
        the run's usage error.
        """
        self.ahead.close()
        self.scorers.stop_judging()

    def run_case(self, item: CaseItem, pipeline: Any) -> None:
        __tracebackhide__ = True
        record = self.new_record(item)
        self.running[item.nodeid] = record
        path = self.case_path(item)
        path.prefetcher = self.ahead.prefetcher_for(
            item, hand_over(path.stage, path.evaluators), evaluators=path.evaluators is not None
        )
        if path.prefetcher is not None:
            path.run_ahead(self.ahead.upcoming(item, path.prefetcher.window), pipeline)
        self._report(item, record, path.run(record, item.case, item.nodeid, pipeline))

    def case_path(self, item: pytest.Item) -> CasePath:
        """The one per-case path (``evaluate()`` takes it too) with this run's stages."""
        return CasePath(self.cfg, self.loops, self.judging(item), self.evaluator_runner(item))

    def judging(self, item: pytest.Item) -> JudgeStage | None:
        return self.scorers.judging(item)

    def evaluator_runner(self, item: pytest.Item) -> EvaluatorRunner | None:
        return self.scorers.evaluator_runner(item)

    def conclude(self, item: pytest.Item, record: CaseRecord, outcomes: Sequence[Outcome]) -> None:
        """Judge and score the calls a marked test made (one per repeat), as :meth:`run_case`
        does its own, then report the case."""
        __tracebackhide__ = True
        ref = case_ref(item)
        assert ref is not None
        path = self.case_path(item)
        self._report(item, record, path.conclude(record, ref.case, item.nodeid, outcomes))

    def _report(self, item: pytest.Item, record: CaseRecord, concluded: RepeatVerdict) -> None:
        """Attach the concluded case's metrics to the item and fail it if due."""
        __tracebackhide__ = True
        ref = case_ref(item)
        assert ref is not None
        if not self.entries_read:
            record.drop_entry_only()
        verdict, decisive = concluded.verdict, concluded.decisive
        if self.properties:
            item.user_properties.extend(
                (property_name(name), value) for name, value in record.metrics.items()
            )
            item.user_properties.append(("ragproof.status", record.status))
        if record.error_type == "JudgeConfigError":
            # The same for every case: say it once and stop the run (a usage error).
            self._stop_work_ahead()
            item.session.shouldstop = "ragproof: the judge model cannot be called"
            pytest.fail(verdict.message or "ragproof: the judge model cannot be called", False)
        # A repeat's error speaks only when no repeat was scored; otherwise it is a repeat
        # that did not pass, named in the case's message.
        error = None if decisive is None else decisive.error
        if isinstance(error, PipelineSignatureError):
            # The same for every case: say it once and stop the run.
            self._stop_work_ahead()
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
        record = self.running.pop(item.nodeid, None) if report.when == "call" else None
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
                if not str(report.wasxfail).startswith(XFAIL_TAG_REASON):
                    record.xfail_reason = str(report.wasxfail) or "xfail"
            elif report.skipped:
                # pytest.skip() in the pipeline: skipped as pytest says, never a pass.
                report.ragproof_skipped = True
                return report
            elif report.failed and record.status == "passed":
                record.status = "failed"  # xfail(strict=True) that passed: pytest fails it
            self._attach(report, record)
        return report

    def _compact_report(self, report: pytest.TestReport) -> None:
        """A case's report as pytest keeps it to the end of the run (its terminal reporter
        holds all three of every test), without copies: the call and teardown reports
        take the setup report's keywords dict when equal, and an empty list of sections
        or user properties is one shared empty tuple."""
        if report.when == "setup":
            self.keywords[report.nodeid] = report.keywords
        else:
            shared = self.keywords.get(report.nodeid)
            if report.when == "teardown":
                self.keywords.pop(report.nodeid, None)
            if shared is not None and shared == report.keywords:
                report.keywords = shared
        for name in ("sections", "user_properties"):
            if not getattr(report, name):
                setattr(report, name, ())

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
        if report.nodeid in self.expected:
            self._compact_report(report)
        local = self._local.pop(report.nodeid, None)
        data = getattr(report, "ragproof", None)
        if local is not None:
            self.records[report.nodeid] = local
        elif data is not None:
            record = CaseRecord.from_dict(data)
            # Equal values as one object, as in a serial run (they arrive as new floats).
            record.metrics = sorted_metrics(record.metrics)
            if not self.entries_read:
                record.drop_entry_only()  # packs the metrics (a worker sent them as a dict)
            self.records[report.nodeid] = record
            del report.ragproof
        elif getattr(report, "ragproof_skipped", False) or (
            report.skipped and report.nodeid in self.expected
        ):
            self.skipped.add(report.nodeid)
            longrepr: Any = report.longrepr  # a skip's: (path, line, "Skipped: why")
            shaped = isinstance(longrepr, (tuple, list)) and len(longrepr) == 3
            reason = longrepr[2] if shaped else ""
            self.skip_reasons[report.nodeid] = str(reason).removeprefix("Skipped: ") or "skipped"
