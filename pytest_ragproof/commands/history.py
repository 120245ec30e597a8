"""``ragproof history add|list|show|trend|compare``: the run history store (docs/history.md).

``add`` loads results files (``--ragproof-report`` files, CI artifacts, ``ragproof
merge`` output; the same file twice is one run); ``list`` shows the runs, newest
first; ``show RUN`` one run; ``trend --metric qa:faithfulness`` a metric's mean per
run with a sparkline; ``compare RUN_A RUN_B`` compares run B with run A as the
baseline comparison does (paired tests, case flips, the same verdict lines) and
exits 1 when it finds a gating regression. RUN is a run id, a unique prefix of one,
``latest`` or ``-N`` (the N-th newest). The store is ``--store`` (a SQLite file, a
database URL or ``default``), else ``$RAGPROOF_HISTORY``, else ``default``:
``.ragproof/history.sqlite`` in the current folder. Exit 2 on a bad file or store.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof import defaults

if TYPE_CHECKING:
    from pytest_ragproof.history.queries import RunSummary, TrendSeries
    from pytest_ragproof.history.store import Store

ENV_STORE = "RAGPROOF_HISTORY"
_BLOCKS = "▁▂▃▄▅▆▇█"


def _store_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="STORE",
        help="the history store: a SQLite file, a database URL (postgresql://user@host/db) or "
        f"'default' (.ragproof/history.sqlite; the default, or ${ENV_STORE} when set)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="history_command", metavar="SUBCOMMAND", required=True)
    add = sub.add_parser("add", help="add results files to the store (once each)")
    add.add_argument("results", nargs="+", help="results files (ragproof.results/1)")
    _store_arg(add)
    listing = sub.add_parser("list", help="the runs, newest first")
    listing.add_argument(
        "--limit", type=int, default=30, metavar="N", help="show N runs (default 30; 0: all)"
    )
    listing.add_argument("--branch", metavar="NAME", help="only runs of this git branch")
    _store_arg(listing)
    show = sub.add_parser("show", help="one run: verdict, gates, failed cases")
    show.add_argument("run", metavar="RUN", help="run id, unique prefix, 'latest' or -N")
    _store_arg(show)
    trend = sub.add_parser("trend", help="a metric's mean per run, with a sparkline")
    trend.add_argument(
        "--metric", required=True, metavar="[SELECTOR:]METRIC", help="e.g. qa:faithfulness"
    )
    trend.add_argument("--pipeline", metavar="NAME", help="only this pipeline")
    trend.add_argument(
        "--last", type=int, default=30, metavar="N", help="the newest N runs (default 30)"
    )
    _store_arg(trend)
    compare = sub.add_parser(
        "compare", help="compare run B with run A (A as the baseline): paired tests, flips"
    )
    compare.add_argument("run_a", metavar="RUN_A", help="the earlier run (the baseline)")
    compare.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    compare.add_argument(
        "--tolerance",
        action="append",
        default=[],
        metavar="EXPR",
        help="allowed drop '[SELECTOR:]METRIC=DELTA' (repeatable; default 0)",
    )
    compare.add_argument(
        "--alpha",
        type=float,
        default=defaults.REGRESSION_ALPHA,
        help=f"significance level of the paired tests (default {defaults.REGRESSION_ALPHA:g})",
    )
    compare.add_argument(
        "--allow-dataset-change",
        action="store_true",
        help="compare runs of different dataset hashes on the case ids both share",
    )
    compare.add_argument(
        "--fail-on-case-regression",
        action="store_true",
        help="exit 1 when any case regressed",
    )
    _store_arg(compare)
    for name, action in sub.choices.items():
        # The errors of an action name it: "ragproof history add: error: ..." (cli.main).
        action.set_defaults(_shown=f"history {name}")


def _open(args: argparse.Namespace, *, create: bool) -> Store:
    from pytest_ragproof.history.store import open_store
    from pytest_ragproof.history.target import resolve_target

    value = args.store or os.environ.get(ENV_STORE) or "default"
    return open_store(resolve_target(value, Path.cwd()), create=create)


def sparkline(values: Sequence[float | None]) -> str:
    """One block per value, scaled between the series' min and max (a gap for None)."""
    known = [v for v in values if v is not None]
    if not known:
        return " " * len(values)
    low, high = min(known), max(known)
    span = high - low
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif span <= 0:
            out.append(_BLOCKS[len(_BLOCKS) // 2])
        else:
            out.append(_BLOCKS[min(len(_BLOCKS) - 1, int((v - low) / span * len(_BLOCKS)))])
    return "".join(out)


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def _commit(value: str | None) -> str:
    return value[:12] if value else "-"


def _when(run: RunSummary) -> str:
    return run.time if run.time_known else f"{run.time} (added)"


def _add(args: argparse.Namespace) -> int:
    import glob

    from pytest_ragproof.results.document import read_results
    from pytest_ragproof.results.schema import load_results

    paths: list[str] = []
    for given in args.results:
        if not Path(given).exists() and glob.has_magic(given):
            paths.extend(sorted(glob.glob(given)) or [given])
        else:
            paths.append(given)
    from pytest_ragproof.verdict.merge import ShardFile, recheck

    docs = []
    for p in paths:
        doc = read_results(Path(p))
        docs.append((p, doc, load_results(doc, p)))
    # The verdict is decided from each file's cases and settings, as merge does; a file
    # whose "passed" is not that verdict is refused before anything is recorded.
    for shown, doc, _ in docs:
        for note in recheck(ShardFile(shown, doc), Path.cwd()):
            print(f"{shown}: note: {note}")
    with _open(args, create=True) as store:
        for shown, doc, model in docs:
            added = store.add(doc, Path(shown).name, model)
            if added.new:
                print(f"{shown}: added run {added.run_id} ({added.cases} case(s))")
            else:
                print(f"{shown}: run {added.run_id} is already in the store; not added again")
        where = store.target.shown
    print(f"history store: {where}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from pytest_ragproof.history.queries import list_runs

    limit = None if args.limit <= 0 else args.limit
    with _open(args, create=False) as store:
        runs = list_runs(store, limit=None if limit is None else limit + 1, branch=args.branch)
    if not runs:
        print("no runs in the store yet")
        return 0
    more = limit is not None and len(runs) > limit
    runs = runs[:limit] if limit is not None else runs
    any_shard = any(r.shard for r in runs)
    rows = [
        [
            r.run_id,
            _when(r),
            r.verdict.upper() if not r.passed else r.verdict,
            f"{r.n_passed}/{r.n_failed}/{r.n_error}",
            r.dataset_label,
            _commit(r.git_commit),
            r.git_branch or "-",
        ]
        + ([r.shard or ""] if any_shard else [])
        for r in runs
    ]
    headers = ["run", "time (UTC)", "verdict", "pass/fail/err", "dataset", "commit", "branch"]
    print(_table(rows, headers + (["shard"] if any_shard else [])))
    if more:
        print("… older runs not shown: --limit 0 shows all")
    return 0


def _show(args: argparse.Namespace) -> int:
    from pytest_ragproof.history.queries import run_cases

    with _open(args, create=False) as store:
        detail = run_cases(store, args.run)
    r = detail.run
    print(f"run {r.run_id}: {r.verdict.upper() if not r.passed else r.verdict}")
    print(f"  time: {_when(r)}")
    print(f"  commit: {r.git_commit or '-'}  branch: {r.git_branch or '-'}")
    print(f"  dataset: {r.dataset_label or '-'}")
    print(f"  pipelines: {', '.join(r.pipelines) or '-'}")
    print(
        f"  cases: {r.n_passed} passed, {r.n_failed} failed, {r.n_error} error "
        f"(of {r.n_cases}); added from {r.source}" + (f"; shard {r.shard}" if r.shard else "")
    )
    if detail.thresholds:
        from pytest_ragproof.verdict.summary import format_threshold_rows

        # The table the run's terminal summary printed, from the stored rows and cases.
        print(
            format_threshold_rows(
                detail.threshold_rows(), detail.threshold_values(), detail.threshold_errors()
            )
        )
    bad = [c for c in detail.cases if c.status in ("failed", "error")]
    if bad:
        print(f"failed and error cases ({len(bad)}):")
        for c in bad[:50]:
            why = ", ".join(c.failures) or (c.error_type or "")
            print(
                f"  {c.case_id} [{c.pipeline}] {c.kind}: {c.status}" + (f" ({why})" if why else "")
            )
        if len(bad) > 50:
            print(f"  … (+{len(bad) - 50})")
    for note in detail.notes:
        print(f"note: {note}")
    return 0


def _series_lines(s: TrendSeries) -> list[str]:
    from pytest_ragproof.metrics.selector import metric_label
    from pytest_ragproof.verdict.summary import fmt_score

    values = [p.mean for p in s.points]
    known = [v for v in values if v is not None]
    label = metric_label(s.selector, s.metric)
    line = f"{label} [{s.pipeline}] {sparkline(values)}"
    if known:
        line += f"  min {min(known):.3f} max {max(known):.3f} last {fmt_score(values[-1])}"
    if s.bound:
        line += f"  gate {s.bound}"
    return [line + f"  ({len(s.points)} run(s), oldest first)"]


def _trend(args: argparse.Namespace) -> int:
    from pytest_ragproof.errors import HistoryError
    from pytest_ragproof.history.queries import known_metrics, parse_metric, trend
    from pytest_ragproof.verdict.summary import fmt_score

    if args.last <= 0:
        raise HistoryError("--last must be a positive number of runs, e.g. --last 30")
    with _open(args, create=False) as store:
        series = trend(store, args.metric, pipeline=args.pipeline, last=args.last)
        known = [] if series else known_metrics(store)
    if not series:
        selector = parse_metric(args.metric)[0]
        if selector != "*":  # the metrics of the selector asked about
            known = [k for k in known if k.startswith(selector + ":")] or known
        shown = ", ".join(known[:30]) + (", …" if len(known) > 30 else "")
        where = f" for pipeline {args.pipeline}" if args.pipeline else ""
        close = difflib.get_close_matches(args.metric, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise HistoryError(
            f"no run in the store has {args.metric}{where}{hint}; metrics with a trend: "
            f"{shown or 'none (the store holds no run)'}"
        )
    for s in series:
        rows = [
            [
                p.run_id,
                p.time,
                _commit(p.git_commit),
                p.git_branch or "-",
                p.n,
                fmt_score(p.mean),
                p.bound or "-",
                p.verdict or "-",
            ]
            for p in s.points
        ]
        print(f"{s.selector}:{s.metric} [{s.pipeline}]")
        print(
            _table(rows, ["run", "time (UTC)", "commit", "branch", "n", "mean", "gate", "verdict"])
        )
    for s in series:
        for line in _series_lines(s):
            print(line)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pytest_ragproof.history.queries import compare_runs

    with _open(args, create=False) as store:
        result = compare_runs(
            store,
            args.run_a,
            args.run_b,
            tolerances=args.tolerance,
            alpha=args.alpha,
            allow_dataset_change=args.allow_dataset_change,
            fail_on_case_regression=args.fail_on_case_regression,
        )
    print(f"run {result.b.run_id} compared with run {result.a.run_id}")
    for line in result.lines:
        print(line)
    for failure in result.comparison.gate_failures:
        print(f"ragproof gate FAILED: {failure}")
    return 0 if result.comparison.passed else 1


_RUNNERS = {"add": _add, "list": _list, "show": _show, "trend": _trend, "compare": _compare}


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.errors import ConfigError, HistoryError, MissingExtraError, UsageError

    try:
        return _RUNNERS[args.history_command](args)
    except (ConfigError, HistoryError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from exc
