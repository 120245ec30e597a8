"""``ragproof merge`` gates with the configuration it runs in, not the shards' (issue 40.1).

The shards are real pytest runs of :mod:`tests.runner.shard_project` whose project
configures its gates in pyproject.toml; the tests edit the shard files as a tool would
(the recorded gates weakened, the digest computed again) and run the real merge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.verdict.recorded import config_from_record
from tests.pytester_projects import behave, resigned, run
from tests.runner.shard_project import document, merge, run_shards, shard_project

__all__ = ["shard_project"]  # the fixture, imported for the tests below

PYPROJECT = """
[tool.pytest.ini_options]
ragproof_aggregate_threshold = ["qa:recall@5>=0.9"]
ragproof_baseline = "base.json"
ragproof_fail_on_case_regression = true
"""


def _weakened(project: pytest.Pytester, k: int, **changes: Any) -> str:
    """shard-K.json with ``run.config`` edited, its settings rebuilt and the digest
    computed again (everything a tool can do), as weak-K.json."""
    doc = document(project.path / f"shard-{k}.json")
    doc["run"]["config"].update(changes)
    doc["settings"] = config_from_record(doc["run"]["config"], project.path).settings()
    doc["digest"] = resigned(doc)
    name = f"weak-{k}.json"
    (project.path / name).write_text(json.dumps(doc), encoding="utf-8")
    return name


def _configured(project: pytest.Pytester) -> None:
    (project.path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    behave(project, {})
    assert run(project, [], "--ragproof-baseline-update").ret == 0
    behave(project, {"qa-01": "wrong", "qa-08": "wrong"})


def test_weakened_gates_in_every_shard_do_not_pass_the_merge(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _configured(shard_project)
    run_shards(shard_project, [], 2)
    code, out, err = merge(capsys, ["shard-1.json", "shard-2.json"])
    assert code == 1, out + err
    assert "gated with" not in err
    assert "ragproof gate FAILED: aggregate qa:recall@5>=0.9" in out
    # Every bound deleted, the baseline dropped from the record: the project's gates hold.
    files = [_weakened(shard_project, k, aggregate_thresholds=[], baseline=None) for k in (1, 2)]
    code, out, err = merge(capsys, files)
    assert code == 1, out + err
    assert "ragproof gate FAILED: aggregate qa:recall@5>=0.9" in out
    assert "regressed" in out  # the baseline comparison of pyproject.toml's baseline
    assert (
        "ragproof merge: note: gated with the aggregate thresholds of pyproject.toml: "
        "qa:recall@5>=0.9; the files recorded none" in err
    )
    assert "gated with the baseline of pyproject.toml: base.json (" in err
    # A weaker bound is the same.
    files = [_weakened(shard_project, k, aggregate_thresholds=["qa:recall@5>=0.1"]) for k in (1, 2)]
    code, out, err = merge(capsys, files)
    assert code == 1 and "aggregate qa:recall@5>=0.9" in out, out + err
    assert "the files recorded qa:recall@5>=0.1" in err


def test_the_merges_command_line_replaces_the_ini(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _configured(shard_project)
    # The shards ran with a bound on the command line the project does not have.
    strict = "--ragproof-aggregate-threshold=qa:mrr>=0.99"
    run_shards(shard_project, [], 2, strict)
    files = ["shard-1.json", "shard-2.json"]
    code, out, err = merge(capsys, files, strict)
    assert code == 1 and "aggregate qa:mrr>=0.99" in out and "gated with" not in err, err
    # Without it the merge gates with pyproject.toml's, and says the files had another.
    code, out, err = merge(capsys, files)
    assert "aggregate qa:mrr>=0.99" not in out
    assert "gated with the aggregate thresholds of pyproject.toml: qa:recall@5>=0.9" in err
    assert "the files recorded qa:mrr>=0.99" in err
    # A case threshold of the merge decides the cases again.
    code, out, err = merge(capsys, files, strict, "--ragproof-case-threshold=qa:mrr>=1")
    assert code == 1
    assert "gated with the case thresholds of pyproject.toml and the command line" in err


def test_case_thresholds_of_the_merge_decide_each_case(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    behave(shard_project, {"qa-01": "wrong"})
    run_shards(shard_project, [], 2)
    files = ["shard-1.json", "shard-2.json"]
    bound = "--ragproof-case-threshold=qa:precision@3>=0.9"  # fails every qa case
    single = run(shard_project, [], bound, "--ragproof-report=single.json")
    code, out, err = merge(capsys, files, bound, "-o", "merged.json")
    assert code == single.ret == 1, out + err
    merged, one = (
        document(shard_project.path / "merged.json"),
        document(shard_project.path / "single.json"),
    )
    assert [(c["id"], c["status"], c["failures"]) for c in merged["cases"]] == [
        (c["id"], c["status"], c["failures"]) for c in one["cases"]
    ]
    assert merged["settings"] == one["settings"]
    assert sum(c["status"] == "failed" for c in merged["cases"]) == 10
    assert "gated with the case thresholds of the command line: qa:hit@5>=1" in err
    assert "qa:precision@3>=0.9; the files recorded qa:hit@5>=1" in err


def test_bad_gates_are_a_usage_error(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_shards(shard_project, [], 2)
    files = ["shard-1.json", "shard-2.json"]
    code, _, err = merge(capsys, files, "-c", "nosuch.ini")
    assert code == 2 and "-c nosuch.ini: no such file" in err, err
    assert "Traceback" not in err
    code, _, err = merge(capsys, files, "--ragproof-aggregate-threshold=qa:recal@5>=2")
    assert code == 2 and "(from the command line)" in err and "Traceback" not in err, err
    (shard_project.path / "pytest.ini").write_text(
        "[pytest]\nragproof_min_pass_rate = lots\n", encoding="utf-8"
    )
    code, _, err = merge(capsys, files)
    assert code == 2 and "(from pytest.ini)" in err and "Traceback" not in err, err


def _edited(project: pytest.Pytester, k: int, edit: Any) -> str:
    doc = document(project.path / f"shard-{k}.json")
    edit(doc)
    doc["digest"] = resigned(doc)
    name = f"edit-{k}.json"
    (project.path / name).write_text(json.dumps(doc), encoding="utf-8")
    return name


def test_the_population_is_the_frozen_datasets(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 40.2: coverage is the frozen dataset's set of cases, not a count."""
    behave(shard_project, {"qa-01": "wrong", "qa-08": "wrong"})
    run_shards(shard_project, [], 1)
    assert merge(capsys, ["shard-1.json"])[0] == 1

    def drop_failed(doc: dict[str, Any]) -> None:
        kept = [c for c in doc["cases"] if c["status"] == "passed"]
        gone = len(doc["cases"]) - len(kept)
        doc["cases"] = kept
        doc["run"]["population"] -= gone
        doc["run"]["expected"] -= gone
        doc["run"]["selected"] -= gone
        doc["run"]["datasets"]["cases.frozen.json"] -= gone

    code, _, err = merge(capsys, [_edited(shard_project, 1, drop_failed)])
    assert code == 2, err
    assert "field run.datasets['cases.frozen.json']: 10 case(s), but the frozen dataset" in err
    assert "has 12 in the run's population" in err

    def copies(doc: dict[str, Any]) -> None:
        passing = next(c for c in doc["cases"] if c["status"] == "passed")
        for i, case in enumerate(doc["cases"]):
            if case["status"] == "failed":
                copy = dict(passing, id=case["id"], dataset="elsewhere.json", nodeid=case["nodeid"])
                doc["cases"][i] = copy

    code, _, err = merge(capsys, [_edited(shard_project, 1, copies)])
    assert code == 2, err
    assert "field dataset: 'elsewhere.json' is not a dataset of the run" in err


SKIPPING = """

def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.endswith("qa-03"):
            item.add_marker(pytest.mark.skip(reason="backend for document 3 is down"))
"""


def test_a_skipped_case_needs_the_reason_pytest_gave(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 40.2: a failed case moved into run.skipped is not a skipped case."""
    from tests.runner.shard_project import CONFTEST

    behave(shard_project, {"qa-01": "wrong"})
    run_shards(shard_project, [], 1)
    assert merge(capsys, ["shard-1.json"])[0] == 1

    def hide_failed(doc: dict[str, Any]) -> None:
        failed = [c for c in doc["cases"] if c["status"] == "failed"]
        doc["cases"] = [c for c in doc["cases"] if c["status"] != "failed"]
        doc["run"]["skipped"] = sorted(c["nodeid"] for c in failed)

    code, _, err = merge(capsys, [_edited(shard_project, 1, hide_failed)])
    assert code == 2, err
    assert "field run.skipped: cases.frozen.json::qa-01 is skipped, but the file records" in err
    # A case the user's configuration skips merges, with its reason.
    shard_project.makeconftest(CONFTEST + SKIPPING)
    behave(shard_project, {})
    for mode in ([], ["-n", "2"]):
        run_shards(shard_project, mode, 2)
        code, out, err = merge(capsys, ["shard-1.json", "shard-2.json"], "-o", "merged.json")
        assert code == 0, out + err
        merged = document(shard_project.path / "merged.json")
        assert merged["run"]["skip_reasons"] == {
            "cases.frozen.json::qa-03": "backend for document 3 is down"
        }


def test_a_pipeline_that_calls_pytest_skip_skips_its_case(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest.skip() in the pipeline was recorded as a passed case without metrics."""
    from tests.runner.shard_project import CONFTEST

    skipping = CONFTEST.replace(
        "        action = BEHAVIOUR.get(case.id)\n",
        "        action = BEHAVIOUR.get(case.id)\n"
        "        if case.id == 'qa-03':\n"
        "            pytest.skip('document 3 is being reindexed')\n",
    )
    assert skipping != CONFTEST
    shard_project.makeconftest(skipping)
    for mode in ([], ["-n", "2"]):
        result = run(shard_project, mode, "--ragproof-report=r.json")
        result.assert_outcomes(passed=11, skipped=1)
        doc = document(shard_project.path / "r.json")
        assert "qa-03" not in [c["id"] for c in doc["cases"]]
        assert doc["run"]["skip_reasons"] == {
            "cases.frozen.json::qa-03": "document 3 is being reindexed"
        }
        code, out, err = merge(capsys, ["r.json"])
        assert code == 0, out + err
