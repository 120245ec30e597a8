"""The end of a ragproof run: the facts gathered, the verdict, the outputs, the summary.

:class:`FinishHooks` is the part of the run object that, on the process that decides
the run (the xdist controller, or the only process), turns what was collected and
recorded into :class:`~pytest_ragproof.verdict.decide.RunFacts`, decides the run and
its exit code in ``pytest_sessionfinish``, writes the results and exports, and prints
the summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pytest_ragproof.plugin.options as options
from pytest_ragproof.plugin.gitinfo import git_info
from pytest_ragproof.plugin.refs import relpath
from pytest_ragproof.plugin.workers import WorkerMerge
from pytest_ragproof.results.document import write_results
from pytest_ragproof.verdict.decide import DatasetFacts, RunFacts, RunOutcome, decide
from pytest_ragproof.verdict.exports import EXPORTERS, write_export


class FinishHooks(WorkerMerge):
    """The run's verdict, outputs and summary."""

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
                DatasetFacts(relpath(self.config, path), ds, len(self.share(path)))
                for path, ds in sorted(self.datasets.items())
            ],
            expected=len(self.expected),
            selected=len(chosen),
            missing=sorted(selected - set(self.records) - self.skipped),
            stopped=self._stopped(session, exitstatus),
            not_selected=[relpath(self.config, p) for p in self.selection.not_selected],
            notes=self.notes,
            shard=self.shard,
            population=sum(n for p, n in self.populations.items() if p in joined)
            + sum(self.marker_population.values()),
            populations={relpath(self.config, p): n for p, n in self.populations.items()},
            skipped=sorted(self.skipped & chosen),
            skip_reasons=self.skip_reasons,  # run_section keeps the skipped cases' own
            deselected=sorted(self.expected - chosen),
            git=git_info(self.config.rootpath),
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.loops.close()
        self.ahead.close()
        self.scorers.close()
        if self.is_worker:
            self.send_to_controller()
            return
        if self.config.option.collectonly:
            return
        self._note_stale_sources()
        facts = self.facts(session, exitstatus)
        self.outcome = outcome = decide(facts, self.cfg, entries=self.entries_read)
        if facts.records or facts.datasets:
            self.write_outputs(outcome)
        if self.history is not None:
            from pytest_ragproof.plugin.history import record

            self.history_line = record(self.history, outcome.document, facts)
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
                shown = relpath(self.config, source)
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
                labels = self._labels(results) if name == "inspectorraget" else None
                report = self.cfg.report
                source = None if report is None else relpath(self.config, report)
                files = write_export(name, results, path, labels=labels, source=source)
                self.written.append(f"{name} written to {', '.join(str(f) for f in files)}")

    def _labels(self, results: dict[str, Any]) -> list[Any] | None:
        """People's labels for the InspectorRAGet export (checked readable at the start)."""
        shown = options.get(self.config, "inspectorraget_labels")
        if not shown:
            return None
        from pytest_ragproof.labels import read_labels
        from pytest_ragproof.reporting.inspectorraget_people import annotators_summary

        labels = read_labels(self.config.invocation_params.dir / str(shown))
        self.written.append(f"inspectorraget {annotators_summary(results, labels)}")
        return labels

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
        if self.history_line is not None:
            tr.write_line(self.history_line.text, **self.history_line.markup)
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
