"""``ragproof freeze IN [-o OUT] [--require-review]``."""

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
    add_field_map_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.canonical import FORMAT
    from pytest_ragproof.dataset.freeze import freeze_file

    result = freeze_file(
        args.input,
        args.output or None,
        require_review=args.require_review,
        field_map=field_map_from(args),
    )
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
    if result.n_pending:
        print(
            f"warning: {result.n_pending} case(s) are still pending review "
            "(use --require-review to refuse)",
            file=sys.stderr,
        )
    return 0
