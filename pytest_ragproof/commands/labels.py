"""``ragproof labels merge A.jsonl B.jsonl ... -o labels.jsonl``: join reviewers' labels files.

Each reviewer's ``ragproof review`` appends to a labels file (``ragproof.label/1``);
a team joins them into one it commits. The merge keeps every label once (exact
duplicate lines, as two copies of one file give, are kept once), ordered by time
and, at equal times, by file then line order, so the latest label of a key stays
the last one. ``-o`` is written whole and atomically; it may not be one of the
inputs, nor an existing file that is not a labels file. The command then reports
the agreement between people per metric (:func:`pytest_ragproof.labels.people_agreement`):
Cohen's κ for two reviewers with 0/1 labels, Krippendorff's α otherwise, with the
number of items labelled by two or more people.

Exit codes: 0 merged; 2 usage errors (an unreadable or invalid labels file, an
``-o`` that must not be written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragproof.errors import UsageError

if TYPE_CHECKING:
    from pytest_ragproof.labels import PeopleAgreement

STATISTICS = {"cohen_kappa": "Cohen's κ", "krippendorff_alpha": "Krippendorff's α"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="labels_command", metavar="ACTION")
    merge = sub.add_parser(
        "merge",
        help="join reviewers' labels files into one, and report their agreement",
        description="Join reviewers' labels files (ragproof.label/1) into one, ordered by time, "
        "exact duplicates once; report the agreement between people per metric.",
    )
    merge.add_argument("inputs", nargs="+", metavar="LABELS", help="labels files to join")
    merge.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the joined labels file to write"
    )


def _refusal(output: Path, inputs: list[Path]) -> str | None:
    from pytest_ragproof.labels import is_labels_file

    if output.is_dir():
        return f"-o {output} is a folder; give a file path such as {output / 'labels.jsonl'}"
    for given in inputs:
        if output.resolve() == given.resolve() or (
            output.exists() and given.exists() and output.samefile(given)
        ):
            return f"-o {output} is one of the files to join; choose a new path"
    if output.exists() and output.stat().st_size and not is_labels_file(output):
        return (
            f"-o {output}: the file exists and is not a labels file; ragproof will not "
            "replace it; choose a new path"
        )
    return None


def run(args: argparse.Namespace) -> int:
    if args.labels_command != "merge":
        raise UsageError("give an action: ragproof labels merge A.jsonl B.jsonl -o labels.jsonl")
    from pytest_ragproof.errors import DatasetError
    from pytest_ragproof.labels import people_agreement, read_labels, write_labels

    inputs = [Path(p) for p in args.inputs]
    output = Path(args.output)
    why = _refusal(output, inputs)
    if why is not None:
        raise UsageError(why)
    try:
        read = [read_labels(path) for path in inputs]
    except DatasetError as exc:
        raise UsageError(str(exc)) from exc
    seen: set[str] = set()
    joined = []
    for labels in read:
        for label in labels:
            line = label.to_line()
            if line not in seen:
                seen.add(line)
                joined.append(label)
    joined.sort(key=lambda label: label.time)  # stable: file and line order at equal times
    replaced = output.exists()
    write_labels(output, joined)
    total = sum(len(labels) for labels in read)
    reviewers = sorted({label.reviewer for label in joined})
    print(
        f"{'replaced' if replaced else 'wrote'} {output}: {len(joined)} label(s) from "
        f"{len(inputs)} file(s) ({total - len(joined)} exact duplicate(s) kept once), "
        f"{len(reviewers)} reviewer(s): {', '.join(reviewers) or 'none'}"
    )
    sys.stdout.write(render_people(people_agreement(joined)))
    return 0


def render_people(found: dict[str, PeopleAgreement]) -> str:
    """The agreement between people, one row per metric."""
    from tabulate import tabulate

    if not found:
        return "agreement between people: no label\n"
    rows = []
    for metric, people in found.items():
        statistic = "—" if people.statistic is None else STATISTICS[people.statistic]
        if people.statistic == "krippendorff_alpha":
            statistic += f" ({people.level})"
        value = f"{people.value:.3f}" if people.value is not None else f"— ({people.undefined})"
        rows.append(
            [metric, ", ".join(people.reviewers), str(people.shared_items), statistic, value]
        )
    table = tabulate(
        rows,
        headers=["metric", "reviewers", "items by 2+", "statistic", "value"],
        tablefmt="simple",
        disable_numparse=True,
    )
    return "agreement between people (the latest label of each reviewer, same answer only):\n" + (
        table + "\n"
    )
