"""``ragproof validate FILE [--corpus PATH]``: check a dataset, print its counts and hash.

With ``--corpus``, every ``expected_source_ids`` entry is also checked against the
corpus's document and chunk ids (``dataset/sources.py``); unknown ids exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.dataset.io import Dataset

from pytest_ragproof.commands._dataset_args import add_field_map_arguments, field_map_from

MAX_LISTED = 50  # problems printed; the count is always complete


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="dataset: JSONL, JSON array, CSV (with --map) or frozen JSON")
    parser.add_argument(
        "--corpus",
        metavar="PATH",
        help="also check every expected_source_ids entry against this corpus folder or file "
        "(document ids, and chunk ids <doc>#<n> of the default chunking)",
    )
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
    if args.corpus is None:
        print(f"{args.file}: valid, {len(dataset)} case(s)")
    else:  # the records are valid; whether their source ids exist is told below
        print(f"{args.file}: records valid, {len(dataset)} case(s); source ids checked below")
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
    if args.corpus is not None:
        return _check_corpus(args.corpus, dataset)
    return 0


def _check_corpus(path: str, dataset: Dataset) -> int:
    from pytest_ragproof.corpus import load_corpus
    from pytest_ragproof.corpus.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
    from pytest_ragproof.dataset.sources import check_sources
    from pytest_ragproof.errors import IngestError

    try:
        corpus = load_corpus(path)
    except IngestError as exc:
        raise UsageError(str(exc)) from exc
    result = check_sources(dataset.cases, corpus)
    print()
    line = f"corpus: {path}, {result.n_documents} document(s)"
    if result.n_chunks is not None:
        line += (
            f", {result.n_chunks} chunk(s) (chunk_size={DEFAULT_CHUNK_SIZE}, "
            f"chunk_overlap={DEFAULT_CHUNK_OVERLAP})"
        )
    print(line)
    print(
        f"expected_source_ids: {result.n_checked} checked, {len(result.unknown)} not in the corpus"
    )
    if not result.unknown:
        return 0
    print(
        f"ragproof validate: {len(result.unknown)} expected source id(s) not in {path}",
        file=sys.stderr,
    )
    for unknown in result.unknown[:MAX_LISTED]:
        print(f"  {unknown.describe()}", file=sys.stderr)
    if len(result.unknown) > MAX_LISTED:
        print(f"  … and {len(result.unknown) - MAX_LISTED} more", file=sys.stderr)
    return 1
