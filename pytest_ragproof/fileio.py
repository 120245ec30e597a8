"""Generic file helpers every writer shares: atomic writes and a paused collector.

``write_atomic`` is the one way pytest-ragproof writes a file (frozen datasets,
results, baselines, exports, generated JSONL and summaries). A new file gets the
mode the user's umask gives (0644 under umask 022), like any file the user's
shell would create; rewriting an existing file keeps that file's mode.

The text goes to a temporary file beside the target, ``.<name>.<12 hex>.tmp``,
renamed over the target once complete. A writer killed before the rename (kill -9,
a power cut) leaves that file behind; the next write of the same target removes
such leftovers: files of exactly that pattern that no live writer holds (a writer
holds an exclusive ``flock`` on its temporary file until the rename; where there
is no ``flock``, Windows, an open file cannot be removed anyway).
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_NEW_FILE_MODE = 0o666  # the kernel takes the umask off, as for open(path, "w")
_HEX = frozenset("0123456789abcdef")
_TOKEN_BYTES = 6  # 12 hex digits in the temporary file's name


def temp_name(path: Path, token: str) -> str:
    """The name of a temporary file of ``path``: ``.<name>.<token>.tmp``."""
    return f".{path.name}.{token}.tmp"


def _is_ours(path: Path, name: str) -> bool:
    """Is ``name`` a temporary file ``write_atomic`` made for ``path``?"""
    prefix = f".{path.name}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False
    token = name[len(prefix) : -len(".tmp")]
    return len(token) == 2 * _TOKEN_BYTES and set(token) <= _HEX


def _held(tmp: str) -> bool:
    """Does a live writer hold this temporary file (its flock)?"""
    if fcntl is None:  # pragma: no cover - Windows: removing an open file fails instead
        return False
    try:
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return True  # gone, or not ours to read: leave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the probe's lock
    return False


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files earlier, killed writes of ``path`` left; return them.

    Only files of ``write_atomic``'s own pattern for this target, and only when no
    live writer holds them.
    """
    removed: list[Path] = []
    try:
        names = [e.name for e in os.scandir(path.parent) if e.is_file(follow_symlinks=False)]
    except OSError:
        return removed
    for name in names:
        tmp = path.parent / name
        if _is_ours(path, name) and not _held(str(tmp)):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, created with the umask applied."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.with_name(temp_name(path, secrets.token_hex(_TOKEN_BYTES)))
        try:
            return os.open(tmp, flags, _NEW_FILE_MODE), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue


@contextlib.contextmanager
def _held_temp(path: Path) -> Iterator[tuple[int, Path]]:
    """A new temporary file beside ``path`` and its open descriptor, flock-held until the
    caller closes it (so another write's clean-up leaves it alone), with an existing
    ``path``'s mode; earlier writes' leftovers removed first; removed when the block
    raises."""
    remove_stale_temps(path)
    try:
        existing_mode: int | None = path.stat().st_mode & 0o7777
    except OSError:
        existing_mode = None
    fd, tmp = _create_temp(path)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held until closed: after the rename
        if existing_mode is not None:
            os.chmod(fd, existing_mode)
        yield fd, tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (a string or its parts) to ``path`` via a temporary file beside it.

    Missing parent folders are created: the caller asked for this path. A new
    file's mode follows the umask; an existing file's mode is kept. Temporary files
    of earlier writes of ``path`` that were killed are removed first.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with _held_temp(path) as (fd, tmp):
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
            fh.flush()
            if fcntl is not None:
                os.replace(tmp, path)  # renaming an open file is fine on POSIX
        if fcntl is None:  # pragma: no cover - Windows renames closed files only
            os.replace(tmp, path)


@contextlib.contextmanager
def atomic_target(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` for another writer to write by name (pytest's
    JUnit writer), renamed over ``path`` when the block ends without an exception and
    removed when it raises: ``write_atomic`` for text that code outside ragproof writes."""
    with _held_temp(path) as (fd, tmp):
        try:
            yield tmp
            if tmp.exists():
                os.replace(tmp, path)
        finally:
            os.close(fd)


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
