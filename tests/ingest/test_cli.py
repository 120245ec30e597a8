"""``ragproof ingest`` through ``cli.main``: output, exit codes, usage errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ragproof import corpus as ingest
from pytest_ragproof.cli import main
from pytest_ragproof.commands import ingest as ingest_command
from pytest_ragproof.corpus import chunking

from ._files import make_pdf
from .test_loader import build_mixed_corpus


def test_mixed_corpus_table_and_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_mixed_corpus(tmp_path)
    code = main(["ingest", "--corpus", str(tmp_path), "--max-file-bytes", "100000"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "read: 4 document(s); skipped: 9 path(s)" in out
    lines = out.splitlines()
    row = next(line.split() for line in lines if line.startswith("locked.pdf"))
    assert row[:2] == ["locked.pdf", "encrypted"]
    row = next(line.split() for line in lines if line.startswith("big.txt"))
    assert row[:2] == ["big.txt", "too_large"]
    total = next(line.split() for line in lines if line.startswith("total"))
    assert total[:2] == ["total", "4"]
    assert err == ""
    # Document text never reaches the report.
    assert "Welcome" not in out and "apples" not in out


def test_chunk_counts_follow_the_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "long.txt").write_text("A sentence of some length here. " * 100)
    argv = ["ingest", "--corpus", str(tmp_path / "long.txt"), "--chunk-size", "200"]
    assert main([*argv, "--chunk-overlap", "0"]) == 0
    out = capsys.readouterr().out
    doc = ingest.load_corpus(tmp_path).documents[0]
    expected = len(chunking.chunk_document(doc, chunk_size=200, chunk_overlap=0))
    assert expected > 10
    row = next(line.split() for line in out.splitlines() if line.startswith("long.txt"))
    assert row == ["long.txt", "text", "3200", "3200", str(expected)]
    assert "chunk_size=200 chunk_overlap=0" in out


def test_nothing_usable_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.png").write_bytes(b"x")
    assert main(["ingest", "--corpus", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "a.png" in out and "unknown_extension" in out
    assert "nothing usable" in err


def test_missing_path_is_a_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", "--corpus", str(tmp_path / "missing")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"ragproof ingest: error: corpus path not found: {tmp_path / 'missing'}\n"


def test_overlap_over_half_the_size_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["ingest", "--corpus", str(tmp_path), "--chunk-size", "10", "--chunk-overlap", "6"]
    assert main(argv) == 2
    assert "chunk_overlap must be between 0 and chunk_size // 2" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra", [["--chunk-size", "0"], ["--max-file-bytes", "ten"], ["--chunk-overlap", "-1"], []]
)
def test_bad_arguments_exit_2_through_argparse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    argv = ["ingest", *(["--corpus", str(tmp_path)] if extra else []), *extra]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: ragproof ingest" in capsys.readouterr().err


def test_missing_extra_prints_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    (tmp_path / "a.pdf").write_bytes(make_pdf())
    assert main(["ingest", "--corpus", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "missing_extra" in out
    assert "Install it with: pip install 'pytest-ragproof[ingest]'" in err


def test_command_defaults_mirror_the_library() -> None:
    assert ingest_command.DEFAULT_MAX_FILE_BYTES == ingest.DEFAULT_MAX_FILE_BYTES
    assert ingest_command.DEFAULT_CHUNK_SIZE == chunking.DEFAULT_CHUNK_SIZE


def test_file_names_with_control_characters_stay_on_one_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "two\nlines.txt").write_text("ok")
    assert main(["ingest", "--corpus", str(tmp_path)]) == 0
    assert "two\\nlines.txt" in capsys.readouterr().out


def test_the_corpus_is_positional_like_the_other_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("Some text here.\n", encoding="utf-8")
    assert main(["ingest", str(tmp_path)]) == 0
    positional = capsys.readouterr().out
    assert main(["ingest", "--corpus", str(tmp_path)]) == 0
    assert capsys.readouterr().out == positional
    assert f"corpus: {tmp_path}\n" in positional and "read: 1 document(s)" in positional


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "one of the arguments PATH --corpus is required"),
        (["a", "--corpus", "b"], "argument --corpus: not allowed with argument PATH"),
    ],
)
def test_the_corpus_is_given_once(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["ingest", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: ragproof ingest" in err and f"ragproof ingest: error: {message}" in err


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"ragproof {version('pytest-ragproof')}\n"
