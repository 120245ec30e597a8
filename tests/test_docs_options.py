"""docs/configuration.md lists every option exactly as the option table declares it."""

from __future__ import annotations

from pathlib import Path

from pytest_ragproof.plugin.options import OPTIONS

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def test_the_options_table_matches_the_declarations() -> None:
    text = DOC.read_text(encoding="utf-8")
    for o in OPTIONS:
        flag = f"`{o.cli}`" + (f" {o.metavar}" if o.metavar and not o.flag else "")
        default = "" if o.default in (None, False) else f"`{o.default}`"
        row = f"| {flag} | `{o.ini}` ({o.ini_type}) | {default} | {o.help} |"
        assert row in text, f"docs/configuration.md lacks or misstates {o.cli}: {row}"
