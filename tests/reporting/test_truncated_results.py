"""A results file cut short (a CI artifact half uploaded, a copy interrupted): every
command that reads one says which file, where its JSON ends and what to do, in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from tests.reporting.conftest import Runs, run_plugin


@pytest.fixture
def truncated(runs: Runs, tmp_path: Path) -> Path:
    runs.single()
    text = (runs.project / "single.json").read_text(encoding="utf-8")
    path = tmp_path / "results.json"
    path.write_text(text[: len(text) // 3], encoding="utf-8")
    return path


def _line_column(path: Path) -> tuple[int, int]:
    """Where the JSON decoder stops in ``path``."""
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(path.read_text(encoding="utf-8"))
    return raised.value.lineno, raised.value.colno


COMMANDS = {
    "report": ["report", "{f}", "--format", "markdown", "-o", "{tmp}/r.md"],
    "merge": ["merge", "{f}", "{f}", "-o", "{tmp}/merged.json"],
    "history add": ["history", "add", "{f}", "--store", "{tmp}/h.sqlite"],
    "review": ["review", "{f}", "--no-browser"],
    "review --labels": ["review", "{f}", "--labels", "{tmp}/l.jsonl", "--no-browser"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_truncated_results_file_is_named_with_its_line_and_column(
    command: str, truncated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.format(f=truncated, tmp=tmp_path) for a in COMMANDS[command]]
    code = main(args)
    assert code in (1, 2)
    err = capsys.readouterr().err
    line, column = _line_column(truncated)
    assert err.splitlines() == [
        f"ragproof {command.split(' -')[0]}: error: results file {truncated} is truncated: its "
        f"JSON breaks off at line {line}, column {column} (a write or copy cut off?); write it "
        "again (pytest --ragproof-report=PATH) or use an intact copy"
    ]
    # Nothing was written from it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_results_file_edited_into_invalid_json_says_where(
    truncated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truncated.write_text('{\n  "aggregates": [],\n  "cases": nope\n}\n', encoding="utf-8")
    assert main(["report", str(truncated), "--format", "markdown"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"ragproof report: error: results file {truncated} is not valid JSON at line 3, column "
        "12: Expecting value (edited by hand?); write it again (pytest --ragproof-report=PATH) "
        "or use an intact copy"
    ]


def _planted(truncated: Path, runs: Runs, how: str) -> Path:
    """The run's intact results file with a lone surrogate escape in an answer, or 100,000
    nested brackets added, or cut in half (``truncated``'s folder)."""
    text = (runs.project / "single.json").read_text(encoding="utf-8")
    if how == "surrogate":
        text = text.replace('"answer": "', '"answer": "\\ud800', 1)
    elif how == "nested":
        text = text.rstrip()[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    else:
        text = text[: len(text) // 2]
    truncated.write_text(text, encoding="utf-8")
    return truncated


WHY = {
    "surrogate": "holds a lone surrogate escape at line ",
    "nested": "its JSON nests deeper than any results file",
    "truncated": "is truncated: its JSON breaks off at line ",
}


@pytest.mark.parametrize("how", ["surrogate", "nested"])
def test_a_results_file_no_run_writes_is_one_line_for_merge(
    how: str, truncated: Path, runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _planted(truncated, runs, how)
    assert main(["merge", str(path), "-o", str(tmp_path / "merged.json")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("ragproof merge: error: ") and WHY[how] in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize("how", ["surrogate", "nested", "truncated"])
def test_a_baseline_no_run_writes_stops_the_run_before_any_case(
    how: str, truncated: Path, runs: Runs
) -> None:
    """A usage error, exit 4, one line, before any case runs (not an INTERNALERROR, not a
    gate failure after every case ran)."""
    path = _planted(truncated, runs, how)
    proc = run_plugin(runs.project, f"--ragproof-baseline={path}")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out
    assert "INTERNALERROR" not in out and "Traceback" not in out
    assert "ERROR: ragproof: " in out and WHY[how] in out
    assert " passed" not in out and " failed" not in out
