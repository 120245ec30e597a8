"""Walk a corpus folder (or take one file), pick a reader per extension, collect skips.

The walk is deterministic: entries are visited in code-point order of their
names and the results are sorted by document id, so the same folder gives the
same corpus on every machine. Nothing is skipped silently: every path that does
not become a document is recorded with a reason from ``SkipReason``.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

from pytest_ragproof import defaults
from pytest_ragproof.corpus.docx_reader import DocxFileReader
from pytest_ragproof.corpus.markdown_reader import MarkdownReader
from pytest_ragproof.corpus.pdf_reader import PdfFileReader
from pytest_ragproof.corpus.text_reader import TextReader
from pytest_ragproof.corpus.types import Corpus, Document, Reader, ReadFailure, SkippedFile
from pytest_ragproof.errors import IngestError, MissingExtraError

DEFAULT_MAX_FILE_BYTES = defaults.MAX_FILE_BYTES

READERS: tuple[Reader, ...] = (TextReader(), MarkdownReader(), PdfFileReader(), DocxFileReader())
_BY_EXTENSION: dict[str, Reader] = {ext: r for r in READERS for ext in r.extensions}


def reader_for(name: str) -> Reader | None:
    """The reader for a file name, by its lower-cased extension; None when unsupported."""
    return _BY_EXTENSION.get(Path(name).suffix.lower())


def stat_corpus_path(path: Path) -> os.stat_result:
    """``os.stat`` of a corpus path given by the user, or an IngestError that says why."""
    try:
        return path.stat()
    except FileNotFoundError:
        raise IngestError(f"corpus path not found: {path}") from None
    except OSError as exc:
        raise IngestError(f"cannot access corpus path {path} ({type(exc).__name__})") from None


def load_corpus(
    path: str | os.PathLike[str], *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> Corpus:
    """Read a corpus folder (recursively) or a single file into documents and skips.

    Raises :class:`~pytest_ragproof.errors.IngestError` only when the path itself
    is unusable (missing, not a file or folder) or ``max_file_bytes`` is not a
    positive integer; problems with individual files become ``Corpus.skipped``.
    Hidden names are skipped only below the root: a path given explicitly is read.
    """
    if (
        isinstance(max_file_bytes, bool)
        or not isinstance(max_file_bytes, int)
        or max_file_bytes < 1
    ):
        raise IngestError(f"max_file_bytes must be a positive integer, got {max_file_bytes!r}")
    root = Path(path)
    mode = stat_corpus_path(root).st_mode

    documents: list[Document] = []
    skipped: list[SkippedFile] = []
    if stat.S_ISDIR(mode):
        files = _walk(root, skipped)
    elif stat.S_ISREG(mode):
        files = [(_document_id(root.name), root)]
    else:
        raise IngestError(f"corpus path is neither a file nor a folder: {root}")

    for doc_id, file_path in files:
        outcome = _read_one(doc_id, file_path, max_file_bytes)
        if isinstance(outcome, Document):
            documents.append(outcome)
        else:
            skipped.append(outcome)
    documents.sort(key=lambda d: d.id)
    skipped.sort(key=lambda s: s.id)
    return Corpus(root, tuple(documents), tuple(skipped), max_file_bytes)


def _document_id(relative_posix: str) -> str:
    # Dataset values are NFC (PRODUCT §2); ids must be too, or a case's
    # expected_source_ids written on macOS (NFD file names) would never match.
    return unicodedata.normalize("NFC", relative_posix)


def _walk(root: Path, skipped: list[SkippedFile]) -> list[tuple[str, Path]]:
    """Regular files under ``root`` as (id, path); everything else goes to ``skipped``."""
    files: list[tuple[str, Path]] = []
    # An explicit stack instead of recursion: deep trees must not hit the recursion limit.
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(
                SkippedFile(
                    prefix.rstrip("/") or ".",
                    "unreadable",
                    f"cannot list folder ({type(exc).__name__})",
                )
            )
            continue
        subfolders: list[tuple[Path, str]] = []
        for entry in entries:
            rel = _document_id(prefix + entry.name)
            if not _is_utf8(rel):
                safe = rel.encode("utf-8", "backslashreplace").decode("ascii", "replace")
                skipped.append(SkippedFile(safe, "unreadable", "file name is not valid UTF-8"))
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                skipped.append(
                    SkippedFile(rel, "unreadable", f"cannot stat ({type(exc).__name__})")
                )
                continue
            if entry.name.startswith("."):
                kind = "folder" if is_dir else "file"
                skipped.append(SkippedFile(rel, "hidden", f"hidden {kind}"))
            elif is_dir and is_link:
                # Following folder links can loop or escape the corpus root.
                skipped.append(SkippedFile(rel, "not_regular_file", "symbolic link to a folder"))
            elif is_dir:
                subfolders.append((Path(entry.path), rel + "/"))
            elif is_file:
                files.append((rel, Path(entry.path)))
            else:
                detail = "broken symbolic link" if is_link else "not a regular file"
                skipped.append(SkippedFile(rel, "not_regular_file", detail))
        stack.extend(reversed(subfolders))
    return files


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_one(doc_id: str, path: Path, max_file_bytes: int) -> Document | SkippedFile:
    reader = reader_for(path.name)
    if reader is None:
        suffix = path.suffix.lower()
        detail = f"extension '{suffix}' has no reader" if suffix else "file has no extension"
        return SkippedFile(doc_id, "unknown_extension", detail)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_file_bytes:
                return _too_large(doc_id, size, max_file_bytes)
            # Read at most one byte past the cap: a file growing while we read it
            # must not get past the limit.
            data = handle.read(max_file_bytes + 1)
    except OSError as exc:
        return SkippedFile(doc_id, "unreadable", f"cannot read ({type(exc).__name__})")
    if len(data) > max_file_bytes:
        return _too_large(doc_id, len(data), max_file_bytes)
    try:
        extracted = reader.read(data)
    except ReadFailure as failure:
        return SkippedFile(doc_id, failure.reason, failure.detail)
    except MissingExtraError as exc:
        return SkippedFile(
            doc_id,
            "missing_extra",
            f"needs {exc.module}: pip install 'pytest-ragproof[{exc.extra}]'",
        )
    if not extracted.text.strip():
        return SkippedFile(doc_id, "no_text", f"no text in {reader.format} file")
    return Document(doc_id, extracted.text, reader.format, len(data), extracted.page_starts)


def _too_large(doc_id: str, size: int, cap: int) -> SkippedFile:
    return SkippedFile(doc_id, "too_large", f"{size} bytes > {cap} byte cap")
