"""A verdict from data, not from what a results file says about itself (issue 40, items 3-4).

The shards are real pytest runs of :mod:`tests.runner.shard_project`; each test edits their
files as a tool would (and computes the digest again, as anyone can), then runs the real
``ragproof merge``, a real baseline run and ``ragproof history add``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from tests.pytester_projects import behave, resigned, run
from tests.runner.shard_project import document, merge, run_shards, shard_project

__all__ = ["shard_project"]  # the fixture, imported for the tests below


def _write(project: pytest.Pytester, name: str, doc: dict[str, Any]) -> str:
    (project.path / name).write_text(json.dumps(doc), encoding="utf-8")
    return name


@pytest.mark.parametrize("how", ["deleted", "null"])
def test_a_missing_digest_is_refused_everywhere(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    run_shards(shard_project, [], 2)
    doc = document(shard_project.path / "shard-1.json")
    if how == "deleted":
        del doc["digest"]
    else:
        doc["digest"] = None
    _write(shard_project, "bare.json", doc)
    why = "bare.json: field digest: missing, but the pytest-ragproof release it names writes one"
    code, _, err = merge(capsys, ["bare.json", "shard-2.json"])
    assert code == 2 and why in err, err
    code = main(["history", "add", "bare.json", "--store", "h.sqlite"])
    assert code == 2 and why in capsys.readouterr().err
    result = run(shard_project, [], "--ragproof-baseline=bare.json")
    assert result.ret == 4
    assert "field digest: missing" in result.stderr.str()
    # A file naming a release from before digests is read (schema and ranges checked).
    doc["versions"]["pytest-ragproof"] = "0.0.9"
    _write(shard_project, "old.json", doc)
    code, out, err = merge(capsys, ["old.json", "shard-2.json"])
    assert code == 0, out + err


def test_failed_cases_relabelled_xfailed_are_refused(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    behave(shard_project, {f"qa-{i:02d}": "wrong" for i in range(10)})
    run_shards(shard_project, [], 2)
    assert merge(capsys, ["shard-1.json", "shard-2.json"])[0] == 1
    docs = [document(shard_project.path / f"shard-{k}.json") for k in (1, 2)]
    failed = 0
    for k, doc in enumerate(docs, 1):
        for case in doc["cases"]:
            if case["status"] == "failed":
                case["status"], failed = "xfailed", failed + 1
        doc["digest"] = resigned(doc)
        _write(shard_project, f"x-{k}.json", doc)
    assert failed == 10 and docs[0]["run"]["config"]["xfail_tags"] == []
    code, _, err = merge(capsys, ["x-1.json", "x-2.json"])
    assert code == 2, err
    assert "field status: 'xfailed' but no xfail tag of the run" in err
    # A passed case relabelled failed is found as well.
    doc = document(shard_project.path / "shard-1.json")
    case = next(c for c in doc["cases"] if c["status"] == "passed")
    case["status"] = "failed"
    doc["digest"] = resigned(doc)
    _write(shard_project, "f-1.json", doc)
    code, _, err = merge(capsys, ["f-1.json", "shard-2.json"])
    assert code == 2 and f"case {case['id']}" in err and "field status: 'failed'" in err, err


def test_xfail_from_a_tag_or_a_marker_still_merges(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # A user's own xfail marker (added in a conftest): recorded, so the merge accepts it.
    conftest = Path(shard_project.path / "conftest.py")
    conftest.write_text(
        conftest.read_text(encoding="utf-8") + "\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        if item.nodeid.endswith('qa-03'):\n"
        "            item.add_marker(pytest.mark.xfail(reason='known bad source'))\n",
        encoding="utf-8",
    )
    behave(shard_project, {"qa-03": "wrong"})
    run_shards(shard_project, [], 2)
    statuses = {
        c["id"]: (c["status"], c.get("xfail_reason"))
        for k in (1, 2)
        for c in document(shard_project.path / f"shard-{k}.json")["cases"]
    }
    assert statuses["qa-03"] == ("xfailed", "known bad source")
    code, out, err = merge(capsys, ["shard-1.json", "shard-2.json"])
    assert code == 0, out + err
