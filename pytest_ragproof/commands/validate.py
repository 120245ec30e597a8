"""``ragproof validate FILE``: check a dataset and print its counts and hash."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from pytest_ragproof.commands._dataset_args import add_field_map_arguments, field_map_from

MAX_LISTED = 50  # problems printed; the count is always complete


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="dataset: JSONL, JSON array, CSV (with --map) or frozen JSON")
    add_field_map_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from pytest_ragproof.dataset.canonical import FORMAT
    from pytest_ragproof.dataset.io import find_problems, load_dataset
    from pytest_ragproof.errors import DatasetError

    field_map = field_map_from(args)
    try:
        dataset = load_dataset(args.file, field_map=field_map)
    except DatasetError:
        problems = find_problems(args.file, field_map=field_map)
        print(f"ragproof validate: {len(problems)} problem(s) in {args.file}", file=sys.stderr)
        for problem in problems[:MAX_LISTED]:
            print(f"  {problem}", file=sys.stderr)
        if len(problems) > MAX_LISTED:
            print(f"  … and {len(problems) - MAX_LISTED} more", file=sys.stderr)
        return 1
    print(f"{args.file}: valid, {len(dataset)} case(s)")
    state = "frozen (hash verified)" if dataset.frozen else "not frozen"
    if dataset.frozen_format is not None and dataset.frozen_format != FORMAT:
        state += (
            f", format {dataset.frozen_format} (ragproof freeze {args.file} upgrades it to "
            f"{FORMAT})"
        )
    if dataset.upgraded_from is not None:
        state += f", upgraded from schema_version {dataset.upgraded_from}"
    print(f"state: {state}")
    print(f"sha256: {dataset.sha256}")
    if dataset.n_rejected:
        print(f"rejected cases left out: {dataset.n_rejected}")
    for title, counter in (
        ("kind", Counter(c.kind for c in dataset)),
        ("question_type", Counter(c.question_type for c in dataset)),
        ("split", Counter(c.split or "(none)" for c in dataset)),
        ("review_status", Counter(c.review_status or "(none)" for c in dataset)),
    ):
        rows = sorted(counter.items())
        print()
        print(tabulate(rows, headers=[title, "cases"], tablefmt="simple"))
    if dataset.n_pending:
        print(f"\nwarning: {dataset.n_pending} case(s) pending review", file=sys.stderr)
    return 0
