"""Which configured datasets join a pytest run, as pytest users expect from paths.

* A dataset given with ``--ragproof-dataset`` on the command line always joins.
* A dataset configured in the ini file (``ragproof_dataset``) joins when pytest is
  given no path arguments (a rootdir or ``testpaths`` run), or when a path given is
  the dataset file itself (or a node id inside it) or a folder that contains it.
  A run that names other paths or node ids (``pytest tests/test_unit.py``) runs
  only those; the summary says in one line that the datasets were not selected.

Joining datasets that pytest would not reach from its arguments are appended to
``config.args``, so pytest collects them like any test file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_ragproof.plugin.usage as usage


@dataclass(frozen=True)
class DatasetSelection:
    joined: tuple[Path, ...]
    not_selected: tuple[Path, ...]


def _arg_paths(config: pytest.Config, args: list[str]) -> list[Path]:
    base = config.invocation_params.dir
    out = []
    for arg in args:
        if arg.startswith("-"):
            continue
        out.append((base / arg.split("::", 1)[0]).resolve())
    return out


def _covers(path: Path, given: list[Path]) -> bool:
    return any(path == p or p in path.parents for p in given)


def _looks_like_a_dataset(path: Path) -> bool:
    return path.is_file() and (path.suffix == ".jsonl" or path.name.endswith(".frozen.json"))


def _not_configured(config: pytest.Config, path: Path, datasets: tuple[Path, ...]) -> str:
    from pytest_ragproof.dataset.freeze import default_output

    shown = path.name
    frozen = default_output(path)  # where `ragproof freeze` puts this file's frozen form
    if frozen in datasets:
        return (
            f"ragproof: {shown} is the source of the configured dataset {frozen.name}; run "
            f"`pytest {frozen.name}` (after `ragproof freeze {shown}` if you changed it), or "
            f"`pytest --ragproof-dataset={shown}` to run the unfrozen file"
        )
    return (
        f"ragproof: {shown} is not a configured dataset; run it with "
        f"`pytest --ragproof-dataset={shown}`, or add it to ragproof_dataset in "
        f"{usage.ini_file_name(config, 'your pytest configuration')}"
    )


def select_datasets(config: pytest.Config, datasets: tuple[Path, ...]) -> DatasetSelection:
    """Split the configured datasets into those this run evaluates and the rest."""
    from_cli = bool(config.getoption("ragproof_dataset", default=None))
    paths_given = config.args_source == pytest.Config.ArgsSource.ARGS
    if from_cli or not paths_given:
        return DatasetSelection(datasets, ())
    given = _arg_paths(config, list(config.args))
    for path in given:
        if path not in datasets and _looks_like_a_dataset(path):
            raise pytest.UsageError(_not_configured(config, path, datasets))
    joined = tuple(p for p in datasets if _covers(p, given))
    return DatasetSelection(joined, tuple(p for p in datasets if p not in joined))


def add_collection_args(config: pytest.Config, datasets: tuple[Path, ...]) -> None:
    """Make pytest collect the joining dataset files, wherever they are."""
    present = _arg_paths(config, list(config.args))
    for path in datasets:
        if not _covers(path, present):
            config.args.append(str(path))
