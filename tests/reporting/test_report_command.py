"""``ragproof report``: each format, to stdout and to a file, and its errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.reporting.html import render_html
from pytest_ragproof.reporting.inspectorraget_format import validate_export
from pytest_ragproof.reporting.markdown import render_markdown
from pytest_ragproof.results.document import read_results
from tests.reporting.conftest import Runs


@pytest.fixture
def results_file(runs: Runs) -> Path:
    runs.single()
    return runs.project / "single.json"


def test_html_to_stdout_and_to_a_file(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(results_file), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert out == render_html(read_results(results_file))
    target = tmp_path / "out" / "report.html"
    assert main(["report", str(results_file), "-f", "html", "-o", str(target)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"html report written to {target}" in captured.err
    assert target.read_text(encoding="utf-8") == out


def test_inspectorraget_export(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "ir.json"
    assert main(["report", str(results_file), "--format", "inspectorraget", "-o", str(target)]) == 0
    err = capsys.readouterr().err
    assert not target.exists()
    counts = {}
    for kind in ("qa", "unanswerable", "injection"):
        path = tmp_path / f"ir.{kind}.json"
        assert f"inspectorraget report written to {path}" in err
        export = json.loads(path.read_text(encoding="utf-8"))
        validate_export(export)
        assert {t["category"] for t in export["tasks"]} == {kind}
        counts[kind] = len(export["tasks"])
        types = {m["name"]: m["type"] for m in export["metrics"]}
        assert [n for n, t in types.items() if t == "text"] == [
            "failed_thresholds",
            "retrieved_ids",
        ]
    assert counts == {"qa": 4, "unanswerable": 1, "injection": 1}
    qa = json.loads((tmp_path / "ir.qa.json").read_text(encoding="utf-8"))
    types = {m["name"]: m["type"] for m in qa["metrics"]}
    assert types["hit@5"] == "categorical" and types["recall@5"] == "numerical"
    # --kind picks the cases of one file, written where -o says (or to stdout)
    assert main(["report", str(results_file), "-f", "inspectorraget", "--kind", "qa"]) == 0
    qa_only = json.loads(capsys.readouterr().out)
    validate_export(qa_only)
    assert {t["category"] for t in qa_only["tasks"]} == {"qa"}
    picked = tmp_path / "picked.json"
    assert main(["report", str(results_file), "-f", "inspectorraget", "--kind", "injection",
                 "-o", str(picked)]) == 0  # fmt: skip
    assert {t["category"] for t in json.loads(picked.read_text())["tasks"]} == {"injection"}


def test_inspectorraget_of_several_kinds_to_stdout_is_refused(
    results_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(results_file), "-f", "inspectorraget"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "ragproof report: error: the run has cases of 3 kinds (qa, unanswerable, injection) "
        "and InspectorRAGet gets one file per kind: give -o OUT.json (writes OUT.qa.json, "
        "OUT.unanswerable.json, OUT.injection.json) or pick one with --kind\n"
    )


def test_markdown(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results_file)]) == 0  # markdown is the default
    out = capsys.readouterr().out
    assert out == render_markdown(read_results(results_file))
    assert "qa-distract" in out and "FAILED" in out  # the failed case and the verdict


def test_kind_is_for_inspectorraget_only(
    results_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(results_file), "-f", "html", "--kind", "qa"]) == 2
    assert "--kind applies to --format inspectorraget only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"format": "ragproof.dataset/1", "cases": []}', "is not a ragproof results file"),
        ('{"id": "a", "kind": "qa"}\n{"id": "b"}\n', "is not a ragproof results file"),
        ("[1, 2]", "is not a ragproof results file"),
        (None, "cannot read results file"),
    ],
    ids=["frozen-dataset", "jsonl", "json-array", "missing"],
)
def test_not_a_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "thing.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["report", str(path), "-f", "html"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("ragproof report: error: ") and message in lines[0]


def test_unknown_format_is_a_usage_error(results_file: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["report", str(results_file), "--format", "pdf"])
    assert info.value.code == 2


def test_console_entry_point(results_file: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ragproof", "report", str(results_file), "-f", "html"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("fmt", ["html", "markdown", "inspectorraget"])
def test_report_never_replaces_its_input_or_a_file_it_did_not_write(
    results_file: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = results_file.read_bytes()
    assert main(["report", str(results_file), "-f", fmt, "-o", str(results_file)]) == 2
    assert f"{results_file.name} is a ragproof results file" in capsys.readouterr().err
    assert results_file.read_bytes() == before
    mine = results_file.with_name("notes.txt")
    mine.write_text("mine\n", encoding="utf-8")
    kind = ["--kind", "qa"] if fmt == "inspectorraget" else []
    assert main(["report", str(results_file), "-f", fmt, *kind, "-o", str(mine)]) == 2
    assert "exists and was not written by this export" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "mine\n"
    # Its own earlier output is replaced.
    out = results_file.with_name(f"out.{fmt}")
    assert main(["report", str(results_file), "-f", fmt, *kind, "-o", str(out)]) == 0
    assert main(["report", str(results_file), "-f", fmt, *kind, "-o", str(out)]) == 0


def test_inspectorraget_refusal_checks_the_per_kind_files_it_would_write(tmp_path: Path) -> None:
    from pytest_ragproof.verdict.exports import refusal

    (tmp_path / "ir.out.qa.json").write_text('{"kind": "qa", "question": "q"}\n', encoding="utf-8")
    why = refusal("inspectorraget", tmp_path / "ir.out")
    assert why is not None and "ir.out.qa.json is a ragproof dataset" in why
