"""``ragproof history add`` decides each file's verdict from its cases and settings, as
``ragproof merge`` does, instead of taking the file's ``passed`` flag (issue 40.5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.results.document import write_results
from tests.history.runs import document
from tests.pytester_projects import resigned


def _add(capsys: pytest.CaptureFixture[str], path: Path, store: Path) -> tuple[int, str, str]:
    code = main(["history", "add", str(path), "--store", str(store)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_failed_run_relabelled_passed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc: dict[str, Any] = document(missing={f"qa-{n:03d}" for n in range(1, 9)})
    assert doc["passed"] is False
    assert sum(c["status"] == "failed" for c in doc["cases"]) == 8
    honest = tmp_path / "honest.json"
    write_results(doc, honest)
    doc = json.loads(honest.read_text())
    doc["passed"] = True
    doc["digest"] = resigned(doc)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))

    store = tmp_path / "h.sqlite"
    code, _, err = _add(capsys, edited, store)
    assert code == 2
    assert f"{edited}: field passed: true but its cases and the settings it recorded " in err
    assert "give a failed run (8 case(s) failed or errored)" in err
    assert not store.exists()

    code, out, _ = _add(capsys, honest, store)
    assert code == 0 and "added run" in out
    code, out, _ = (main(["history", "list", "--store", str(store)]), *capsys.readouterr())
    assert code == 0 and "FAILED" in out


def test_a_passed_run_relabelled_failed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc: dict[str, Any] = document()
    assert doc["passed"] is True
    doc["passed"] = False
    doc["digest"] = resigned(doc)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    code, _, err = _add(capsys, edited, tmp_path / "h.sqlite")
    assert code == 2
    assert "field passed: false but its cases and the settings it recorded give a passed run" in err
