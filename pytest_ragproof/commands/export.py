"""``ragproof export DATASET --to ragas|deepeval|raget -o FILE``.

Writes the dataset's cases as a test set the other tool loads and prints what
mapped where and what could not be carried (see ``interop/export.py`` and
docs/interop.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_ragproof.errors import RagproofError, UsageError
from pytest_ragproof.interop import EXPORT_TOOLS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", help="a frozen dataset (or any dataset file ragproof reads)")
    parser.add_argument(
        "--to", dest="tool", required=True, choices=EXPORT_TOOLS, help="target tool"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        help="file to write: ragas .jsonl or .json, deepeval .json, raget .jsonl",
    )


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.io import load_dataset
    from pytest_ragproof.fileio import write_atomic
    from pytest_ragproof.interop.export import WRITERS, refusal, render
    from pytest_ragproof.interop.report import FieldReport

    src, out = Path(args.dataset), Path(args.output)
    why = refusal(args.tool, out, src)
    if why is not None:
        raise UsageError(why)
    dataset = load_dataset(src)
    report = FieldReport(args.tool, str(src))
    rows = WRITERS[args.tool](dataset.cases, report)
    if not rows:
        raise RagproofError(
            f"{src} has no case {args.tool} can hold (injection cases "
            "have no equivalent); wrote nothing"
        )
    write_atomic(out, render(args.tool, rows, out))
    report.output = str(out)
    lines = report.lines()
    lines[0] = f"read {report.n_read} case(s) from {src}" + (
        "" if dataset.frozen else " (not frozen)"
    )
    for line in lines:
        print(line)
    return 0
