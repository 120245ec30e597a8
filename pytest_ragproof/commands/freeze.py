"""``ragproof freeze IN [-o OUT] [--require-review] [--approved-only]``; ``--check`` for CI.

``--approved-only`` freezes the cases whose ``review_status`` is ``approved`` or
``edited`` and prints how many of the others were left out, per status.

``--check`` writes nothing: exit 0 with one line when the frozen file is current
with IN, 1 when it is missing, does not verify or holds other cases.
"""

from __future__ import annotations

import argparse
import sys

from pytest_ragproof.commands._dataset_args import add_field_map_arguments, field_map_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="dataset to freeze (JSONL, JSON array, CSV with --map)")
    parser.add_argument("-o", "--output", help="output path (default: <stem>.frozen.json)")
    parser.add_argument(
        "--require-review",
        action="store_true",
        help="refuse to freeze while any case is pending review",
    )
    parser.add_argument(
        "--approved-only",
        action="store_true",
        help="freeze only cases whose review_status is approved or edited; the others are "
        "left out and counted per status",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the frozen file is missing or stale (for CI)",
    )
    add_field_map_arguments(parser)


def _refreeze_command(args: argparse.Namespace) -> str:
    """The command that re-freezes, with the arguments the user gave."""
    import shlex

    parts = [args.input]
    if args.output:
        parts += ["-o", args.output]
    for pair in args.map or ():
        parts += ["--map", pair]
    for column in args.ignore_column or ():
        parts += ["--ignore-column", column]
    if args.approved_only:
        parts.append("--approved-only")
    return " ".join(shlex.quote(part) for part in parts)


def _check(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.canonical import FORMAT
    from pytest_ragproof.dataset.freeze import check_frozen, stale_message

    result = check_frozen(
        args.input,
        args.output or None,
        field_map=field_map_from(args),
        only_approved=args.approved_only,
    )
    if not result.current:
        print(
            f"ragproof freeze --check: {result.reason}; {stale_message(_refreeze_command(args))}",
            file=sys.stderr,
        )
        return 1
    line = (
        f"ragproof freeze --check: {result.target} is current with {args.input} "
        f"({len(result.source)} case(s), sha256 {result.source.sha256[:12]})"
    )
    fmt = result.frozen.frozen_format if result.frozen is not None else None
    if fmt is not None and fmt != FORMAT:
        line += f"; it is in format {fmt}, ragproof freeze {args.input} rewrites it in {FORMAT}"
    print(line)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    from pytest_ragproof.dataset.canonical import FORMAT
    from pytest_ragproof.dataset.freeze import freeze_file
    from pytest_ragproof.errors import DatasetError, FrozenDatasetModifiedError

    try:
        result = freeze_file(
            args.input,
            args.output or None,
            require_review=args.require_review,
            field_map=field_map_from(args),
            only_approved=args.approved_only,
        )
    except DatasetError as exc:
        print(f"ragproof freeze: error: {exc}", file=sys.stderr)
        if not isinstance(exc, FrozenDatasetModifiedError) and exc.record is not None:
            print(f"  to list every bad record: ragproof validate {args.input}", file=sys.stderr)
        return 1
    dataset = result.dataset
    if result.upgraded_from_format is not None:
        print(
            f"upgraded {result.path} from format {result.upgraded_from_format} to "
            f"{FORMAT} ({result.n_cases} case(s))"
        )
    else:
        print(f"froze {result.n_cases} case(s) into {result.path}")
    print(f"sha256: {dataset.sha256}")
    if result.n_rejected:
        print(f"left out {result.n_rejected} rejected case(s)")
    for status, count in sorted(result.left_out.items()):
        shown = "case(s) without a review_status" if status == "none" else f"{status} case(s)"
        print(f"left out {count} {shown} (--approved-only)")
    if result.n_pending:
        print(
            f"warning: {result.n_pending} case(s) are still pending review "
            "(use --require-review to refuse)",
            file=sys.stderr,
        )
    return 0
