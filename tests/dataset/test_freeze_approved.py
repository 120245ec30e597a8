"""``ragproof freeze --approved-only`` and the ``edited`` review status."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.dataset.freeze import stale_source
from pytest_ragproof.dataset.io import load_dataset
from tests.dataset.conftest import qa

STATUSES = {
    "a": "approved",
    "b": "edited",
    "c": "pending",
    "d": "rejected",
    "e": None,
    "f": "pending",
    "g": "approved",
}


def records() -> list[dict[str, object]]:
    out = []
    for cid, status in STATUSES.items():
        record = qa(id=cid, question=f"Question {cid}?")
        if status is not None:
            record["review_status"] = status
        out.append(record)
    return out


def test_only_approved_and_edited_cases_are_frozen_with_counts_per_status(
    write_jsonl: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(records())
    assert main(["freeze", str(src), "--approved-only"]) == 0
    out = capsys.readouterr()
    frozen = tmp_path / "cases.frozen.json"
    assert "froze 3 case(s) into" in out.out
    assert "left out 1 rejected case(s)\n" in out.out
    assert "left out 2 pending case(s) (--approved-only)\n" in out.out
    assert "left out 1 case(s) without a review_status (--approved-only)\n" in out.out
    assert "pending review" not in out.err  # nothing pending was frozen
    dataset = load_dataset(frozen)
    assert dataset.frozen
    assert [(c.id, c.review_status) for c in dataset.cases] == [
        ("a", "approved"),
        ("b", "edited"),
        ("g", "approved"),
    ]
    # The same hash as freezing a file of those three cases only.
    only = write_jsonl([r for r in records() if r["id"] in ("a", "b", "g")], name="only.jsonl")
    assert main(["freeze", str(only)]) == 0
    assert load_dataset(tmp_path / "only.frozen.json").sha256 == dataset.sha256


def test_check_and_the_runs_stale_warning_know_an_approved_only_freeze(
    write_jsonl: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(records())
    assert main(["freeze", str(src), "--approved-only"]) == 0
    frozen = tmp_path / "cases.frozen.json"
    assert main(["freeze", "--check", str(src), "--approved-only"]) == 0
    assert "is current with" in capsys.readouterr().out
    assert main(["freeze", "--check", str(src)]) == 1
    assert "added: 'c', 'e', 'f'" in capsys.readouterr().err
    assert stale_source(frozen) is None
    # Approving one more case makes the frozen file stale, and --check says how to refreeze.
    changed = [{**r, "review_status": "approved"} if r["id"] == "c" else r for r in records()]
    src.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
    assert stale_source(frozen) == src
    assert main(["freeze", "--check", str(src), "--approved-only"]) == 1
    err = capsys.readouterr().err
    assert "(added: 'c')" in err
    assert f"run ragproof freeze {src} --approved-only" in err


def test_nothing_approved_is_an_error_naming_the_counts(
    write_jsonl: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl([qa(id="x", review_status="pending"), qa(id="y")])
    assert main(["freeze", str(src), "--approved-only"]) == 1
    err = capsys.readouterr().err
    assert "no case is approved or edited, so --approved-only would freeze nothing" in err
    assert "(1 none, 1 pending)" in err
    assert not (tmp_path / "cases.frozen.json").exists()


def test_edited_is_a_review_status_like_approved(
    write_jsonl: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl([qa(id="x", review_status="edited")])
    assert main(["validate", str(src)]) == 0
    assert "edited" in capsys.readouterr().out
    assert main(["freeze", str(src), "--require-review"]) == 0
    assert load_dataset(tmp_path / "cases.frozen.json").cases[0].review_status == "edited"
    bad = write_jsonl([qa(id="x", review_status="maybe")], name="bad.jsonl")
    assert main(["validate", str(bad)]) == 1
