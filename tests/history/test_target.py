"""Which store a ``--ragproof-history`` / ``--store`` value names."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragproof.errors import HistoryError
from pytest_ragproof.history.target import resolve_target


def test_paths_urls_and_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    here = resolve_target("runs/h.sqlite", tmp_path)
    assert here.path == tmp_path / "runs" / "h.sqlite" and here.shown == "runs/h.sqlite"
    assert here.url == f"sqlite:///{tmp_path / 'runs' / 'h.sqlite'}"
    root.mkdir(exist_ok=True)
    monkeypatch.chdir(root)  # shown from where the command ran
    default = resolve_target("default", tmp_path, default_base=root)
    assert default.path == root / ".ragproof" / "history.sqlite"
    assert default.shown == ".ragproof/history.sqlite"
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")
    assert resolve_target("default", tmp_path, default_base=root).shown == (
        "../.ragproof/history.sqlite"
    )
    assert resolve_target("sqlite:///rel.db", tmp_path).path == tmp_path / "rel.db"
    assert resolve_target(f"sqlite:///{tmp_path}/abs.db", root).path == tmp_path / "abs.db"
    pg = resolve_target("postgresql://ci:s3cret@db.example:5432/runs", tmp_path)
    assert pg.url == "postgresql+psycopg://ci:s3cret@db.example:5432/runs"
    assert pg.shown == "postgresql://ci:***@db.example:5432/runs" and pg.path is None
    assert not pg.is_sqlite


def test_what_is_not_a_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="unsupported database 'mysql'"):
        resolve_target("mysql://u:pw@h/db", tmp_path)
    with pytest.raises(HistoryError) as info:
        resolve_target("mysql://u:pw@h/db", tmp_path)
    assert "pw" not in str(info.value)
    with pytest.raises(HistoryError, match="is a folder"):
        resolve_target(".", tmp_path)
    with pytest.raises(HistoryError, match="is empty"):
        resolve_target("  ", tmp_path)
