"""write_atomic: new files follow the umask, rewritten files keep their mode."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_ragproof import freeze
from pytest_ragproof.dataset.io import load_dataset
from pytest_ragproof.dataset.io import write_jsonl as write_cases
from pytest_ragproof.fileio import write_atomic
from tests.dataset.conftest import qa


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    previous = os.umask(0o022)
    os.umask(previous)

    def set_umask(mask: int) -> None:
        os.umask(mask)

    yield set_umask
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_umask_mode(
    tmp_path: Path, umask: Callable[[int], None], mask: int, mode: int
) -> None:
    umask(mask)
    target = tmp_path / "sub" / "out.json"
    write_atomic(target, ["{", "}"])
    assert target.read_text(encoding="utf-8") == "{}"
    assert _mode(target) == mode
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary left


def test_rewriting_keeps_the_existing_mode(tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o022)
    target = tmp_path / "results.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert _mode(target) == 0o640


def test_writers_get_the_umask_mode(
    tmp_path: Path, umask: Callable[[int], None], write_jsonl: Callable[..., Path]
) -> None:
    umask(0o022)
    frozen = freeze(write_jsonl([qa()]))
    assert _mode(frozen) == 0o644
    out = write_cases(load_dataset(frozen).cases, tmp_path / "copy.jsonl")
    assert _mode(out) == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep.json"
    target.write_text("old", encoding="utf-8")

    def parts() -> Iterator[str]:
        yield "partial"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_atomic(target, parts())
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]
