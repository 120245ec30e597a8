"""``ragproof import --from raget|ragas|deepeval|promptfoo FILE -o OUT [--corpus PATH]``,
``ragproof import --from otel TRACES... -o OUT`` and ``ragproof import --from phoenix URL
--project NAME -o OUT`` (``--format`` is the same option).

Reads another tool's test set, or production traces, prints a field report (what
mapped where, what was dropped and why, counts) and writes a reviewable JSONL
dataset that ``ragproof validate`` and ``ragproof freeze`` accept. See
docs/interop.md and, for traces, docs/traces.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError
from pytest_ragproof.interop import TOOLS

if TYPE_CHECKING:
    from pytest_ragproof.errors import DatasetError
    from pytest_ragproof.interop.drafts import Draft
    from pytest_ragproof.interop.otel import Trace
    from pytest_ragproof.interop.report import FieldReport


MAX_LISTED = 50  # problems printed; the count is always complete


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        "--format",
        dest="tool",
        required=True,
        choices=TOOLS,
        help="the tool that wrote FILE (otel: OTLP JSON traces; phoenix: a Phoenix server)",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the other tool's test set (JSONL, JSON, CSV or YAML); with --from otel one or "
        "more OTLP JSON trace files (.json or .jsonl, gzip accepted); with --from phoenix the "
        "Phoenix server's URL",
    )
    parser.add_argument("-o", "--output", required=True, help="the JSONL dataset to write")
    parser.add_argument(
        "--corpus",
        metavar="PATH",
        help="resolve reference context texts to the ids of the corpus documents holding them",
    )
    parser.add_argument(
        "--var",
        metavar="FIELD=VAR",
        action="append",
        default=None,
        help="promptfoo only: which var holds a case field (repeatable; question is required), "
        "e.g. --var question=query --var reference_contexts=context",
    )
    parser.add_argument(
        "--context-delimiter",
        default=None,
        help="deepeval CSV/JSONL only: what joins the context passages in a cell (default |)",
    )
    from pytest_ragproof.commands._otel_args import add_otel_arguments

    add_otel_arguments(parser)
    from pytest_ragproof.commands._phoenix_args import add_phoenix_arguments

    add_phoenix_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.io import write_jsonl
    from pytest_ragproof.errors import DatasetError, IngestError
    from pytest_ragproof.interop import build
    from pytest_ragproof.interop.report import FieldReport

    if args.var and args.tool != "promptfoo":
        raise UsageError("--var applies to --from promptfoo only (the other formats name fields)")
    if args.context_delimiter is not None and args.tool != "deepeval":
        raise UsageError("--context-delimiter applies to --from deepeval only")
    var_map: dict[str, str] = {}
    if args.tool == "promptfoo":
        from pytest_ragproof.errors import ConfigError
        from pytest_ragproof.interop.promptfoo import parse_vars

        try:
            var_map = parse_vars(args.var)
        except ConfigError as exc:
            raise UsageError(str(exc)) from exc
    from pytest_ragproof.commands._otel_args import check_otel_arguments, selection
    from pytest_ragproof.commands._phoenix_args import check_phoenix_arguments

    check_otel_arguments(args)
    check_phoenix_arguments(args)
    if args.tool not in ("otel", "phoenix") and len(args.files) > 1:
        raise UsageError(f"--from {args.tool} reads one FILE (only --from otel takes several)")
    paths = [] if args.tool == "phoenix" else [Path(f) for f in args.files]
    out = Path(args.output)
    why = build.check_output(out, paths)
    if why is not None:
        raise UsageError(why)
    if args.tool == "otel" and args.corpus is not None:
        raise UsageError("--corpus does not apply to --from otel (traces carry document ids)")
    choice = selection(args) if args.tool in ("otel", "phoenix") else None
    corpus = None
    if args.corpus is not None:
        try:
            corpus = build.CorpusIndex(args.corpus)
        except IngestError as exc:
            raise UsageError(str(exc)) from exc
    source = ", ".join(str(p) for p in paths)
    read = None
    if args.tool == "phoenix":
        from pytest_ragproof.commands._phoenix_args import server

        phoenix_server = server(args)
        source = f"{phoenix_server.shown} project {args.project}"

        def read() -> tuple[dict[str, Trace], int, str]:
            from pytest_ragproof.interop.phoenix import read_traces

            return read_traces(phoenix_server, args.project)

    report = FieldReport(args.tool, source)
    if choice is not None:
        from pytest_ragproof.interop import otel_select

        try:
            texts = otel_select.import_traces(paths, report, choice, read)
        except otel_select.NothingKept as exc:  # file errors are one line, as from _read
            return _failed(report, exc, out)
        from pytest_ragproof.fileio import write_atomic

        # the canonical texts the validation made, as write_jsonl would write them
        write_atomic(out, (text + "\n" for text in texts))
    else:
        drafts = _read(args, paths[0], report, var_map)
        try:
            dataset = build.build_dataset(drafts, args.tool, source, corpus, report)
        except DatasetError as exc:
            return _failed(report, exc, out)
        write_jsonl(dataset.cases, out)
    report.output = str(out)
    for line in report.lines():
        print(line)
    if corpus is not None:
        skipped = ", ".join(f"{n} {reason}" for reason, n in corpus.skipped.items())
        print(
            f"corpus: {args.corpus}, {corpus.n_documents} document(s)"
            + (
                f"; skipped files: {skipped} (ragproof ingest --corpus shows why)"
                if skipped
                else ""
            )
        )
    if choice is not None:
        print(
            "review the drafts (docs/traces.md), then freeze the approved ones: "
            f"ragproof freeze {out} --approved-only"
        )
    else:
        print(f"freeze it with: ragproof freeze {out}")
    return 0


def _failed(report: FieldReport, exc: DatasetError, out: Path) -> int:
    """Print the report and why nothing was written; the exit status."""
    from pytest_ragproof.interop import build

    for line in report.lines():
        print(line, file=sys.stderr)
    print(f"ragproof import: error: {exc}", file=sys.stderr)
    problems = exc.problems if isinstance(exc, build.ImportProblems) else []
    for problem in problems[:MAX_LISTED]:
        print(f"  {problem}", file=sys.stderr)
    if len(problems) > MAX_LISTED:
        print(f"  … and {len(problems) - MAX_LISTED} more", file=sys.stderr)
    print(f"wrote nothing to {out}", file=sys.stderr)
    return 1


def _read(
    args: argparse.Namespace, src: Path, report: FieldReport, var_map: dict[str, str]
) -> list[Draft]:
    from pytest_ragproof.interop import deepeval, promptfoo, ragas, raget

    if args.tool == "raget":
        return raget.read(src, report)
    if args.tool == "ragas":
        return ragas.read(src, report)
    if args.tool == "deepeval":
        return deepeval.read(src, report, delimiter=args.context_delimiter or deepeval.DELIMITER)
    return promptfoo.read(src, report, var_map=var_map)
