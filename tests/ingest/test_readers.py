"""Format readers on real files: right text out, right page metadata, right failures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ragproof.corpus import ReadFailure, load_corpus
from pytest_ragproof.corpus.docx_reader import DocxFileReader
from pytest_ragproof.corpus.pdf_reader import PdfFileReader
from pytest_ragproof.corpus.text_reader import TextReader
from pytest_ragproof.errors import MissingExtraError

from ._files import PAGE_TEXTS, make_docx, make_encrypted_pdf, make_pdf

INSTALL_HINT = "pip install 'pytest-ragproof[ingest]'"


def test_pdf_pages_text_and_page_starts(tmp_path: Path) -> None:
    (tmp_path / "fruit.pdf").write_bytes(make_pdf())
    corpus = load_corpus(tmp_path)
    assert corpus.skipped == ()
    (doc,) = corpus.documents
    assert (doc.id, doc.format, doc.page_count) == ("fruit.pdf", "pdf", 3)
    assert doc.page_starts[0] == 0
    bounds = [*doc.page_starts, len(doc.text) + 2]
    for number, expected in enumerate(PAGE_TEXTS, start=1):
        start, end = bounds[number - 1], bounds[number] - 2
        assert doc.text[start:end] == expected
        assert doc.page_at(start) == number
        assert doc.page_at(end - 1) == number
    assert doc.text == "\n\n".join(PAGE_TEXTS)


def test_page_at_rejects_offsets_outside_the_text(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(make_pdf())
    doc = load_corpus(tmp_path / "a.pdf").documents[0]
    with pytest.raises(ValueError):
        doc.page_at(len(doc.text) + 1)


def test_encrypted_pdf_with_user_password_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "locked.pdf").write_bytes(make_encrypted_pdf("let-me-in"))
    corpus = load_corpus(tmp_path)
    assert corpus.documents == ()
    (skip,) = corpus.skipped
    assert (skip.id, skip.reason) == ("locked.pdf", "encrypted")


def test_pdf_with_empty_user_password_is_read(tmp_path: Path) -> None:
    # Owner-password-only PDFs open in every viewer; skipping them would lose text.
    (tmp_path / "restricted.pdf").write_bytes(make_encrypted_pdf(""))
    (doc,) = load_corpus(tmp_path).documents
    assert doc.text == "\n\n".join(PAGE_TEXTS)


def test_corrupt_pdf_reports_the_exception_type_only() -> None:
    with pytest.raises(ReadFailure) as info:
        PdfFileReader().read(b"%PDF-1.7\nthis is not really a pdf secret-token")
    assert info.value.reason == "corrupt"
    assert "secret-token" not in str(info.value)


def test_docx_headings_paragraphs_and_table_in_reading_order(tmp_path: Path) -> None:
    make_docx(tmp_path / "handbook.docx")
    (doc,) = load_corpus(tmp_path).documents
    assert doc.format == "docx"
    assert doc.text == (
        "# Handbook\n\n"
        "Intro paragraph before the table.\n\n"
        "Name | Role | Floor\nAda | Engineer | 3\n\n"
        "Paragraph after the table.\n\n"
        "## Vacation policy\n\n"
        "Employees get 25 days.\n\n"
        "- Ask your manager first."
    )


def test_corrupt_docx_is_skipped_as_corrupt(tmp_path: Path) -> None:
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not a zip at all")
    corpus = load_corpus(tmp_path)
    assert corpus.documents == ()
    assert [(s.id, s.reason) for s in corpus.skipped] == [("broken.docx", "corrupt")]
    assert corpus.skipped[0].detail.startswith("DOCX parser error (")


@pytest.mark.parametrize(
    ("module", "reader", "payload"),
    [("pypdf", PdfFileReader(), make_pdf()), ("docx", DocxFileReader(), b"PK")],
)
def test_missing_extra_is_a_one_line_install_hint(
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    reader: PdfFileReader | DocxFileReader,
    payload: bytes,
) -> None:
    # A None entry in sys.modules makes `import module` raise ImportError.
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtraError) as info:
        reader.read(payload)
    message = str(info.value)
    assert "\n" not in message
    assert message.endswith(f"Install it with: {INSTALL_HINT}")


def test_missing_extra_in_a_folder_is_a_reported_skip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    (tmp_path / "a.pdf").write_bytes(make_pdf())
    (tmp_path / "b.txt").write_text("still read")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus.documents] == ["b.txt"]
    (skip,) = corpus.skipped
    assert skip.reason == "missing_extra"
    assert skip.detail == f"needs pypdf: {INSTALL_HINT}"


def test_text_reader_refuses_invalid_utf8_with_byte_offset() -> None:
    with pytest.raises(ReadFailure) as info:
        TextReader().read("caf\u00e9".encode("latin-1"))
    assert (info.value.reason, info.value.detail) == ("not_utf8", "invalid UTF-8 at byte 3")


def test_text_reader_refuses_nul_bytes() -> None:
    with pytest.raises(ReadFailure) as info:
        TextReader().read(b"abc\x00def")
    assert info.value.reason == "not_utf8"


def test_importing_ingest_chunking_and_retrieval_loads_no_optional_or_heavy_library() -> None:
    import subprocess

    code = (
        "import sys, pytest_ragproof.corpus, pytest_ragproof.corpus.chunking, "
        "pytest_ragproof.corpus.retrieval, "
        "pytest_ragproof.commands.ingest; "
        "print(sorted(m for m in ('pypdf', 'docx', 'pydantic', 'tabulate') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
