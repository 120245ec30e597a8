"""``ragproof merge SHARD.json... [-o results.json]``: one verdict from a sharded run.

Reads the ``--ragproof-report`` files of a run's shards (``--ragproof-shard K/N``,
pytest-shard or pytest-split), checks that they cover every case exactly once
with the same settings and datasets, recomputes every aggregate, gate and
baseline comparison as one run would (:mod:`pytest_ragproof.verdict.merge`) with
the gates of the configuration it runs in (the project's ``ragproof_*`` ini keys and
its own ``--ragproof-*`` gate options, :mod:`._project`), prints the run's summary
and exits like pytest: 0 when every case and gate passed, 1 otherwise; files that
do not belong together, or that were edited, truncated or hold values no run
writes, are an error naming the file, the case and the field (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.verdict.merge_checks import ShardFile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pytest_ragproof.commands._project import add_gate_arguments

    parser.add_argument(
        "results", nargs="+", help="the shards' results files (written by --ragproof-report)"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write the merged results file (ragproof.results/1) to OUT",
    )
    add_gate_arguments(parser)


def _refusal(output: Path, inputs: list[Path]) -> str | None:
    from pytest_ragproof.verdict.baseline import sniff

    if output.is_dir():
        return f"-o {output} is a folder; give a file path such as {output / 'results.json'}"
    if any(output.resolve() == p.resolve() for p in inputs):
        return f"-o {output} is one of the files to merge; choose a new path such as results.json"
    kind = sniff(output)
    if kind in ("dataset", "other"):
        what = "a ragproof dataset" if kind == "dataset" else "not a ragproof results file"
        return f"-o {output} is {what}; ragproof will not replace it; choose a new path"
    return None


def _shard_file(path: Path) -> ShardFile:
    """A shard's file, parsed and checked as merging needs (the checked model kept)."""
    from pytest_ragproof.results.document import read_results
    from pytest_ragproof.results.schema import load_results
    from pytest_ragproof.verdict.merge_checks import ShardFile

    doc = read_results(path)
    return ShardFile(str(path), doc, load_results(doc, str(path)))


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.errors import ConfigError
    from pytest_ragproof.results.document import write_results
    from pytest_ragproof.verdict.merge import merge

    inputs = [Path(p) for p in args.results]
    output = Path(args.output) if args.output else None
    why = None if output is None else _refusal(output, inputs)
    if why is not None:
        raise UsageError(why)
    from pytest_ragproof.commands._project import gates_of

    unchecked: list[str] = []
    try:
        gates = gates_of(args, Path.cwd())
        files = [_shard_file(p) for p in inputs]
        outcome, cfg = merge(files, Path.cwd(), unchecked, gates)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    for note in unchecked:
        print(f"ragproof merge: note: {note}", file=sys.stderr)
    written: list[str] = []
    if outcome.baseline_write is not None and cfg.baseline is not None:
        # Only shards that asked for it (pytest-shard or pytest-split runs with
        # --ragproof-baseline-update): the baseline of the whole run, as one run writes it.
        write_results(outcome.baseline_write, cfg.baseline.path)
    if output is not None:
        write_results(outcome.document, output)
        written.append(f"results written to {output}")
    print(f"ragproof merge: {len(files)} file(s)")
    for line in outcome.lines:
        print(line.text)
    for line_text in written:
        print(line_text)
    return 0 if outcome.passed else 1
