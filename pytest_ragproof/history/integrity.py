"""Is a database a history store? Checked before ragproof writes into one (pytest-free).

A SQLite file of another application (tables, no history table) is refused before any
connection changes it; a ``schema_version`` table that no store holds (text, several
rows, a negative version, emptied, dropped beside the history tables) is named, never
trusted or repaired.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ragproof.errors import HistoryError
from pytest_ragproof.history.target import Target

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["check_sqlite_file", "version_row"]

_SQLITE_HEADER = b"SQLite format 3\x00"
_HISTORY_TABLES = ("runs", "case_results", "aggregates", "schema_version")


def check_sqlite_file(target: Target) -> None:
    path = target.path
    if path is None or not path.exists():
        return
    if path.is_dir():
        raise HistoryError(f"history store {target.shown} is a folder; give a file path")
    with path.open("rb") as fh:
        head = fh.read(len(_SQLITE_HEADER))
    if head and head != _SQLITE_HEADER:
        raise HistoryError(
            f"history store {target.shown} is not a SQLite database (another file?); "
            "ragproof will not write into it; choose a new path such as "
            ".ragproof/history.sqlite"
        )
    if head:
        # Before any connection changes it (WAL mode rewrites the header): a database of
        # another application is refused as it is.
        import sqlite3
        from urllib.parse import quote

        try:
            conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
            try:
                query = "SELECT name FROM sqlite_master WHERE type = 'table'"
                names = [str(row[0]) for row in conn.execute(query)]
            finally:
                conn.close()
        except sqlite3.Error:
            return  # damaged or locked: opening it says so
        others = sorted(n for n in names if n not in _HISTORY_TABLES)
        if others and not set(names) & set(_HISTORY_TABLES):
            raise HistoryError(_foreign(target, others))


def _foreign(target: Target, others: list[str]) -> str:
    shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
    return (
        f"{target.shown} is a SQLite database of another application (tables {shown}), not "
        "a history store: ragproof will not write into it; give a new path such as "
        "history.sqlite"
    )


_FIX = "restore it from a copy, or record into a new store"


def version_row(conn: sa.Connection, target: Target) -> int | None:
    """The store's schema version: None for a database without history tables; a
    HistoryError for a database that is not (or no longer) a history store."""
    import sqlalchemy as sa

    names = sa.inspect(conn).get_table_names()
    if "schema_version" not in names:
        ours = sorted(set(names) & set(_HISTORY_TABLES))
        others = sorted(n for n in names if n not in _HISTORY_TABLES)
        if ours:
            raise HistoryError(
                f"history store {target.shown} has history tables ({', '.join(ours)}) "
                f"but no schema_version table: it was damaged; {_FIX}"
            )
        if others and target.is_sqlite:
            raise HistoryError(_foreign(target, others))
        return None
    rows = conn.execute(sa.text("SELECT version FROM schema_version")).scalars().all()
    value = rows[0] if len(rows) == 1 else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        what = (
            f"{len(rows)} rows (one expected)"
            if len(rows) != 1
            else f"version {str(value)[:40]!r} (a version number, 0 or more, expected)"
        )
        raise HistoryError(
            f"history store {target.shown}: its schema_version table holds {what}: it "
            f"was not written by pytest-ragproof or was damaged; {_FIX}"
        )
    return value
