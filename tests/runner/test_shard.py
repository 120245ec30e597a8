"""``--ragproof-shard K/N`` and ``ragproof merge``: N shards merge into exactly one run.

Every run here is a real pytest run of the project in :mod:`tests.runner.shard_project`
(serially and under ``-n 2``); merging is the real ``ragproof merge`` command.
"""

from __future__ import annotations

import json

import pytest

from pytest_ragproof.verdict.shard import Shard, parse_shard, shard_of
from tests.pytester_projects import behave, resigned, run
from tests.runner.shard_project import (
    CASES,
    document,
    merge,
    merged_summary,
    run_shards,
    shard_project,
    summary,
    timeless,
)

__all__ = ["shard_project"]  # the fixture, imported for the tests below

GATES = (
    "--ragproof-aggregate-threshold=qa:recall@5>=0.9",
    "--ragproof-aggregate-threshold=qa:mrr.p50>=0.5",
    "--ragproof-baseline=base.json",
    "--ragproof-fail-on-case-regression",
)
IDS = [str(c["id"]) for c in CASES]


def _write_baseline(project: pytest.Pytester) -> None:
    behave(project, {})
    result = run(project, [], "--ragproof-baseline=base.json", "--ragproof-baseline-update")
    assert result.ret == 0, result.stdout.str()


# Serially for N = 1, 2, 3; under xdist (workers inside every shard) for N = 2: each
# xdist run starts two workers, and the CI budget is minutes.
@pytest.mark.parametrize(
    ("n", "mode"),
    [(1, []), (2, []), (3, []), (2, ["-n", "2"])],
    ids=["serial-1", "serial-2", "serial-3", "xdist-2"],
)
def test_merge_of_n_shards_equals_one_run(
    shard_project: pytest.Pytester, mode: list[str], n: int, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_baseline(shard_project)
    # Regressions: two wrong sources (a failed aggregate, case flips) and an error.
    behave(shard_project, {"qa-01": "wrong", "qa-08": "wrong", "qa-05": "raise"})
    single = run(shard_project, mode, *GATES, "--ragproof-report=single.json")
    assert single.ret == 1
    shards = run_shards(shard_project, mode, n, *GATES)
    for k, shard in enumerate(shards, 1):
        shard.stdout.fnmatch_lines([f"shard {k}/{n}: * of {len(CASES)} case(s)"])
    files = [f"shard-{k}.json" for k in range(1, n + 1)]
    # The merge gates with its own configuration: the shards' options given again.
    code, out, err = merge(capsys, files, "-o", "merged.json", *GATES)
    assert code == single.ret, out + err
    assert "gated with" not in err
    merged = document(shard_project.path / "merged.json")
    one = document(shard_project.path / "single.json")
    assert merged["passed"] is one["passed"] is False
    assert merged["baseline"]["path"] == one["baseline"]["path"]
    mine, theirs = timeless(merged), timeless(one)
    for key in sorted(set(mine) | set(theirs)):
        assert mine.get(key) == theirs.get(key), f"'{key}' differs"
    assert json.dumps(mine, sort_keys=True) == json.dumps(theirs, sort_keys=True)
    assert merged_summary(out) == summary(single)
    assert any(
        "ragproof gate FAILED: aggregate qa:recall@5>=0.9" in line for line in out.split("\n")
    )


def test_shards_of_a_repeated_run_merge_into_the_run(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ragproof-repeat in every shard: the merge rebuilds the repeats from the record."""
    behave(shard_project, {"qa-01": "wrong"})
    args = ("--ragproof-repeat=2", "--ragproof-min-pass-rate=0.5")
    single = run(shard_project, [], *args, "--ragproof-report=single.json")
    assert single.ret == 1
    run_shards(shard_project, [], 2, *args)
    code, out, err = merge(capsys, ["shard-1.json", "shard-2.json"], "-o", "merged.json", *args[1:])
    assert code == single.ret, out + err
    merged = document(shard_project.path / "merged.json")
    assert merged["settings"]["repeat"] == 2 and merged["settings"]["min_pass_rate"] == 0.5
    assert timeless(merged) == timeless(document(shard_project.path / "single.json"))
    assert merged_summary(out) == summary(single)


def test_a_shard_gates_its_cases_not_the_aggregates(shard_project: pytest.Pytester) -> None:
    # Every case of shard 2/3 passes; the aggregate fails on it, as on the whole run.
    threshold = "--ragproof-aggregate-threshold=qa:precision@5>=0.9"
    result = run(shard_project, [], "--ragproof-shard=2/3", threshold, "-v")
    assert result.ret == 0, result.stdout.str()
    owned = [i for i in IDS if shard_of("cases.frozen.json", i, 3) == 2]
    result.stdout.fnmatch_lines(
        [
            f"shard 2/3: {len(owned)} of {len(CASES)} case(s)",
            "*qa*precision@5*mean >= 0.9 (aggregate)*FAIL (not gated)*",
            "note: shard 2/3: aggregates and the baseline comparison are this shard's, reported, "
            "not gated; `ragproof merge` of every shard's --ragproof-report gates them",
        ]
    )
    assert result.stdout.str().count("PASSED") == len(owned)
    # A case that fails fails its shard.
    behave(shard_project, {owned[0]: "raise"})
    assert run(shard_project, [], "--ragproof-shard=2/3").ret == 1
    # One shard of one is the whole run: it gates.
    assert run(shard_project, [], "--ragproof-shard=1/1", threshold).ret == 1


def test_collection_builds_only_the_shards_items(shard_project: pytest.Pytester) -> None:
    seen: list[str] = []
    for k in (1, 2, 3):
        result = run(shard_project, [], f"--ragproof-shard={k}/3", "--co", "-q")
        ids = [line.split("::")[1] for line in result.stdout.lines if "::" in line]
        assert ids == sorted(i for i in IDS if shard_of("cases.frozen.json", i, 3) == k)
        seen += ids
    assert sorted(seen) == sorted(IDS)


def test_adding_a_case_moves_no_other_case() -> None:
    before = {i: shard_of("cases.frozen.json", i, 4) for i in IDS}
    more = [*IDS, *(f"new-{j}" for j in range(50))]
    after = {i: shard_of("cases.frozen.json", i, 4) for i in more}
    assert all(after[i] == shard for i, shard in before.items())
    assert {after[i] for i in more} == {1, 2, 3, 4}  # and the hash spreads the cases
    assert Shard(2, 4).owns("cases.frozen.json", "x") == (
        shard_of("cases.frozen.json", "x", 4) == 2
    )
    assert parse_shard("3/4") == Shard(3, 4) and parse_shard(None) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0/3", "*--ragproof-shard 0/3: K must be between 1 and 3 (shards are numbered from 1)*"),
        ("4/3", "*--ragproof-shard 4/3: K must be between 1 and 3*"),
        ("x", "*--ragproof-shard expects K/N; got 'x': e.g. --ragproof-shard 1/4*"),
        ("2/0", "*--ragproof-shard expects K/N with N at least 1; got '2/0'*"),
    ],
)
def test_a_bad_shard_is_a_usage_error(
    shard_project: pytest.Pytester, value: str, message: str
) -> None:
    result = run(shard_project, [], f"--ragproof-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_bad_ini_shard_names_the_ini_key(shard_project: pytest.Pytester) -> None:
    shard_project.makeini("[pytest]\nragproof_shard = 5/4\n")
    result = run(shard_project, [])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*K must be between 1 and 4*(from ragproof_shard in tox.ini)*"])


def test_a_shard_does_not_update_the_baseline(shard_project: pytest.Pytester) -> None:
    result = run(
        shard_project,
        [],
        "--ragproof-shard=1/2",
        "--ragproof-baseline=base.json",
        "--ragproof-baseline-update",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--ragproof-shard 1/2 with --ragproof-baseline-update would write a baseline of one "
            "shard's cases*ragproof merge shard-[*].json -o base.json*"
        ]
    )
    assert not (shard_project.path / "base.json").exists()


@pytest.mark.parametrize(
    ("n", "mode"), [(2, []), (3, []), (2, ["-n", "2"])], ids=["serial-2", "serial-3", "xdist-2"]
)
def test_pytest_shard_partial_runs_merge_the_same_way(
    shard_project: pytest.Pytester, mode: list[str], n: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest-shard's deselection (--shard-id/--num-shards) leaves partial runs that merge."""
    behave(shard_project, {"qa-03": "wrong"})
    gate = "--ragproof-aggregate-threshold=qa:recall@5>=0.95"
    single = run(shard_project, mode, gate, "--ragproof-report=single.json")
    files = []
    for shard_id in range(n):
        name = f"part-{shard_id}.json"
        part = run(
            shard_project,
            mode,
            gate,
            f"--shard-id={shard_id}",
            f"--num-shards={n}",
            f"--ragproof-report={name}",
        )
        part.stdout.fnmatch_lines(["*pytest's selection * left out * of 12 case(s)*not gated*"])
        files.append(name)
        doc = document(shard_project.path / name)
        assert part.ret == (1 if "qa-03" in [c["id"] for c in doc["cases"]] else 0)
        assert len(doc["cases"]) + len(doc["run"]["deselected"]) == len(CASES)
    code, out, err = merge(capsys, files, "-o", "merged.json", gate)
    assert code == single.ret == 1, out + err
    assert timeless(document(shard_project.path / "merged.json")) == timeless(
        document(shard_project.path / "single.json")
    )
    assert merged_summary(out) == summary(single)
    # A missing group is a gap named by its cases, not a smaller run.
    code, _, err = merge(capsys, files[1:])
    assert code == 2
    assert "were deselected in every file (a missing pytest-shard or pytest-split group" in err


def test_merge_refuses_files_that_do_not_belong_together(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 2)
    # A missing shard, then a shard given twice.
    code, _, err = merge(capsys, ["shard-1.json"])
    assert code == 2
    assert "the files cover " in err and "of 12 case(s); no file for shard 2/2" in err
    code, _, err = merge(capsys, ["shard-1.json", "shard-2.json", "shard-1.json"])
    assert code == 2
    assert (
        "the files overlap: shard-1.json (shard 1/2) and shard-1.json (shard 1/2) both ran" in err
    )
    # Shards of two splits overlap too.
    run(shard_project, [], "--ragproof-shard=1/3", "--ragproof-report=other-1.json")
    code, _, err = merge(capsys, ["shard-1.json", "shard-2.json", "other-1.json"])
    assert code == 2
    assert "differ in run.shard.n: 2 vs 3" in err
    # Another threshold in one shard.
    run(
        shard_project,
        [],
        "--ragproof-shard=2/2",
        "--ragproof-report=strict-2.json",
        "--ragproof-aggregate-threshold=qa:mrr>=0.5",
    )
    code, _, err = merge(capsys, ["shard-1.json", "strict-2.json"])
    assert code == 2
    assert (
        "shard-1.json and strict-2.json differ in run.config.aggregate_thresholds: [] vs "
        "['qa:mrr>=0.5']; run every shard with the same options" in err
    )
    # Another version of the dataset in one shard.
    other = document(shard_project.path / "shard-2.json")
    other["datasets"][0]["sha256"] = "0" * 64
    other["digest"] = resigned(other)  # the data gives it away, not the digest
    (shard_project.path / "edited-2.json").write_text(json.dumps(other), encoding="utf-8")
    code, _, err = merge(capsys, ["shard-1.json", "edited-2.json"])
    assert code == 2
    assert "dataset cases.frozen.json differs: sha256 is " in err and "in edited-2.json" in err
    # A results file without the run section (evaluate(), an older version).
    del other["run"]
    other["digest"] = resigned(other)
    (shard_project.path / "old.json").write_text(json.dumps(other), encoding="utf-8")
    code, _, err = merge(capsys, ["shard-1.json", "old.json"])
    assert code == 2
    assert "old.json has no 'run' section" in err
    # Nothing here wrote a merged file.
    assert not (shard_project.path / "results.json").exists()


def test_merge_output_never_replaces_other_files(
    shard_project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run_shards(shard_project, [], 2)
    files = ["shard-1.json", "shard-2.json"]
    code, _, err = merge(capsys, files, "-o", "cases.frozen.json")
    assert code == 2 and "-o cases.frozen.json is a ragproof dataset" in err
    code, _, err = merge(capsys, files, "-o", "shard-2.json")
    assert code == 2 and "-o shard-2.json is one of the files to merge" in err
    (shard_project.path / "notes.json").write_text('{"mine": 1}', encoding="utf-8")
    code, _, err = merge(capsys, files, "-o", "notes.json")
    assert code == 2 and "not a ragproof results file" in err
    assert (shard_project.path / "notes.json").read_text(encoding="utf-8") == '{"mine": 1}'
    code, out, _ = merge(capsys, files, "-o", "results.json")
    assert code == 0 and "results written to results.json" in out
    assert merge(capsys, files, "-o", "results.json")[0] == 0  # its own earlier output
