"""Real PDF and DOCX files built by the tests themselves (fpdf2, python-docx, pypdf)."""

from __future__ import annotations

import io
from pathlib import Path

PAGE_TEXTS = (
    "Page one talks about apples.\nApples grow on trees.",
    "Page two talks about bananas.\nBananas are yellow.",
    "Page three talks about cherries.\nCherries are red.",
)


def make_pdf(pages: tuple[str, ...] = PAGE_TEXTS) -> bytes:
    """A PDF with one page per entry of ``pages`` (ASCII: the core fonts are Latin-1)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    return bytes(pdf.output())


def make_encrypted_pdf(user_password: str) -> bytes:
    """The default PDF, encrypted by pypdf's writer with ``user_password`` to open it."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf())))
    writer.encrypt(user_password, owner_password="owner-secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(path: Path) -> None:
    """Title, headings, paragraphs, a list item and a 2x3 table between two paragraphs."""
    import docx

    doc = docx.Document()
    doc.add_heading("Handbook", level=1)
    doc.add_paragraph("Intro paragraph before the table.")
    table = doc.add_table(rows=2, cols=3)
    for r, row in enumerate((("Name", "Role", "Floor"), ("Ada", "Engineer", "3"))):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_paragraph("Paragraph after the table.")
    doc.add_heading("Vacation policy", level=2)
    doc.add_paragraph("Employees get 25 days.")
    doc.add_paragraph("Ask your manager first.", style="List Bullet")
    doc.save(str(path))
