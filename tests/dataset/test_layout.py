"""The dataset package's rooms: no import cycle among them, and the public names still import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_ragproof

PACKAGE = Path(pytest_ragproof.__file__).parent


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_dataset_modules_and_fileio_import_without_a_cycle() -> None:
    files = {f"pytest_ragproof.dataset.{p.stem}": p for p in (PACKAGE / "dataset").glob("*.py")}
    files["pytest_ragproof.fileio"] = PACKAGE / "fileio.py"
    graph = {name: _imports(path) & set(files) - {name} for name, path in files.items()}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"import cycle: {' -> '.join((*trail, name))}"
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, (*trail, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())
    assert "pytest_ragproof.dataset.freeze" not in graph["pytest_ragproof.dataset.io"]


def test_existing_import_paths_keep_working() -> None:
    from pytest_ragproof.dataset.freeze import freeze, write_atomic
    from pytest_ragproof.dataset.io import (
        Dataset,
        DatasetFieldMap,
        case_record,
        find_problems,
        load_dataset,
        paused_gc,
        write_jsonl,
    )
    from pytest_ragproof.fileio import paused_gc as gc_helper
    from pytest_ragproof.fileio import write_atomic as writer

    assert write_atomic is writer and paused_gc is gc_helper
    assert all(callable(x) for x in (freeze, case_record, find_problems, load_dataset, write_jsonl))
    assert Dataset.__name__ == "Dataset" and DatasetFieldMap.__name__ == "DatasetFieldMap"


def test_dataset_modules_stay_small() -> None:
    for path in (PACKAGE / "dataset").glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 400, path.name
