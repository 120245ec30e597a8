"""``ragproof report RESULTS --format markdown|html|inspectorraget [-o OUT]``.

Renders a results file (``--ragproof-report=PATH``, ``ragproof.results/1``)
with the same functions as the ``--ragproof-markdown``, ``--ragproof-html`` and
``--ragproof-inspectorraget`` options; to stdout unless ``-o`` names a file. The
InspectorRAGet export of a run of several case kinds is one file per kind
(``OUT.qa.json``, …) unless ``--kind`` picks the cases of one file. With
``--labels`` (a labels file of ``ragproof review``), the InspectorRAGet export
shows each reviewer as an annotator beside the judge; stale labels are left out
and counted on stderr.
A file that is not a results document is a one-line error (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragproof.errors import UsageError
from pytest_ragproof.vocabulary import KINDS

if TYPE_CHECKING:
    from pytest_ragproof.labels import Label

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
            "inspectorraget only: export the cases of this kind into OUT (repeatable); without "
            "it a run of several kinds is one file per kind, OUT.qa.json, "
            "OUT.unanswerable.json, OUT.injection.json"
        ),
    )
    parser.add_argument(
        "--labels",
        metavar="FILE",
        help="inspectorraget only: a labels file of ragproof review; each reviewer becomes an "
        "annotator (worker human:<reviewer>) of the metrics they labelled",
    )


def only_kinds(results: dict[str, Any], kinds: set[str], name: str) -> dict[str, Any]:
    """The results document restricted to cases of ``kinds`` (cases only: for exports, which
    take the parsed document); the kinds are read from its model (``name``: in messages)."""
    from pytest_ragproof.results.schema import results_model

    model = results_model(results, name)
    entries = results.get("cases") or []
    out = dict(results)
    out["cases"] = [e for e, c in zip(entries, model.cases, strict=True) if c.kind in kinds]
    return out


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.fileio import write_atomic
    from pytest_ragproof.results.document import read_results
    from pytest_ragproof.verdict.exports import render

    if args.kind and args.format != "inspectorraget":
        raise UsageError(
            "--kind applies to --format inspectorraget only "
            "(the other formats show aggregates over every kind)"
        )
    if args.labels and args.format != "inspectorraget":
        raise UsageError("--labels applies to --format inspectorraget only")
    if args.output:
        from pytest_ragproof.verdict.exports import refusal

        why = refusal(args.format, Path(args.output), f"-o {args.output}", replace=True)
        if why is not None:
            raise UsageError(why)
    results = read_results(Path(args.results))
    if args.kind:
        results = only_kinds(results, set(args.kind), args.results)
    labels = None
    if args.labels:
        from pytest_ragproof.errors import ConfigError, DatasetError
        from pytest_ragproof.labels import read_labels
        from pytest_ragproof.reporting.inspectorraget_people import annotators_summary

        try:
            labels = read_labels(args.labels)
            summary = annotators_summary(results, labels)
        except (ConfigError, DatasetError) as exc:
            raise UsageError(str(exc)) from exc
        print(summary, file=sys.stderr)
    if not args.kind and args.format == "inspectorraget":
        return _per_kind(results, args.output, labels)
    if labels is not None:
        from pytest_ragproof.reporting.inspectorraget import render_inspectorraget

        text = render_inspectorraget(results, labels=labels)
    else:
        text = render(args.format, results, source=args.results)
    if args.output:
        target = Path(args.output)
        write_atomic(target, text)
        print(f"{args.format} report written to {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _per_kind(results: dict[str, Any], output: str | None, labels: Sequence[Label] | None) -> int:
    """InspectorRAGet without --kind: one file per case kind of the run (one kind: OUT)."""
    from pytest_ragproof.reporting.inspectorraget import kind_path, split_by_kind
    from pytest_ragproof.verdict.exports import write_export

    kinds = [kind for kind, _ in split_by_kind(results)]
    if output is None:
        if len(kinds) > 1:
            example = ", ".join(kind_path(Path("OUT.json"), k).name for k in kinds)
            raise UsageError(
                f"the run has cases of {len(kinds)} kinds "
                f"({', '.join(kinds)}) and InspectorRAGet gets one file per kind: give "
                f"-o OUT.json (writes {example}) or pick one with --kind"
            )
        from pytest_ragproof.reporting.inspectorraget import render_inspectorraget

        sys.stdout.write(render_inspectorraget(results, labels=labels))
        return 0
    for target in write_export("inspectorraget", results, Path(output), labels=labels):
        print(f"inspectorraget report written to {target}", file=sys.stderr)
    return 0
