"""``ragproof report RESULTS --format markdown|html|inspectorraget [-o OUT]``.

Renders a results file (``--ragproof-report=PATH``, ``ragproof.results/1``)
with the same functions as the ``--ragproof-markdown``, ``--ragproof-html`` and
``--ragproof-inspectorraget`` options; to stdout unless ``-o`` names a file.
A file that is not a results document is a one-line error (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_ragproof.vocabulary import KINDS

FORMATS = ("markdown", "html", "inspectorraget")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="a results file written by --ragproof-report=PATH")
    parser.add_argument(
        "-f", "--format", choices=FORMATS, default="markdown", help="output format (markdown)"
    )
    parser.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout")
    parser.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        help=(
            "inspectorraget only: export the cases of this kind (repeatable); one export per "
            "kind makes every metric plottable in InspectorRAGet"
        ),
    )


def only_kinds(results: dict[str, Any], kinds: set[str]) -> dict[str, Any]:
    """The results document restricted to cases of ``kinds`` (cases only: for exports)."""
    out = dict(results)
    out["cases"] = [c for c in results.get("cases") or [] if c.get("kind") in kinds]
    return out


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.freeze import write_atomic
    from pytest_ragproof.runner.exports import renderer
    from pytest_ragproof.runner.results import read_results

    if args.kind and args.format != "inspectorraget":
        print(
            "ragproof report: error: --kind applies to --format inspectorraget only "
            "(the other formats show aggregates over every kind)",
            file=sys.stderr,
        )
        return 2
    results = read_results(Path(args.results))
    if args.kind:
        results = only_kinds(results, set(args.kind))
    text = renderer(args.format)(results)
    if args.output:
        target = Path(args.output)
        write_atomic(target, text)
        print(f"{args.format} report written to {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
