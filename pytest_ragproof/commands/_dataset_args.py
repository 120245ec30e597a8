"""Arguments shared by the dataset subcommands."""

from __future__ import annotations

import argparse
from typing import Any


def add_field_map_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--map",
        metavar="COLUMN=FIELD",
        action="append",
        default=None,
        help="map a source column/key to a case field or metadata.<key> (repeatable; "
        "required for CSV)",
    )
    parser.add_argument(
        "--ignore-column",
        metavar="COLUMN",
        action="append",
        default=None,
        help="a source column to drop on purpose (repeatable)",
    )


def field_map_from(args: argparse.Namespace) -> Any:
    if not args.map and not args.ignore_column:
        return None
    from pytest_ragproof.dataset.fieldmap import DatasetFieldMap

    return DatasetFieldMap.parse(args.map, args.ignore_column)
