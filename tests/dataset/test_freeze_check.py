"""``ragproof freeze --check`` for CI, and ``stale_source`` for runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof import freeze, load_dataset
from pytest_ragproof.cli import main
from pytest_ragproof.dataset.freeze import stale_message, stale_source
from tests.dataset.conftest import SECRET, qa

RECORDS = [qa(id=f"c{i}", question=f"Question {i} {SECRET}?") for i in range(1, 4)]


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["freeze", "--check", *argv])
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    return code, out, err


def test_missing_frozen_file_is_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _jsonl(tmp_path / "dataset.jsonl", RECORDS)
    code, out, err = _check([str(src)], capsys)
    assert code == 1 and out == ""
    assert err == (
        f"ragproof freeze --check: {tmp_path / 'dataset.frozen.json'} does not exist; "
        f"the frozen file is stale: run ragproof freeze {src}\n"
    )
    assert not (tmp_path / "dataset.frozen.json").exists()  # --check writes nothing


def test_current_frozen_file_is_one_ok_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _jsonl(tmp_path / "dataset.jsonl", RECORDS)
    frozen = freeze(src)
    before = frozen.read_bytes()
    code, out, err = _check([str(src)], capsys)
    sha = load_dataset(frozen).sha256
    assert (code, err) == (0, "")
    assert out == (
        f"ragproof freeze --check: {frozen} is current with {src} (3 case(s), sha256 {sha[:12]})\n"
    )
    assert frozen.read_bytes() == before


def test_changed_source_is_stale_with_the_changed_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _jsonl(tmp_path / "dataset.jsonl", RECORDS)
    frozen = freeze(src)
    edited = [RECORDS[0], qa(id="c2", question=f"Edited {SECRET}?"), qa(id="c9")]
    _jsonl(src, edited)
    code, _, err = _check([str(src)], capsys)
    assert code == 1
    assert err == (
        f"ragproof freeze --check: {frozen} does not match {src} (changed: 'c2'; added: 'c9'; "
        f"removed: 'c3'); the frozen file is stale: run ragproof freeze {src}\n"
    )


def test_a_modified_frozen_file_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _jsonl(tmp_path / "dataset.jsonl", RECORDS)
    frozen = freeze(src)
    frozen.write_text(frozen.read_text(encoding="utf-8").replace("Question 1", "Question 7"))
    code, _, err = _check([str(src)], capsys)
    assert code == 1
    assert err.startswith(
        f"ragproof freeze --check: {frozen} does not verify: its cases differ from their "
        "digests (changed: 'c1'): the file was modified after freezing; "
    )
    assert err.endswith(f"the frozen file is stale: run ragproof freeze {src}\n")


def test_the_rerun_command_keeps_output_and_field_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "my cases.csv"
    src.write_text("Query,Kind\nWhat?,unanswerable\n", encoding="utf-8")
    out_path = tmp_path / "ci" / "x.frozen.json"
    argv = [str(src), "-o", str(out_path), "--map", "Query=question", "--map", "Kind=kind"]
    code, _, err = _check(argv, capsys)
    assert code == 1
    assert err.endswith(
        f"run ragproof freeze '{src}' -o {out_path} --map Query=question --map Kind=kind\n"
    )
    assert main(["freeze", *argv]) == 0
    capsys.readouterr()
    assert _check(argv, capsys)[0] == 0


def test_an_invalid_source_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _jsonl(tmp_path / "dataset.jsonl", [qa(kind="essay")])
    code, _, err = _check([str(src)], capsys)
    assert code == 1 and "field 'kind' must be" in err and "stale" not in err


def test_stale_source_finds_a_same_stem_jsonl_that_differs(
    tmp_path: Path, write_jsonl: Callable[..., Path]
) -> None:
    src = _jsonl(tmp_path / "cases.jsonl", RECORDS)
    frozen = freeze(src)
    assert stale_source(frozen) is None
    assert stale_source(frozen, load_dataset(frozen)) is None
    # the same cases written differently are not stale
    src.write_text("\n".join(json.dumps(dict(reversed(r.items()))) for r in RECORDS) + "\n")
    assert stale_source(frozen) is None
    _jsonl(src, RECORDS[:2])
    assert stale_source(frozen) == src
    assert stale_source(frozen, load_dataset(frozen)) == src
    assert stale_message(str(src)) == f"the frozen file is stale: run ragproof freeze {src}"


def test_stale_source_is_none_without_a_loadable_same_stem_jsonl(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "cases.jsonl", RECORDS)
    frozen = freeze(src, tmp_path / "other.frozen.json")
    assert stale_source(frozen) is None  # no other.jsonl
    bad = _jsonl(tmp_path / "other.jsonl", [{"Query": "mapped with a field map"}])
    assert stale_source(frozen) is None, bad  # not loadable as it is: not claimed stale
    plain = _jsonl(tmp_path / "plain.jsonl", RECORDS)
    assert stale_source(plain) is None  # not a .frozen.json path
