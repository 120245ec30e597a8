"""Walking a corpus: ids, order, normalization, and every skip reason reported."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from pytest_ragproof.corpus import SKIP_REASON_HELP, SKIP_REASONS, load_corpus
from pytest_ragproof.corpus import loader as loader_module
from pytest_ragproof.errors import IngestError

from ._files import make_docx, make_encrypted_pdf, make_pdf


def build_mixed_corpus(root: Path) -> None:
    """One readable file per format and one file per skip reason we can make portably."""
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "intro.md").write_text("# Intro\n\nWelcome.\n", encoding="utf-8")
    (root / "notes.txt").write_text("plain notes", encoding="utf-8")
    (root / "guide" / "fruit.pdf").write_bytes(make_pdf())
    make_docx(root / "handbook.docx")
    (root / "locked.pdf").write_bytes(make_encrypted_pdf("pw"))
    (root / "broken.docx").write_bytes(b"garbage")
    (root / "big.txt").write_bytes(b"x" * 200_001)
    (root / "latin1.txt").write_bytes("na\u00efve".encode("latin-1"))
    (root / ".secret.txt").write_text("hidden", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / "Makefile").write_text("all:", encoding="utf-8")
    (root / "blank.md").write_text("  \n\n\t\n", encoding="utf-8")


def test_mixed_folder_documents_and_skips(tmp_path: Path) -> None:
    build_mixed_corpus(tmp_path)
    corpus = load_corpus(tmp_path, max_file_bytes=200_000)
    assert [(d.id, d.format) for d in corpus.documents] == [
        ("guide/fruit.pdf", "pdf"),
        ("guide/intro.md", "markdown"),
        ("handbook.docx", "docx"),
        ("notes.txt", "text"),
    ]
    assert [(s.id, s.reason) for s in corpus.skipped] == [
        (".git", "hidden"),
        (".secret.txt", "hidden"),
        ("Makefile", "unknown_extension"),
        ("big.txt", "too_large"),
        ("blank.md", "no_text"),
        ("broken.docx", "corrupt"),
        ("image.png", "unknown_extension"),
        ("latin1.txt", "not_utf8"),
        ("locked.pdf", "encrypted"),
    ]
    assert corpus.document("notes.txt").text == "plain notes"
    assert load_corpus(tmp_path, max_file_bytes=200_001).document("big.txt").format == "text"


def test_size_cap_skips_with_sizes_in_detail(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * 2_001)
    (tmp_path / "ok.txt").write_bytes(b"y" * 2_000)
    corpus = load_corpus(tmp_path, max_file_bytes=2_000)
    assert [d.id for d in corpus.documents] == ["ok.txt"]
    (skip,) = corpus.skipped
    assert (skip.id, skip.reason, skip.detail) == (
        "big.txt",
        "too_large",
        "2001 bytes > 2000 byte cap",
    )


def test_default_size_cap_is_five_million_bytes(tmp_path: Path) -> None:
    with (tmp_path / "huge.txt").open("wb") as fh:
        fh.truncate(5_000_001)  # sparse: cheap to make
    (tmp_path / "edge.txt").write_bytes(b"a" * 10)
    corpus = load_corpus(tmp_path)
    assert corpus.max_file_bytes == 5_000_000
    assert [(s.id, s.reason) for s in corpus.skipped] == [("huge.txt", "too_large")]


def test_skip_details_never_contain_file_text(tmp_path: Path) -> None:
    marker = "SENSITIVE-CONTENT-42"
    (tmp_path / "bad.txt").write_bytes(marker.encode() + b"\xff")
    (tmp_path / "bad.docx").write_bytes(marker.encode())
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 " + marker.encode())
    corpus = load_corpus(tmp_path)
    assert len(corpus.skipped) == 3
    for skip in corpus.skipped:
        assert marker not in skip.detail


def test_ids_are_relative_posix_nfc_and_sorted(tmp_path: Path) -> None:
    nfd_name = unicodedata.normalize("NFD", "caf\u00e9.md")
    (tmp_path / "b" / "a").mkdir(parents=True)
    (tmp_path / "b" / "a" / "z.txt").write_text("z")
    (tmp_path / "b" / nfd_name).write_text("c")
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    ids = [d.id for d in load_corpus(tmp_path).documents]
    assert ids == ["a.txt", "b.txt", "b/a/z.txt", "b/caf\u00e9.md"]


def test_single_file_id_is_its_name_and_text_is_normalized(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "crlf.txt"
    path.parent.mkdir()
    path.write_bytes("\ufeffline one\r\nline two\rcafe\u0301\n".encode())
    corpus = load_corpus(str(path))
    (doc,) = corpus.documents
    assert doc.id == "crlf.txt"
    assert doc.text == "line one\nline two\ncaf\u00e9\n"
    assert doc.size_bytes == path.stat().st_size


def test_explicit_hidden_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / ".notes.md"
    path.write_text("explicitly asked for")
    assert [d.id for d in load_corpus(path).documents] == [".notes.md"]


def test_unreadable_file_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine")
    (tmp_path / "b.txt").write_text("denied")
    real_open = Path.open

    def fake_open(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "b.txt":
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", fake_open)
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["a.txt"]
    assert [(s.id, s.reason, s.detail) for s in corpus.skipped] == [
        ("b.txt", "unreadable", "cannot read (PermissionError)")
    ]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_permission_denied_file_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "private.txt"
    path.write_text("x")
    path.chmod(0)
    try:
        (skip,) = load_corpus(tmp_path).skipped
    finally:
        path.chmod(0o600)
    assert skip.reason == "unreadable"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_folder_symlink_are_not_regular_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "doc.txt").write_text("once")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["real/doc.txt"]
    assert [(s.id, s.reason, s.detail) for s in corpus.skipped] == [
        ("dangling.txt", "not_regular_file", "broken symbolic link"),
        ("loop", "not_regular_file", "symbolic link to a folder"),
        ("pipe.txt", "not_regular_file", "not a regular file"),
    ]


def test_missing_path_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="corpus path not found"):
        load_corpus(tmp_path / "nope")


@pytest.mark.parametrize("cap", [0, -1, True, 1.5])
def test_bad_size_cap_is_an_ingest_error(tmp_path: Path, cap: object) -> None:
    with pytest.raises(IngestError, match="max_file_bytes"):
        load_corpus(tmp_path, max_file_bytes=cap)  # type: ignore[arg-type]


def test_skip_counts_follow_the_vocabulary_order(tmp_path: Path) -> None:
    build_mixed_corpus(tmp_path)
    counts = load_corpus(tmp_path, max_file_bytes=200_000).skip_counts()
    assert counts == {
        "hidden": 2,
        "unknown_extension": 2,
        "too_large": 1,
        "encrypted": 1,
        "corrupt": 1,
        "not_utf8": 1,
        "no_text": 1,
    }
    assert list(counts) == [r for r in SKIP_REASONS if r in counts]
    assert set(SKIP_REASON_HELP) == set(SKIP_REASONS)


def test_loader_reader_table_covers_documented_extensions() -> None:
    names = ["a.txt", "a.TEXT", "a.md", "a.Markdown", "a.pdf", "a.DOCX"]
    formats = [getattr(loader_module.reader_for(n), "format", None) for n in names]
    assert formats == ["text", "text", "markdown", "markdown", "pdf", "docx"]
    assert loader_module.reader_for("a.doc") is None
