"""``ragproof init``: a starter project that passes, and that is never overwritten."""

from __future__ import annotations

import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from pytest_ragproof import load_dataset
from pytest_ragproof.cli import main
from tests.quickstart.conftest import REPO, run_python

STARTER = ("conftest.py", "cases.jsonl", "cases.frozen.json")
TEMPLATES = ("conftest.py.tmpl", "cases.jsonl.tmpl", "pytest.ini.tmpl", "pyproject.toml.tmpl")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_init_project_passes_and_a_second_init_refuses(tmp_path: Path) -> None:
    first = run_python(["-m", "pytest_ragproof", "init", "proj"], tmp_path)
    assert first.returncode == 0, first.stderr
    project = tmp_path / "proj"
    assert sorted(_snapshot(project)) == sorted([*STARTER, "pytest.ini"])
    assert "pytest proj" in first.stdout

    run = run_python(["-m", "pytest", "proj", "-p", "no:cacheprovider"], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\n=+ ragproof summary =+\n", run.stdout)
    assert "dataset cases.frozen.json: 5 case(s), frozen" in run.stdout
    assert "cases: 5 passed, 0 failed, 0 error" in run.stdout
    assert "ragproof gate FAILED" not in run.stdout

    before = _snapshot(project)
    second = run_python(["-m", "pytest_ragproof", "init", "proj"], tmp_path)
    assert second.returncode == 1
    for name in [*STARTER, "pytest.ini"]:
        assert str(Path("proj") / name) in second.stderr
    assert "refusing to overwrite" in second.stderr
    assert _snapshot(project) == before


def test_sample_dataset_is_frozen_and_covers_every_kind(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path)]) == 0
    frozen = load_dataset(tmp_path / "cases.frozen.json")
    assert frozen.frozen
    assert frozen.sha256 == load_dataset(tmp_path / "cases.jsonl").sha256
    assert {c.kind for c in frozen.cases} == {"qa", "unanswerable", "injection"}
    assert any(c.conversation_history for c in frozen.cases)


def test_one_existing_file_is_enough_to_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases.jsonl").write_text("mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"refusing to overwrite {tmp_path / 'cases.jsonl'};" in err
    assert _snapshot(tmp_path) == {"cases.jsonl": b"mine\n"}


def test_appends_to_a_pyproject_without_pytest_settings(tmp_path: Path) -> None:
    original = b'[project]\r\nname = "mine"\r\n\r\n[tool.ruff]\r\nline-length = 88'
    (tmp_path / "pyproject.toml").write_bytes(original)
    assert main(["init", str(tmp_path)]) == 0
    data = (tmp_path / "pyproject.toml").read_bytes()
    assert data.startswith(original + b"\n")  # appended, the user's bytes untouched
    parsed = tomllib.loads(data.decode())
    assert parsed["project"] == {"name": "mine"}
    options = parsed["tool"]["pytest"]["ini_options"]
    assert options["ragproof_dataset"] == ["cases.frozen.json"]
    assert options["ragproof_source_match"] == "document"
    assert not (tmp_path / "pytest.ini").exists()


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("pytest.ini", "[pytest]\n", "the whole file"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-q'\n", "[tool.pytest"),
        ("tox.ini", "[tox]\n[pytest]\naddopts = -q\n", "[pytest]"),
        ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n", "[tool:pytest]"),
    ],
)
def test_refuses_to_edit_an_existing_pytest_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, where: str
) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / name} already configures pytest ({where}" in err
    assert "ragproof_dataset" in err and "ragproof_source_match" in err
    assert "--no-config" in err
    assert _snapshot(tmp_path) == {name: content.encode()}

    # --no-config writes the starter and leaves the configuration alone.
    assert main(["init", "--no-config", str(tmp_path)]) == 0
    assert sorted(_snapshot(tmp_path)) == sorted([*STARTER, name])
    assert (tmp_path / name).read_text(encoding="utf-8") == content


def test_refuses_a_pyproject_it_cannot_append_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("tool = { black = {} }\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 1
    assert "cannot take a [tool.pytest.ini_options] table" in capsys.readouterr().err
    assert sorted(_snapshot(tmp_path)) == ["pyproject.toml"]


def test_refuses_a_file_as_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("x", encoding="utf-8")
    assert main(["init", str(target)]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_templates_are_package_data() -> None:
    folder = files("pytest_ragproof") / "templates" / "init"
    assert sorted(p.name for p in folder.iterdir()) == sorted(TEMPLATES)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = pyproject["tool"]["setuptools"]["package-data"]["pytest_ragproof"]
    assert "templates/**/*" in package_data


def test_init_in_a_subfolder_configures_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()  # a project root
    monkeypatch.chdir(tmp_path)
    assert main(["init", "tests/rag"]) == 0
    out = capsys.readouterr().out
    assert (
        "wrote tests/rag/conftest.py, tests/rag/cases.jsonl, tests/rag/cases.frozen.json, " in out
    )
    assert "  pytest   # runs the 5 sample cases" in out
    assert not (tmp_path / "tests" / "rag" / "pytest.ini").exists()
    ini = (tmp_path / "pytest.ini").read_text(encoding="utf-8")
    assert "ragproof_dataset = tests/rag/cases.frozen.json\n" in ini


def test_init_in_a_subfolder_of_a_configured_project_prints_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -q\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    monkeypatch.chdir(tmp_path / "tests")
    assert main(["init", "rag"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'pytest.ini'} already configures pytest (the whole file)" in err
    assert "ragproof_dataset = tests/rag/cases.frozen.json" in err
    assert not (tmp_path / "tests" / "rag").exists()
    assert (tmp_path / "pytest.ini").read_text(encoding="utf-8") == "[pytest]\naddopts = -q\n"
