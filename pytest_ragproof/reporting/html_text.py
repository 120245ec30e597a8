"""How much of a case's text the HTML report embeds.

An endpoint allowed a large response (``--ragproof-endpoint-max-bytes``) can answer
megabytes; embedded whole, 50 such answers made a 524 MB page. The report embeds at
most :data:`~pytest_ragproof.defaults.REPORT_TEXT_CHARS` characters of one text field
(:data:`~pytest_ragproof.defaults.REPORT_CONTEXT_CHARS` of a retrieved context's text):
a longer one becomes ``{"cut": first characters, "chars": its length, "note": ...}``,
which the page's script draws as the text followed by the note (shortened from how
many characters, and where the whole text is: the results JSON, which is never cut).

The cut is at a character (code point) boundary, so it never splits a character
written as two UTF-16 units. Only the kept characters are copied: the full text is
never copied, joined or escaped while the page is built.
"""

from __future__ import annotations

from typing import Any

from pytest_ragproof.defaults import REPORT_TEXT_CHARS

__all__ = ["Bound", "full_text_place"]


def full_text_place(source: str | None) -> str:
    """Where the whole text of a shortened field is, in the words of the note."""
    if source:
        return f"the full text is in the results JSON {source}"
    return (
        "the full text is in the results JSON (this run wrote none: "
        "--ragproof-report=PATH writes it)"
    )


class Bound:
    """Shortens the text fields of one report, each note naming ``place``."""

    def __init__(self, place: str) -> None:
        self.place = place

    def __call__(self, value: Any, limit: int = REPORT_TEXT_CHARS) -> Any:
        """``value`` as text, or its first ``limit`` characters with a note; None stays None."""
        if value is None:
            return None
        text = value if isinstance(value, str) else str(value)
        if len(text) <= limit:
            return text
        return {
            "cut": text[:limit],
            "chars": len(text),
            "note": f"shortened from {len(text):,} characters to the first {limit:,}; {self.place}",
        }
