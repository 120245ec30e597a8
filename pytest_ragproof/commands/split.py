"""``ragproof split IN --seed S [--ratios 0.8,0.1,0.1] [--group-by KEY] -o OUT``."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from pytest_ragproof.commands._dataset_args import add_field_map_arguments, field_map_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="dataset to split")
    parser.add_argument("--seed", required=True, help="split seed (any string or integer)")
    parser.add_argument(
        "--ratios",
        default="0.8,0.1,0.1",
        help="optimize,validation,test ratios summing to 1 (default 0.8,0.1,0.1)",
    )
    parser.add_argument(
        "--group-by",
        metavar="KEY",
        help="metadata key whose value keeps related cases in one split",
    )
    parser.add_argument("-o", "--output", required=True, help="output JSONL file")
    add_field_map_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pytest_ragproof.dataset.io import load_dataset, write_jsonl
    from pytest_ragproof.dataset.splits import assign_splits, parse_ratios
    from pytest_ragproof.errors import DatasetError

    ratios = parse_ratios(args.ratios)
    src, out = Path(args.input), Path(args.output)
    if out.resolve() == src.resolve():
        raise DatasetError(
            "the output would overwrite the input", source=str(src), hint="choose another -o"
        )
    dataset = load_dataset(src, field_map=field_map_from(args))
    cases = assign_splits(dataset.cases, args.seed, ratios, group_by=args.group_by, source=str(src))
    pairs = list(zip(dataset.cases, cases, strict=True))
    assigned = sum(1 for old, _ in pairs if old.split is None)
    changed = sum(1 for old, new in pairs if old.split is not None and old.split != new.split)
    write_jsonl(cases, out)
    counts = Counter(c.split for c in cases)
    summary = ", ".join(
        f"{name} {counts.get(name, 0)}" for name in ("optimize", "validation", "test")
    )
    print(f"wrote {len(cases)} case(s) to {out}: {summary}")
    if assigned:
        print(f"{assigned} case(s) had no split and got one")
    if changed:
        print(f"{changed} case(s) got a different split than before")
    if dataset.n_rejected:
        print(f"left out {dataset.n_rejected} rejected case(s)")
    print(f"freeze it with: ragproof freeze {out}")
    return 0
