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


def _table_after(heading: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    body = section.split("|---|", 1)[1]  # the rows under the table's header
    return [line for line in body.splitlines() if line.startswith("| `")]


def test_the_options_table_has_one_row_per_declared_option_in_order() -> None:
    """No row for an option that is gone, none twice, in the table's (and --help's) order."""
    rows = _table_after("## All options")
    flags = [row.split("`", 2)[1] for row in rows]
    assert flags == [o.cli for o in OPTIONS]


def test_the_evaluate_keywords_table_matches_the_declarations() -> None:
    rows = _table_after("## The same settings in `evaluate()`")
    assert rows == [f"| `{o.api}` | `{o.cli}` |" for o in OPTIONS if o.api is not None]
