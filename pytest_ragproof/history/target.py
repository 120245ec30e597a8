"""Where a history store lives: ``--ragproof-history`` / ``--store`` values, resolved.

Cheap to import (no SQLAlchemy): the plugin resolves the option in every run that
asks for history. A value is one of

* ``default``: the embedded store ``.ragproof/history.sqlite`` under the project's
  root folder (pytest's rootdir; the current folder for the command line);
* a database URL (``sqlite:///path``, ``postgresql://user@host/db``; anything with
  ``://``), given to SQLAlchemy as it is, except that a bare ``postgresql://`` is
  read with psycopg 3 (the driver the ``history`` extra installs);
* any other text: the path of a SQLite file, relative to the folder given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytest_ragproof.errors import HistoryError

__all__ = ["DEFAULT_PATH", "Target", "resolve_target"]

#: The embedded store, relative to the project's root folder.
DEFAULT_PATH = Path(".ragproof") / "history.sqlite"
DEFAULT_WORD = "default"
_SCHEMES = ("sqlite", "postgresql")


@dataclass(frozen=True)
class Target:
    """A resolved store: its SQLAlchemy URL and how it is shown (never with a password)."""

    url: str
    shown: str
    path: Path | None = None  # the SQLite file, when the store is one

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")


def _hide_password(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at or ":" not in creds:
        return url
    user = creds.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"


def resolve_target(value: str, base: Path, *, default_base: Path | None = None) -> Target:
    """The store ``value`` names; paths relative to ``base`` (``default`` to ``default_base``,
    else ``base``). HistoryError for a URL of a database this store does not support."""
    text = value.strip()
    if not text:
        raise HistoryError(
            "the history store is empty; give a SQLite file path, a database URL such as "
            "postgresql://user@host/db, or 'default' for .ragproof/history.sqlite"
        )
    if text == DEFAULT_WORD:
        path = ((default_base or base) / DEFAULT_PATH).resolve()
        # Shown from where the command ran: rootdir may be a subfolder (its own pytest.ini).
        rel = os.path.relpath(path)
        shown = str(path) if rel.startswith(os.path.join("..", "..", "..")) else rel
        return Target(f"sqlite:///{path}", shown, path)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        dialect = scheme.split("+", 1)[0]
        if dialect not in _SCHEMES:
            raise HistoryError(
                f"history store {_hide_password(text)}: unsupported database {dialect!r}; use a "
                "SQLite file path or a postgresql:// URL"
            )
        url = "postgresql+psycopg://" + text.split("://", 1)[1] if scheme == "postgresql" else text
        file: Path | None = None
        if dialect == "sqlite":
            raw = text.split("://", 1)[1].lstrip("/")
            # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy reads them.
            rel = text.split(":///", 1)[1] if ":///" in text else raw
            file = Path(rel) if Path(rel).is_absolute() else (base / rel).resolve()
            url = f"sqlite:///{file}"
        return Target(url, _hide_password(text), file)
    path = (base / text).resolve()
    if path.is_dir():
        raise HistoryError(
            f"history store {text} is a folder; give a file path such as "
            f"{Path(text) / 'history.sqlite'}"
        )
    return Target(f"sqlite:///{path}", text, path)
