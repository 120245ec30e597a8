"""Reading and appending labels files (JSONL of ``ragproof.label/1`` lines).

Appending is the only way a label reaches a file: one complete line, written with
one ``write()`` on a file opened with ``O_APPEND`` while an exclusive ``flock`` is
held, so reviewers appending at the same time never interleave (POSIX appends of
one write land whole). A file is never rewritten in place. Before appending, the
file must be a labels file (its first line reads as a label) ending with a newline:
a last line without one (a write cut off, a hand edit) is refused with its number,
never "repaired". A new file gets the mode the user's umask gives; no folder is
created.

Reading refuses, with the file, the line, the field and the fix (never a note, an
answer or any other text of the label): invalid JSON, an unknown ``format``, an
unknown or missing field, a bad value. Blank lines are skipped. A last line without
a newline is read when it is a complete label (an editor dropped the newline).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from pytest_ragproof.errors import LabelError
from pytest_ragproof.labels.model import LABEL_FORMAT, Label

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["append_label", "is_labels_file", "parse_labels", "read_labels", "write_labels"]

_NEW_FILE_MODE = 0o666  # the kernel takes the umask off
_CONFLICT = ("<<<<<<<", "=======", ">>>>>>>")


def _line_error(source: str, number: int, exc: LabelError) -> LabelError:
    return LabelError(exc.reason, source=source, line=number, hint=exc.hint)


def parse_labels(text: str, source: str) -> list[Label]:
    """The labels of a labels file's ``text``; ``source`` names it in messages."""
    out: list[Label] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline after the last line
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            last = number == len(lines) and not text.endswith("\n")
            if line.startswith(_CONFLICT):
                hint = (
                    "a git merge conflict was left in the file: join the reviewers' files "
                    "with ragproof labels merge instead of resolving lines by hand"
                )
            elif last:
                hint = "the last line has no newline: it was cut off while being written; remove it"
            else:
                hint = "one JSON object per line, as ragproof review writes them"
            raise LabelError(
                "not a JSON object (invalid JSON)", source=source, line=number, hint=hint
            ) from None
        try:
            out.append(Label.from_dict(data))
        except LabelError as exc:
            raise _line_error(source, number, exc) from None
    return out


def read_labels(path: str | os.PathLike[str]) -> list[Label]:
    """Every label of a labels file, in file order (withdrawals included)."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise LabelError(
            f"cannot read the labels file [{type(exc).__name__}]",
            source=where,
            hint="give the path of a labels file (JSONL, ragproof.label/1)",
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LabelError(
            "the file is not UTF-8 text", source=where, hint="a labels file is UTF-8 JSONL"
        ) from None
    return parse_labels(text, where)


def _check_existing(fd: int, where: str) -> None:
    """Refuse to append to a file that is not a labels file, or whose last line is cut off."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    head = os.pread(fd, min(size, 1 << 16), 0)
    first = head.split(b"\n", 1)[0]
    try:
        record = json.loads(first.decode("utf-8-sig"))
        ok = isinstance(record, dict) and record.get("format") == LABEL_FORMAT
    except ValueError:
        ok = False
    if not ok:
        raise LabelError(
            "the file exists and is not a labels file (its first line is not a "
            f"{LABEL_FORMAT} label); nothing was written",
            source=where,
            line=1,
            hint="give a new path or an existing labels file",
        )
    if os.pread(fd, 1, size - 1) != b"\n":
        lines = 1
        offset = 0
        while offset < size:
            chunk = os.pread(fd, 1 << 20, offset)
            lines += chunk.count(b"\n")
            offset += len(chunk)
        raise LabelError(
            "the last line has no newline at its end (a write was cut off, or the file was "
            "edited by hand); nothing was appended",
            source=where,
            line=lines,
            hint="if that line is a complete label, add the newline; otherwise remove the line",
        )


def append_label(path: str | os.PathLike[str], label: Label) -> None:
    """Append ``label`` as one line to the labels file at ``path`` (created if missing)."""
    where = str(path)
    data = label.to_line().encode("utf-8")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, _NEW_FILE_MODE)
    except OSError as exc:
        raise LabelError(
            f"cannot open the labels file to append [{type(exc).__name__}]",
            source=where,
            hint="check that its folder exists and is writable",
        ) from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when the file is closed
        _check_existing(fd, where)
        written = os.write(fd, data)
        if written != len(data):  # pragma: no cover - a full disk
            raise LabelError(
                f"only {written} of {len(data)} bytes were appended (disk full?)",
                source=where,
                hint="free space, then remove the cut-off last line",
            )
        os.fsync(fd)
    finally:
        os.close(fd)


def write_labels(path: str | os.PathLike[str], labels: Iterable[Label]) -> None:
    """Write ``labels`` as a whole new labels file (atomically; for ``ragproof labels merge``)."""
    from pytest_ragproof.fileio import write_atomic

    write_atomic(Path(path), (label.to_line() for label in labels))


def is_labels_file(path: str | os.PathLike[str]) -> bool:
    """Does the file's first non-blank line read as a ``ragproof.label/1`` label?

    Tells the labels file of ``ragproof review`` from the older labelled formats
    ``ragproof judge-check`` reads; False for a missing or unreadable file.
    """
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if raw.strip():
                    record = json.loads(raw.decode("utf-8-sig"))
                    return isinstance(record, dict) and record.get("format") == LABEL_FORMAT
    except (OSError, ValueError):
        return False
    return False
