"""The end of a run, once: case records and run facts in, one outcome out.

A pytest run and :func:`pytest_ragproof.evaluate` reach their verdict through
:func:`decide`: the gate failures, notes, threshold rows, the results document
(built once, never edited afterwards) and the summary lines a terminal prints.
The pytest hooks only collect the facts, write the files the outcome names and
set the exit status. Nothing here imports pytest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ragproof.verdict.baseline import BaselineOutcome, apply_baseline
from pytest_ragproof.verdict.config import RunConfig
from pytest_ragproof.verdict.gates import (
    INCOMPLETE,
    UNJUDGED_VERDICT,
    XFAIL_STATUSES,
    ThresholdResult,
    all_aggregates,
    evaluate_aggregates,
    summarize_case_thresholds,
)
from pytest_ragproof.verdict.record import CaseRecord
from pytest_ragproof.verdict.results import build_results, dataset_entry
from pytest_ragproof.verdict.shard import Shard

__all__ = ["DatasetFacts", "Line", "RunFacts", "RunOutcome", "decide"]

STATUSES = ("passed", "failed", "error", "xfailed", "xpassed")


@dataclass(frozen=True)
class DatasetFacts:
    """A dataset of the run: how it is shown, the loaded dataset, how many cases it evaluates.

    ``ragproof merge`` has no dataset to load: it passes the ``datasets`` entry its
    shards recorded (``recorded``: sha256, frozen, cases) and ``dataset=None``.
    """

    path: str
    dataset: Any  # pytest_ragproof.dataset.io.Dataset, or None with ``recorded``
    evaluated: int
    recorded: Mapping[str, Any] | None = None

    @property
    def frozen(self) -> bool:
        return bool(self.recorded["frozen"] if self.recorded else self.dataset.frozen)

    @property
    def sha256(self) -> str:
        return str(self.recorded["sha256"] if self.recorded else self.dataset.sha256)

    @property
    def cases(self) -> int:
        return int(self.recorded["cases"]) if self.recorded else len(self.dataset.cases)

    def entry(self) -> dict[str, Any]:
        """The dataset's entry of the results' ``datasets`` list."""
        if self.recorded is None:
            return dataset_entry(self.path, self.dataset, self.evaluated)
        keys = ("path", "sha256", "frozen", "cases")
        return {**{k: self.recorded[k] for k in keys}, "evaluated": self.evaluated}


@dataclass
class RunFacts:
    """What the collecting side (pytest hooks or ``evaluate()``) knows at the end of a run."""

    records: Sequence[CaseRecord]
    datasets: Sequence[DatasetFacts]
    expected: int = 0  # cases (x pipelines) of the evaluated population
    selected: int = 0  # of those, the ones pytest's selection kept
    missing: Sequence[str] = ()  # selected, not skipped, and no record arrived
    stopped: bool = False  # -x, --maxfail, Ctrl-C: the run ended before its cases did
    not_selected: Sequence[str] = ()  # configured datasets the given paths did not select
    notes: Sequence[str] = ()
    # --ragproof-shard K/N; the population without it (None: ``expected``), per dataset too.
    shard: Shard | None = None
    population: int | None = None
    populations: Mapping[str, int] = field(default_factory=dict)
    skipped: Sequence[str] = ()  # selected, skipped by pytest (no record)
    skip_reasons: Mapping[str, str] = field(default_factory=dict)  # skipped -> pytest's reason
    deselected: Sequence[str] = ()  # expected, left out by pytest's selection
    # The commit and branch the run tested ({"commit": ..., "branch": ...}, what is known).
    git: Mapping[str, str] | None = None

    @property
    def sharded(self) -> bool:
        """A share of a run (shard K/N with N > 1): its aggregates are not the run's."""
        return self.shard is not None and self.shard.n > 1


@dataclass(frozen=True)
class Line:
    """One line of the terminal summary and how it is marked up."""

    text: str
    style: str = ""  # "" | "note" | "failure"

    @property
    def markup(self) -> dict[str, bool]:
        if self.style == "failure":
            return {"red": True, "bold": True}
        if self.style == "note":
            return {"yellow": True}
        return {}


@dataclass
class RunOutcome:
    """The verdict of one run, and everything reported about it."""

    passed: bool
    gate_failures: list[str]
    notes: list[str]
    thresholds: list[ThresholdResult]
    document: dict[str, Any]
    lines: list[Line] = field(default_factory=list)
    baseline_write: dict[str, Any] | None = None  # the document for --ragproof-baseline-update
    stopped: bool = False


def _stop_note(facts: RunFacts, ran: int) -> str:
    return f"run stopped after {ran} of {facts.selected} case(s): aggregates reported, not gated"


def _aggregate_failure(r: ThresholdResult) -> str:
    observed = "no scored cases" if r.observed is None else f"{r.observed:.4g}"
    line = (
        f"aggregate {r.expression} [{r.pipeline}]: {r.aggregator} = {observed} "
        f"(expected {r.bound}, n={r.n})"
    )
    if r.verdict.endswith(UNJUDGED_VERDICT):
        line += f"; {r.verdict}: a gate on a judged metric does not pass on cases left unjudged"
    elif r.verdict == INCOMPLETE:
        line += (
            f"; incomplete: {r.n_error} case(s) of its population not scored (error), "
            "a gate does not pass on the scored cases only"
        )
    if r.worst:
        line += "; worst: " + ", ".join(f"{cid} {value:.3g}" for cid, value in r.worst)
    return line


def decide(facts: RunFacts, cfg: RunConfig, *, entries: bool = True) -> RunOutcome:
    """Gate the run and build its results document and summary, once.

    ``entries=False``: no output reads the document's case entries, which are then left
    out (:func:`build_results`); a baseline reads them, so it keeps them.
    """
    baseline = cfg.baseline
    records = sorted(facts.records, key=lambda r: (r.pipeline, r.nodeid))
    notes = [n for i, n in enumerate(facts.notes) if n not in facts.notes[:i]]
    gate_failures: list[str] = []
    partial = facts.selected != facts.expected
    if facts.not_selected:
        names = ", ".join(facts.not_selected)
        notes.append(
            f"configured dataset(s) {names} not selected by the given paths: run pytest "
            "without paths, or name the dataset file, to evaluate them"
        )
    if facts.stopped:
        if facts.selected:  # a run stopped in collection has nothing of its own to say
            notes.append(_stop_note(facts, len(records)))
    elif partial and facts.expected:
        left_out = facts.expected - facts.selected
        notes.append(
            f"pytest's selection (-k, -m, --lf, node ids or deselection) left out "
            f"{left_out} of {facts.expected} case(s): aggregates are reported, not gated"
        )
    if facts.sharded:
        assert facts.shard is not None
        notes.append(
            f"shard {facts.shard.text}: aggregates and the baseline comparison are this shard's, "
            "reported, not gated; `ragproof merge` of every shard's --ragproof-report gates them"
        )
    # Part of the run's cases (a selection, a stop, a shard): reported, not gated.
    whole = not (partial and facts.expected) and not facts.stopped and not facts.sharded
    missing = [] if facts.stopped else sorted(facts.missing)
    if missing:
        gate_failures.append(
            f"scores missing for {len(missing)} case(s) (a crashed worker or an "
            f"interrupted run?), e.g. {missing[0]}"
        )
    aggregate_results = evaluate_aggregates(
        records,
        cfg.aggregate_thresholds,
        gated=not partial and not facts.stopped and not facts.sharded,
        narrowed=bool(cfg.kinds or cfg.splits or cfg.tags),
    )
    gate_failures.extend(_aggregate_failure(r) for r in aggregate_results if r.failed)
    thresholds = [
        *summarize_case_thresholds(records, cfg.case_thresholds),
        *aggregate_results,
    ]
    for d in facts.datasets:
        if not d.frozen:
            notes.append(f"dataset {d.path.rsplit('/', 1)[-1]} is not frozen (ragproof freeze)")
    items_failed = any(r.status not in ("passed", *XFAIL_STATUSES) for r in records)
    passed = not gate_failures and not items_failed and not facts.stopped
    body = build_results(
        passed=passed,
        datasets=[d.entry() for d in facts.datasets],
        records=records,
        aggregates=all_aggregates(records, [*cfg.case_thresholds, *cfg.aggregate_thresholds]),
        thresholds=thresholds,
        settings=cfg.settings(),
        redact=cfg.redact,
        notes=notes,
        entries=entries or baseline is not None,
    )
    base = BaselineOutcome()
    if baseline is not None:
        ids = {
            d.sha256: frozenset(c.id for c in d.dataset.cases)
            for d in facts.datasets
            if d.dataset is not None
        }
        base = apply_baseline(baseline, body, stopped=facts.stopped, dataset_ids=ids)
        if not whole:
            # Like the aggregates: a comparison over part of the cases is reported only.
            if base.gate_failures:
                notes.append(
                    f"baseline: {len(base.gate_failures)} finding(s) reported, not gated: the "
                    "run did not evaluate every case"
                )
                body = {**body, "notes": list(notes)}
        else:
            gate_failures.extend(base.gate_failures)
            passed = passed and not base.gate_failures
    document = {**body, "passed": passed}
    if cfg.judges is not None:
        from pytest_ragproof.verdict.judge_report import judge_totals

        document["judges"] = judge_totals(records, cfg.judges)
    if any(":" in m for r in records for m in (*r.metrics, *r.not_judged)) or any(
        r.evaluator_error for r in records
    ):
        from pytest_ragproof.verdict.judge_report import evaluator_coverage

        document["evaluators"] = evaluator_coverage(records)
    if base.section is not None:
        document["baseline"] = base.section
    document["run"] = run_section(facts, cfg)
    outcome = RunOutcome(
        passed=passed,
        gate_failures=gate_failures,
        notes=notes,
        thresholds=thresholds,
        document=document,
        baseline_write=base.write,
        stopped=facts.stopped,
    )
    outcome.lines = _lines(facts, cfg, records, outcome, base.summary_lines)
    return outcome


def _lines(
    facts: RunFacts,
    cfg: RunConfig,
    records: list[CaseRecord],
    outcome: RunOutcome,
    baseline_lines: Sequence[str],
) -> list[Line]:
    from pytest_ragproof.verdict.summary import (
        flaky_line,
        latency_line,
        threshold_table,
        worst_cases,
    )

    out: list[Line] = []
    stop_note = _stop_note(facts, len(records)) if facts.stopped else None
    if not records and (not facts.datasets or not facts.selected):
        # Nothing of ragproof's ran (e.g. `pytest tests/unit` in a configured project).
        return _closing_lines(outcome, stop_note)
    for d in facts.datasets:
        state = "frozen" if d.frozen else "NOT frozen"
        scope = (
            f"{d.cases} case(s)"
            if d.evaluated == d.cases
            else f"{d.evaluated} of {d.cases} case(s) selected"
        )
        out.append(Line(f"dataset {d.path}: {scope}, {state}, sha256 {d.sha256[:12]}"))
    if facts.shard is not None:
        total = facts.expected if facts.population is None else facts.population
        out.append(Line(f"shard {facts.shard.text}: {facts.expected} of {total} case(s)"))
    counts = {s: sum(1 for r in records if r.status == s) for s in STATUSES}
    shown = [f"{counts[s]} {s}" for s in ("passed", "failed", "error")]
    shown += [f"{counts[s]} {s}" for s in XFAIL_STATUSES if counts[s]]
    each = (
        f" ({cfg.repeat} repeats each, min pass rate {cfg.min_pass_rate:g})"
        if cfg.repeat > 1
        else ""
    )
    out.append(Line("cases: " + ", ".join(shown) + each))
    if outcome.thresholds:
        out.append(Line(threshold_table(outcome.thresholds, records)))
    errors = [r for r in records if r.status == "error"]
    if errors:
        more = f", … (+{len(errors) - 10})" if len(errors) > 10 else ""
        out.append(
            Line("errors: " + ", ".join(f"{r.id} ({r.error_type})" for r in errors[:10]) + more)
        )
    flaky = flaky_line(records)
    if flaky:
        out.append(Line(flaky, "note"))
    worst = worst_cases(records, cfg.worst)
    if worst:
        out.append(Line("worst cases:"))
        out.extend(Line(f"  {w}") for w in worst)
    latency = latency_line(records)
    if latency:
        out.append(Line(latency))
    judges = outcome.document.get("judges")
    if judges is not None:
        from pytest_ragproof.verdict.judge_report import judge_lines, judged_scores

        out.extend(Line(j) for j in judge_lines(judges))
        out.extend(Line(j) for j in judged_scores(outcome.document.get("aggregates") or []))
    components = outcome.document.get("components")
    if records and components and cfg.components:
        from pytest_ragproof.reporting.components import format_components

        out.extend(Line(c) for c in format_components(components))
    out.extend(Line(b) for b in baseline_lines)
    return out + _closing_lines(outcome, stop_note)


def _closing_lines(outcome: RunOutcome, stop_note: str | None) -> list[Line]:
    """The notes (the stop line as ``ragproof: …``) and the failed gates, last."""
    out = [
        Line(f"ragproof: {n}" if n == stop_note else f"note: {n}", "note") for n in outcome.notes
    ]
    out.extend(Line(f"ragproof gate FAILED: {g}", "failure") for g in outcome.gate_failures)
    return out


def run_section(facts: RunFacts, cfg: RunConfig) -> dict[str, Any]:
    """The results' ``run`` section: what ``ragproof merge`` needs to rebuild these facts.

    The shard (if any), the population with and without it, the selected items pytest
    skipped, deselected or never scored (node ids), whether the run stopped, the notes
    of the collecting side, the full settings (:func:`config_record`) and, when known,
    the git commit and branch the run tested (``git``; history records them).
    """
    from pytest_ragproof.verdict.recorded import config_record

    section: dict[str, Any] = {
        "shard": None if facts.shard is None else facts.shard.to_dict(),
        "expected": facts.expected,
        "selected": facts.selected,
        "population": facts.expected if facts.population is None else facts.population,
        "datasets": {d.path: facts.populations.get(d.path, d.evaluated) for d in facts.datasets},
        "deselected": sorted(facts.deselected),
        "skipped": sorted(facts.skipped),
        "missing": sorted(facts.missing),
        "stopped": facts.stopped,
        "not_selected": list(facts.not_selected),
        "notes": [n for i, n in enumerate(facts.notes) if n not in facts.notes[:i]],
        "config": config_record(cfg),
    }
    if facts.skipped:
        # Why pytest skipped each (a marker's reason): a merge refuses a skip without one.
        section["skip_reasons"] = {
            n: facts.skip_reasons.get(n, "skipped") for n in sorted(facts.skipped)
        }
    if facts.git:
        section["git"] = dict(facts.git)
    return section
