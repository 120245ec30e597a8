"""The validate, freeze and split commands end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from tests.dataset.conftest import SECRET, qa


def test_validate_prints_counts_and_hash(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(
        [qa(id="a"), {"id": "u", "kind": "unanswerable", "question": "Q?", "split": "test"}]
    )
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "valid, 2 case(s)" in out and "not frozen" in out and "sha256: " in out
    assert "unanswerable" in out and "test" in out


def test_validate_bad_file_exits_1_without_values(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl([qa(id="a"), qa(id="b", kind="bogus")])
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "record 2, line 2" in err and SECRET not in err


def test_validate_lists_every_bad_record_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.jsonl"
    lines = [
        json.dumps(qa(id="a")),
        "",
        json.dumps(qa(id="b", kind="bogus")),  # record 2, line 3: invalid kind
        '{"id": "c", "question": "' + SECRET + '",',  # record 3, line 4: broken JSON
        json.dumps(qa(id="a")),  # record 4, line 5: duplicate of record 1
        json.dumps(qa(id="d", colour="red")),  # record 5, line 6: unknown field
        "[1]",  # record 6, line 7: not an object
        json.dumps(qa(id="e")),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "5 problem(s)" in err
    expected = [
        ("record 2, line 3", "field 'kind'"),
        ("record 3, line 4", "invalid JSON"),
        ("record 4, line 5", "same id as record 1"),
        ("record 5, line 6", "unknown field 'colour'"),
        ("record 6, line 7", "not an object"),
    ]
    listed = [line for line in err.splitlines() if line.startswith("  ")]
    assert len(listed) == len(expected)
    for line, (where, what) in zip(listed, expected, strict=True):
        assert where in line and what in line
    assert SECRET not in err


def test_validate_lists_one_problem_for_a_damaged_frozen_file(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl([qa(id="a"), qa(id="b")])
    assert main(["freeze", str(src)]) == 0
    frozen = src.with_name("cases.frozen.json")
    frozen.write_text(frozen.read_text(encoding="utf-8").replace('"a"', '"x"'), encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", str(frozen)]) == 1
    err = capsys.readouterr().err
    assert "1 problem(s)" in err and "modified after freezing" in err


def test_freeze_split_validate_workflow(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = write_jsonl([qa(id=f"q{i}") for i in range(20)])
    split = tmp_path / "split.jsonl"
    assert main(["split", str(src), "--seed", "4", "-o", str(split)]) == 0
    assert all(json.loads(line)["split"] for line in split.read_text().splitlines())
    assert main(["freeze", str(split)]) == 0
    frozen = tmp_path / "split.frozen.json"
    assert frozen.exists()
    assert main(["validate", str(frozen)]) == 0
    assert "frozen (hash verified)" in capsys.readouterr().out


def test_freeze_require_review(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl([qa(id="a", review_status="pending")])
    assert main(["freeze", str(src), "--require-review"]) == 1
    assert "pending review" in capsys.readouterr().err
    assert main(["freeze", str(src)]) == 0
    assert "still pending review" in capsys.readouterr().err


def test_csv_with_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.csv"
    path.write_text('Query,Kind,Src\nWhat?,qa,"[""a.md""]"\n', encoding="utf-8")
    args = ["validate", str(path), "--map", "Query=question", "--map", "Kind=kind"]
    assert main([*args, "--map", "Src=expected_source_ids"]) == 0
    assert main(["validate", str(path)]) == 1
    assert "explicit field map" in capsys.readouterr().err


def test_bad_map_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.csv"
    path.write_text("a\n1\n")
    assert main(["validate", str(path), "--map", "a=nonsense"]) == 1
    assert "not a case field" in capsys.readouterr().err


def test_split_says_which_cases_got_a_split_and_which_changed(
    write_jsonl: Callable[..., Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = write_jsonl([qa(id=f"q{i}") for i in range(20)])
    first = tmp_path / "first.jsonl"
    assert main(["split", str(src), "--seed", "4", "-o", str(first)]) == 0
    out = capsys.readouterr().out
    assert "20 case(s) had no split and got one" in out and "different split" not in out
    again = tmp_path / "again.jsonl"
    assert main(["split", str(first), "--seed", "4", "-o", str(again)]) == 0
    out = capsys.readouterr().out
    assert "got one" not in out and "different split" not in out  # stable: nothing moved
    not_test = sum(json.loads(line)["split"] != "test" for line in first.read_text().splitlines())
    assert 0 < not_test < 20
    everything_test = tmp_path / "test.jsonl"
    args = ["split", str(first), "--seed", "4", "--ratios", "0,0,1", "-o", str(everything_test)]
    assert main(args) == 0
    assert f"{not_test} case(s) got a different split than before" in capsys.readouterr().out


def test_freeze_of_a_bad_record_points_at_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"question": "Q?", "kind": "qa"}\n', encoding="utf-8")
    assert main(["freeze", str(src)]) == 1
    err = capsys.readouterr().err
    assert "ragproof freeze: error: " in err and "record 1, line 1" in err
    assert f"to list every bad record: ragproof validate {src}" in err
    assert not (tmp_path / "bad.frozen.json").exists()
