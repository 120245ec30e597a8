"""The ``ragproof`` command: a thin layer over the library.

Each subcommand lives in its own module under ``pytest_ragproof.commands`` and
exposes ``add_arguments(parser)`` and ``run(args) -> int``. A module is imported only
when its subcommand runs (or shows its help), so ``ragproof --help`` imports none.

Exit codes: 0 success, 1 the command ran and found a problem (invalid dataset,
shortfall with ``--fail-on-shortfall``), 2 usage errors. A command returns 0 or 1 for
what it found, and raises for an error: :func:`main` prints the error's one line
(``ragproof COMMAND: error: ...``) and exits with its class's ``exit_code``
(:mod:`pytest_ragproof.errors`), in one place.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pytest_ragproof.errors import RagproofError, UsageError

# name -> (module, one-line help). Keep sorted by workflow order.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "pytest_ragproof.commands.init",
        "write a starter conftest, sample dataset and config",
    ),
    "ingest": ("pytest_ragproof.commands.ingest", "show what a corpus folder would contribute"),
    "generate": (
        "pytest_ragproof.commands.generate",
        "generate a reviewable dataset from a corpus with an LLM",
    ),
    "validate": ("pytest_ragproof.commands.validate", "check a dataset file and print counts"),
    "freeze": ("pytest_ragproof.commands.freeze", "validate and freeze a dataset"),
    "split": ("pytest_ragproof.commands.split", "assign optimize/validation/test splits"),
    "import": (
        "pytest_ragproof.commands.import_",
        "import a RAGET, Ragas, DeepEval or promptfoo test set, or OTLP traces, as a dataset",
    ),
    "export": (
        "pytest_ragproof.commands.export",
        "export a dataset as a Ragas, DeepEval or RAGET test set",
    ),
    "report": (
        "pytest_ragproof.commands.report",
        "render a results file as markdown, html or inspectorraget",
    ),
    "review": (
        "pytest_ragproof.commands.review",
        "review results (human labels) or a generated dataset in a local web app",
    ),
    "judge-check": (
        "pytest_ragproof.commands.judge_check",
        "measure a judge's agreement with human labels",
    ),
    "labels": (
        "pytest_ragproof.commands.labels",
        "join reviewers' labels files (labels merge) and report their agreement",
    ),
    "merge": (
        "pytest_ragproof.commands.merge",
        "merge the results files of a run's shards and gate them as one run",
    ),
    "history": (
        "pytest_ragproof.commands.history",
        "the run history: add results files, list runs, show one, trends, compare two",
    ),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-ragproof")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``ragproof`` parser. With ``only``, that subcommand's module alone is imported
    and asked for its arguments; every other subcommand is listed by name and help."""
    parser = argparse.ArgumentParser(
        prog="ragproof",
        description="RAG regression tests in plain pytest: datasets, freezing, reports.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if only is None or only == name:
            importlib.import_module(module).add_arguments(p)
    return parser


def _chosen(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` names: the first word that is not an option (the top-level
    parser has no option taking a value)."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    chosen = _chosen(words)
    if chosen and chosen not in COMMANDS:
        import difflib

        close = difflib.get_close_matches(chosen, list(COMMANDS), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        print(
            f"ragproof: error: unknown command {chosen!r}: {hint}`ragproof --help` lists them",
            file=sys.stderr,
        )
        return UsageError.exit_code
    parser = build_parser(chosen)
    args = parser.parse_args(words)
    if getattr(args, "_module", None) is None:
        parser.print_help(sys.stderr)
        return UsageError.exit_code
    mod = importlib.import_module(args._module)
    try:
        return int(mod.run(args))
    except RagproofError as exc:
        # The command as its errors name it: a subcommand's parser may set ``_shown``
        # ("history add"); else the command's name.
        print(f"ragproof {getattr(args, '_shown', args.command)}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, like other Unix tools.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("interrupted", file=sys.stderr)
        return 130
