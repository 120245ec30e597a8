"""Generic file helpers every writer shares: atomic writes and a paused collector.

``write_atomic`` is the one way pytest-ragproof writes a file (frozen datasets,
results, baselines, exports, generated JSONL and summaries). A new file gets the
mode the user's umask gives (0644 under umask 022), like any file the user's
shell would create; rewriting an existing file keeps that file's mode.
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path

_NEW_FILE_MODE = 0o666  # the kernel takes the umask off, as for open(path, "w")


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, created with the umask applied."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, _NEW_FILE_MODE), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (a string or its parts) to ``path`` via a temporary file beside it.

    Missing parent folders are created: the caller asked for this path. A new
    file's mode follows the umask; an existing file's mode is kept.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing_mode: int | None = path.stat().st_mode & 0o7777
    except OSError:
        existing_mode = None
    fd, tmp = _create_temp(path)
    try:
        if existing_mode is not None:
            os.chmod(fd, existing_mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    Loading allocates millions of small containers that hold no cycles; left on,
    the collector rescans the growing heap again and again (about a quarter of a
    100,000-case load). The previous state is restored afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
