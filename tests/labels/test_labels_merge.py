"""``ragproof labels merge``: join reviewers' files, duplicates once, time order, refusals,
agreement between people."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.labels import Label, append_label, read_labels

DIGEST = "sha256:" + "d" * 64


def lab(case_id: str, verdict: float | None, reviewer: str, time: str) -> Label:
    return Label(None, case_id, "rag", DIGEST, "faithfulness", verdict, reviewer, time)


def write(path: Path, labels: list[Label]) -> Path:
    for label in labels:
        append_label(path, label)
    return path


T1, T2, T3 = "2026-12-01T09:00:00Z", "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"


def test_merge_orders_by_time_then_file_and_keeps_duplicates_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ana = write(tmp_path / "ana.jsonl", [lab("q1", 1, "ana", T1), lab("q2", 0, "ana", T3)])
    bob = write(
        tmp_path / "bob.jsonl",
        [lab("q1", 0, "bob", T2), lab("q2", 0, "bob", T1), lab("q1", 1, "ana", T1)],
    )
    out = tmp_path / "labels.jsonl"
    assert main(["labels", "merge", str(ana), str(bob), "-o", str(out)]) == 0
    merged = read_labels(out)
    assert [(x.reviewer, x.case_id, x.time) for x in merged] == [
        ("ana", "q1", T1),  # ana's file first at equal times
        ("bob", "q2", T1),
        ("bob", "q1", T2),
        ("ana", "q2", T3),
    ]
    printed = capsys.readouterr().out
    assert f"wrote {out}: 4 label(s) from 2 file(s) (1 exact duplicate(s) kept once)" in printed
    # q1: 1 vs 0, q2: 0 vs 0 -> po 1/2; pe = 1/2 * 0 + 1/2 * 1 = 1/2; κ = 0
    assert "faithfulness  ana, bob     2              Cohen's κ    0.000" in printed
    assert out.read_text(encoding="utf-8") == "".join(x.to_line() for x in merged)


def test_an_undo_stays_after_what_it_withdraws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(tmp_path / "a.jsonl", [lab("q1", 1, "ana", T1), lab("q1", None, "ana", T2)])
    second = write(tmp_path / "b.jsonl", [lab("q1", 0, "bob", T1)])
    out = tmp_path / "o.jsonl"
    assert main(["labels", "merge", str(first), str(second), "-o", str(out)]) == 0
    assert [x.verdict for x in read_labels(out)] == [1, 0, None]
    assert "— (one reviewer only)" in capsys.readouterr().out  # ana withdrew hers


def test_three_reviewers_get_krippendorffs_alpha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import krippendorff

    votes: dict[str, list[int | None]] = {"ana": [1, 0, 1], "bob": [1, 0, 0], "carl": [1, 1, None]}
    files = []
    for name, row in votes.items():
        labels = [lab(f"q{i}", v, name, T1) for i, v in enumerate(row) if v is not None]
        files.append(str(write(tmp_path / f"{name}.jsonl", labels)))
    assert main(["labels", "merge", *files, "-o", str(tmp_path / "o.jsonl")]) == 0
    nan = float("nan")
    alpha = krippendorff.alpha(
        reliability_data=[[nan if v is None else v for v in row] for row in votes.values()],
        level_of_measurement="nominal",
    )
    assert round(alpha, 3) == round(1 / 15, 3)  # by hand: see test_labels_agreement.py
    assert f"Krippendorff's α (nominal)  {alpha:.3f}" in capsys.readouterr().out


def test_merge_refuses_to_overwrite_an_input_or_a_foreign_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ana = write(tmp_path / "ana.jsonl", [lab("q1", 1, "ana", T1)])
    before = ana.read_bytes()
    assert main(["labels", "merge", str(ana), "-o", str(tmp_path / "." / "ana.jsonl")]) == 2
    assert "is one of the files to join" in capsys.readouterr().err
    assert ana.read_bytes() == before
    foreign = tmp_path / "notes.jsonl"
    foreign.write_text('{"mine": true}\n', encoding="utf-8")
    assert main(["labels", "merge", str(ana), "-o", str(foreign)]) == 2
    assert "is not a labels file; ragproof will not replace it" in capsys.readouterr().err
    assert foreign.read_text(encoding="utf-8") == '{"mine": true}\n'
    assert main(["labels", "merge", str(ana), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    # An earlier merge's output is a labels file: it may be replaced.
    out = tmp_path / "joined.jsonl"
    assert main(["labels", "merge", str(ana), "-o", str(out)]) == 0
    assert main(["labels", "merge", str(ana), "-o", str(out)]) == 0
    assert capsys.readouterr().out.count("replaced") == 1


def test_a_bad_input_names_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ana = write(tmp_path / "ana.jsonl", [lab("q1", 1, "ana", T1)])
    with ana.open("a", encoding="utf-8") as fh:
        fh.write("<<<<<<< HEAD\n")
    out = tmp_path / "o.jsonl"
    assert main(["labels", "merge", str(ana), "-o", str(out)]) == 2
    assert f"{ana}, line 2: not a JSON object (invalid JSON)" in capsys.readouterr().err
    assert not out.exists()
    assert main(["labels"]) == 2
    assert "give an action" in capsys.readouterr().err
