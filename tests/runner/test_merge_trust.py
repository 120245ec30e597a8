"""``ragproof merge`` does not trust its files: edited, truncated or malformed shards are
refused with a usage error naming the file, the case and the field (issue 30, items 2-3).

The shards are real pytest runs of :mod:`tests.runner.shard_project`; each test edits
their results files as a person or a broken tool would, then runs the real command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_ragproof.verdict.shard import shard_of
from tests.pytester_projects import resigned
from tests.runner.shard_project import document, merge, run_shards, shard_project

__all__ = ["shard_project"]  # the fixture, imported for the tests below

Doc = dict[str, Any]


def _edit(
    project: pytest.Pytester, src: str, dst: str, change: Callable[[Doc], Any], *, digest: bool
) -> str:
    """``dst``: ``src`` changed by ``change``; its digest computed again unless ``digest``
    (keeping the written one): a re-digested edit is found by the checks of its data."""
    doc = document(project.path / src)
    change(doc)
    if not digest:
        doc["digest"] = resigned(doc)
    (project.path / dst).write_text(json.dumps(doc), encoding="utf-8")
    return dst


def _qa(doc: Doc) -> Doc:
    case: Doc = next(c for c in doc["cases"] if c["kind"] == "qa")
    return case


def _refused(capsys: pytest.CaptureFixture[str], files: list[str], *parts: str) -> None:
    code, out, err = merge(capsys, files)
    assert code == 2, out + err
    assert err.startswith("ragproof merge: error: "), err
    for part in parts:
        assert part in err, err
    assert "Traceback" not in err


def test_merge_refuses_edited_shards(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 2)
    assert merge(capsys, ["shard-1.json", "shard-2.json"])[0] == 0  # as written: accepted
    one = document(shard_project.path / "shard-1.json")
    qa_id = _qa(one)["id"]

    def zero_hit(doc: Doc) -> None:
        _qa(doc)["metrics"]["hit@5"] = 0  # status stays "passed"

    # Re-digested (anyone can compute the digest again), the status is recomputed from the
    # metrics and the run's case thresholds; with its digest, any edit of the cases is found.
    _edit(shard_project, "shard-1.json", "e.json", zero_hit, digest=False)
    _refused(
        capsys,
        ["e.json", "shard-2.json"],
        f"e.json: case {qa_id} (cases[",
        "field status: 'passed' but its metrics miss qa:hit@5>=1: hit@5 = 0",
    )

    # A case duplicated inside one shard.
    _edit(
        shard_project,
        "shard-1.json",
        "dup.json",
        lambda d: d["cases"].append(dict(d["cases"][0])),
        digest=False,
    )
    first = one["cases"][0]["id"]
    _refused(capsys, ["dup.json", "shard-2.json"], f"dup.json: case {first}", "appears twice")

    # A case renamed: not a case of the dataset (or not of this shard).
    def rename(doc: Doc) -> None:
        case = _qa(doc)
        case["id"], case["nodeid"] = "qa-99", case["nodeid"].replace(case["id"], "qa-99")

    _edit(shard_project, "shard-1.json", "renamed.json", rename, digest=False)
    _refused(capsys, ["renamed.json", "shard-2.json"], "renamed.json: case qa-99", "field id:")
    # Without the dataset at hand the ids are not checked against it, and merge says so.
    dataset = shard_project.path / "cases.frozen.json"
    dataset.rename(shard_project.path / "elsewhere.json")
    code, _, err = merge(capsys, ["shard-1.json", "shard-2.json"])
    assert code == 0, err
    assert "ragproof merge: note: case ids not checked against dataset cases.frozen.json" in err
    (shard_project.path / "elsewhere.json").rename(dataset)

    # A value outside the metric's range.
    def five(doc: Doc) -> None:
        _qa(doc)["metrics"]["recall@5"] = 5.0

    _edit(shard_project, "shard-1.json", "five.json", five, digest=False)
    _refused(
        capsys,
        ["five.json", "shard-2.json"],
        f"five.json: case {qa_id}",
        "field metrics.recall@5: 5 is outside the metric's range (between 0 and 1)",
    )

    assert set(one["digest"]) == {"sha256", "covers"}
    _edit(shard_project, "shard-1.json", "e.json", zero_hit, digest=True)
    _refused(capsys, ["e.json", "shard-2.json"], "e.json: field digest:", "edited or truncated")


def test_merge_refuses_relabelled_shards(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 3)

    def as_third(doc: Doc) -> None:
        doc["run"]["shard"]["k"] = 3

    # Re-digested after the edit: the cases' shard gives it away.
    _edit(shard_project, "shard-1.json", "relabelled.json", as_third, digest=False)
    doc = document(shard_project.path / "shard-1.json")
    owned = [c["id"] for c in doc["cases"]]
    assert all(shard_of("cases.frozen.json", cid, 3) == 1 for cid in owned)
    why = (
        f"relabelled.json: case {owned[0]} (cases[0]), field id: belongs to shard 1/3, not to "
        "the file's shard 3/3"
    )
    # Shard 3 given twice (once relabelled), or the relabelled file in place of shard 1.
    _refused(capsys, ["shard-2.json", "shard-3.json", "relabelled.json"], why)
    _refused(capsys, ["shard-2.json", "relabelled.json"], why)


# Each change a crash (ValueError, TypeError, AttributeError) before the schema check.
MALFORMED: list[tuple[Callable[[Doc], Any], str]] = [
    (
        lambda d: _qa(d)["metrics"].update({"hit@5": float("nan")}),
        "field metrics.hit@5: Input should be a finite number, got nan",
    ),
    (
        lambda d: _qa(d)["metrics"].update({"mrr": "0.5"}),
        "field metrics.mrr: Input should be a valid number, got a string",
    ),
    (lambda d: d.update({"cases": "x"}), "field cases: Input should be a valid list"),
    (lambda d: d["cases"].insert(0, None), "cases[0], field the entry: should be an object"),
    (
        lambda d: _qa(d).update({"metrics": [1, 2]}),
        "field metrics: Input should be a valid dictionary, got a list",
    ),
    (
        lambda d: d["run"].update({"shard": "1/2"}),
        "field run.shard: should be an object, got a string",
    ),
    (lambda d: d["run"].pop("population"), "field run.population: missing"),
]


def test_merge_refuses_malformed_shards(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 2)
    for change, message in MALFORMED:
        _edit(shard_project, "shard-1.json", "bad.json", change, digest=False)
        _refused(capsys, ["shard-2.json", "bad.json"], "bad.json: ", message)


def test_merge_output_to_a_folder_is_refused(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 2)
    (shard_project.path / "out").mkdir()
    code, _, err = merge(capsys, ["shard-1.json", "shard-2.json"], "-o", "out")
    assert code == 2 and "-o out is a folder; give a file path such as out/results.json" in err
    assert list((shard_project.path / "out").iterdir()) == []
