"""The labels file (``ragproof.label/1``): its line, reading, appending, refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ragproof.errors import LabelError
from pytest_ragproof.labels import (
    ClaimVerdict,
    Label,
    append_label,
    case_digest,
    label_for,
    read_labels,
    write_labels,
)
from tests.labels.records import SHA, case, results

ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "b" * 64


def label(**changes: object) -> Label:
    fields: dict[str, object] = {
        "dataset_sha256": SHA,
        "case_id": "q1",
        "pipeline": "rag",
        "digest": DIGEST,
        "metric": "faithfulness",
        "verdict": 1,
        "reviewer": "ana",
        "time": "2026-12-02T10:00:00Z",
    }
    fields.update(changes)
    return Label(**fields)  # type: ignore[arg-type]


def test_a_label_line_has_the_fixed_key_order_and_leaves_absent_options_out() -> None:
    line = label().to_line()
    assert line.endswith("\n") and line.count("\n") == 1
    assert list(json.loads(line)) == [
        "format", "dataset_sha256", "case_id", "pipeline", "digest", "metric", "verdict",
        "reviewer", "time",
    ]  # fmt: skip
    full = label(claims=(ClaimVerdict(2, "unsupported"),), note="zwei Sätze\nsind hier")
    data = json.loads(full.to_line())
    assert list(data)[6:] == ["verdict", "claims", "note", "reviewer", "time"]
    assert data["claims"] == [{"index": 2, "verdict": "unsupported"}]
    assert data["format"] == "ragproof.label/1"
    assert "Sätze" in full.to_line()  # UTF-8, not \u escapes
    assert Label.from_dict(data) == full


def test_a_whole_number_verdict_is_written_as_0_or_1() -> None:
    assert label(verdict=1.0).verdict == 1
    assert isinstance(label(verdict=1.0).verdict, int)
    assert '"verdict": 0,' in label(verdict=0.0).to_line()
    assert label(verdict=0.25).verdict == 0.25


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"verdict": 1.5}, "verdict"),
        ({"verdict": True}, "verdict"),
        ({"verdict": float("nan")}, "verdict"),
        ({"verdict": "yes"}, "verdict"),
        ({"metric": "hit@1"}, "metric"),
        ({"digest": "b" * 64}, "digest"),
        ({"dataset_sha256": "XYZ"}, "dataset_sha256"),
        ({"reviewer": ""}, "reviewer"),
        ({"reviewer": "a\nb"}, "reviewer"),
        ({"case_id": 3}, "case_id"),
        ({"time": "2026-12-02 10:00"}, "time"),
        ({"metric": "context_recall", "claims": (ClaimVerdict(1, "supported"),)}, "claims"),
        ({"verdict": None, "claims": (ClaimVerdict(1, "supported"),)}, "claims"),
        ({"claims": (ClaimVerdict(1, "supported"), ClaimVerdict(1, "unsupported"))}, "claims"),
    ],
)
def test_the_constructor_refuses_what_the_reader_would(
    changes: dict[str, object], field: str
) -> None:
    with pytest.raises(LabelError, match=f"field '{field}'"):
        label(**changes)


def test_a_claim_index_counts_from_1() -> None:
    with pytest.raises(LabelError, match=r"claims.index"):
        ClaimVerdict(0, "supported")
    with pytest.raises(LabelError, match=r"claims.verdict"):
        ClaimVerdict(1, "maybe")  # type: ignore[arg-type]


def test_append_then_read_keeps_file_order_and_withdrawals(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    first, undo, again = label(), label(verdict=None), label(verdict=0, note="n")
    for item in (first, undo, again):
        append_label(path, item)
    assert read_labels(path) == [first, undo, again]
    assert path.read_text(encoding="utf-8") == "".join(x.to_line() for x in (first, undo, again))


def test_a_new_file_gets_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        append_label(tmp_path / "labels.jsonl", label())
    finally:
        os.umask(old)
    assert (tmp_path / "labels.jsonl").stat().st_mode & 0o777 == 0o640


def test_no_folder_is_created(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="its folder exists"):
        append_label(tmp_path / "missing" / "labels.jsonl", label())
    assert not (tmp_path / "missing").exists()


def test_a_cut_off_last_line_is_refused_with_its_number_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    whole = label().to_line() + label(case_id="q2").to_line()
    path.write_text(whole + label(case_id="q3").to_line()[:40], encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(LabelError) as caught:
        append_label(path, label(case_id="q4"))
    message = str(caught.value)
    assert f"{path}, line 3: the last line has no newline" in message
    assert "Fix: if that line is a complete label, add the newline" in message
    assert path.read_bytes() == before  # never repaired, never appended
    with pytest.raises(LabelError, match=r"line 3: not a JSON object.*cut off"):
        read_labels(path)


def test_a_complete_last_line_without_newline_is_read_but_not_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(label().to_line().rstrip("\n"), encoding="utf-8")
    assert read_labels(path) == [label()]
    with pytest.raises(LabelError, match="line 1: the last line has no newline"):
        append_label(path, label(case_id="q2"))


def test_appending_to_a_file_that_is_not_a_labels_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"format": "ragproof.results/1"}\n', encoding="utf-8")
    with pytest.raises(LabelError, match="is not a labels file"):
        append_label(path, label())
    assert path.read_text(encoding="utf-8") == '{"format": "ragproof.results/1"}\n'


SECRET = "the patient's secret diagnosis"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", r"line 2: not a JSON object \(invalid JSON\)\. Fix: one JSON object"),
        ("<<<<<<< HEAD", "line 2: not a JSON object.*git merge conflict"),
        ('["a list"]', "line 2: expected a JSON object, got a list"),
        ('{"format": "ragproof.label/9"}', "line 2: field 'format': unknown format 'ragproof.l"),
        (
            json.dumps({**label().to_dict(), "extra": SECRET}),
            "line 2: unknown field\\(s\\) 'extra'",
        ),
        (
            json.dumps({k: v for k, v in label().to_dict().items() if k != "digest"}),
            "line 2: missing field\\(s\\) digest",
        ),
        (
            json.dumps({**label().to_dict(), "verdict": 2, "note": SECRET}),
            "line 2: field 'verdict': must be 0, 1, a number in \\[0, 1\\] or null, got a number",
        ),
        (
            json.dumps({**label().to_dict(), "claims": [{"index": "1"}]}),
            "line 2: field 'claims': must be a list of",
        ),
        (
            json.dumps({**label().to_dict(), "note": 5}),
            "line 2: field 'note': must be a string, got a number",
        ),
    ],
)
def test_a_bad_line_names_file_line_field_and_fix_never_its_text(
    tmp_path: Path, line: str, expected: str
) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(label(note=SECRET).to_line() + line + "\n", encoding="utf-8")
    with pytest.raises(LabelError, match=expected) as caught:
        read_labels(path)
    assert str(caught.value).startswith(f"{path}, line 2: ")
    assert "Fix: " in str(caught.value)
    assert SECRET not in str(caught.value)


def test_blank_lines_are_skipped_and_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n" + label().to_line() + "\n", encoding="utf-8")
    assert read_labels(path) == [label()]
    with pytest.raises(LabelError, match=r"nope.jsonl: cannot read the labels file"):
        read_labels(tmp_path / "nope.jsonl")


def test_write_labels_writes_a_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    write_labels(path, [label(), label(case_id="q2")])
    assert read_labels(path) == [label(), label(case_id="q2")]


APPENDER = """
import sys
from pytest_ragproof.labels import Label, append_label
path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
note = who * 5000  # long lines: a torn write would show
for i in range(n):
    append_label(path, Label(None, f"q{i}", "rag", "sha256:" + "c" * 64, "faithfulness",
                             i % 2, who, "2026-12-02T10:00:00Z", note=note))
"""


def test_two_processes_appending_at_once_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    n = 150
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(path), who, str(n)], env=env)
        for who in ("ana", "bob")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    labels = read_labels(path)
    assert len(labels) == 2 * n
    for who in ("ana", "bob"):
        mine = [x for x in labels if x.reviewer == who]
        assert [x.case_id for x in mine] == [f"q{i}" for i in range(n)]
        assert all(x.note == who * 5000 for x in mine)


def test_label_for_fills_in_dataset_digest_and_time() -> None:
    doc = results(case("q1"))
    made = label_for(doc, doc["cases"][0], "faithfulness", 0, "ana", note="n")
    assert made.dataset_sha256 == SHA
    assert made.digest == case_digest(doc["cases"][0])
    assert (made.case_id, made.pipeline, made.verdict, made.note) == ("q1", "rag", 0, "n")
    assert len(made.time) == 20 and made.time.endswith("Z")
