"""A history store is a database ragproof made: another application's SQLite file is never
written into, and a schema_version table that no store holds is named, never trusted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.results.document import write_results
from tests.history.runs import document


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("results") / "good.json"
    write_results(document(), path)
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    code = main(["history", *(str(a) for a in args)])
    return code, capsys.readouterr().err


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute("SELECT type, name FROM sqlite_master").fetchall())


def test_another_applications_sqlite_file_is_not_written_into(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "app.sqlite"
    with sqlite3.connect(app) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)")
        conn.execute("INSERT INTO users VALUES (1, 'ana@example.com')")
    before, data = _schema(app), app.read_bytes()
    code, err = _run(capsys, "add", results, "--store", app)
    assert code == 2
    assert err.splitlines() == [
        f"ragproof history add: error: {app} is a SQLite database of another application "
        "(tables users), not a history store: ragproof will not write into it; give a new "
        "path such as history.sqlite"
    ]
    assert _schema(app) == before and app.read_bytes() == data
    code, err = _run(capsys, "list", "--store", app)
    assert code == 2 and "another application" in err


DAMAGE = {
    "text": ("UPDATE schema_version SET version = 'abc'", "holds version 'abc'"),
    "two rows": ("INSERT INTO schema_version VALUES (1)", "holds 2 rows (one expected)"),
    "negative": ("UPDATE schema_version SET version = -1", "holds version '-1'"),
    "emptied": ("DELETE FROM schema_version", "holds 0 rows (one expected)"),
    "dropped": (
        "DROP TABLE schema_version",
        "has history tables (aggregates, case_results, runs) but no schema_version table",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_schema_version_no_store_holds_is_named(
    damage: str, results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "history.sqlite"
    assert _run(capsys, "add", results, "--store", store)[0] == 0
    sql, why = DAMAGE[damage]
    with sqlite3.connect(store) as conn:
        conn.execute(sql)
    data = store.read_bytes()
    for args in (("add", results, "--store", store), ("list", "--store", store)):
        code, err = _run(capsys, *args)
        (line,) = err.splitlines()
        assert code == 2, line
        assert f"history store {store}" in line and why in line, line
        assert "Traceback" not in err and "already exists" not in err
    assert store.read_bytes() == data  # nothing was written into it
