"""A results file cut short (a CI artifact half uploaded, a copy interrupted): every
command that reads one says which file, where its JSON ends and what to do, in one line."""

from __future__ import annotations

import json
import re
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


#: An integer literal longer than Python's int/str conversion takes (4,300 digits).
BIG_INT = "1" + "7" * 4_400


def _planted(truncated: Path, runs: Runs, how: str) -> Path:
    """The run's intact results file with a lone surrogate escape in an answer, or 100,000
    nested brackets added, or a case's latency an integer of 4,401 digits, or cut in half
    (``truncated``'s folder)."""
    text = (runs.project / "single.json").read_text(encoding="utf-8")
    if how == "surrogate":
        text = text.replace('"answer": "', '"answer": "\\ud800', 1)
    elif how == "nested":
        text = text.rstrip()[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    elif how == "bigint":
        before = text
        text = re.sub(r'"latency_s": [0-9.e-]+', f'"latency_s": {BIG_INT}', text, count=1)
        assert text != before
    else:
        text = text[: len(text) // 2]
    truncated.write_text(text, encoding="utf-8")
    return truncated


WHY = {
    "surrogate": "holds a lone surrogate escape at line ",
    "nested": "its JSON nests deeper than any results file",
    "bigint": "holds an integer of 4,401 digits at line ",
    "truncated": "is truncated: its JSON breaks off at line ",
}


@pytest.mark.parametrize("how", ["surrogate", "nested", "bigint"])
def test_a_results_file_no_run_writes_is_one_line_for_merge(
    how: str, truncated: Path, runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _planted(truncated, runs, how)
    assert main(["merge", str(path), "-o", str(tmp_path / "merged.json")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("ragproof merge: error: ") and WHY[how] in line
    assert str(path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("how", ["surrogate", "nested", "bigint"])
def test_a_results_file_no_run_writes_is_one_line_naming_it(
    how: str,
    command: str,
    truncated: Path,
    runs: Runs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every command that reads a results file: its usage error, one line naming the file
    and what is wrong, nothing written (not a ValueError or RecursionError traceback)."""
    path = _planted(truncated, runs, how)
    code = main([a.format(f=path, tmp=tmp_path) for a in COMMANDS[command]])
    assert code in (1, 2)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"ragproof {command.split(' -')[0]}: error: ")
    assert WHY[how] in line and str(path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize("how", ["surrogate", "nested", "bigint", "truncated"])
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
    assert "ERROR: ragproof: " in out and WHY[how] in out and path.name in out
    assert " passed" not in out and " failed" not in out
