"""``--ragproof-history`` / ``ragproof_history`` in real pytest runs (serial and ``-n 2``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# Imported before pytester's in-process runs: a module first imported inside such a run
# is dropped from sys.modules after it, and SQLAlchemy does not survive a second import.
import pytest_ragproof.history.schema  # noqa: F401
from pytest_ragproof.cli import main
from pytest_ragproof.history.queries import list_runs, run_cases
from pytest_ragproof.history.store import open_store
from pytest_ragproof.history.target import resolve_target
from tests.history.runs import cases
from tests.pytester_projects import run, write_frozen

CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question, case):
        if case.kind == "unanswerable":
            return {"answer": "I don't know.", "contexts": []}
        ids = list(case.expected_source_ids)
        answer = case.expected_answer or "a summary"
        return {"answer": answer, "contexts": [{"id": i, "text": answer} for i in ids]}
    return pipeline
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_frozen(pytester, cases(qa=6))
    pytester.makeconftest(CONFTEST)
    return pytester


def _runs(path: Path) -> list[str]:
    with open_store(resolve_target(str(path), Path.cwd()), create=False) as store:
        return [r.run_id for r in list_runs(store)]


def test_the_run_is_recorded_once_by_the_process_that_decides_it(
    project: pytest.Pytester, mode: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    monkeypatch.setenv("GITHUB_REF_NAME", "feature/history")
    monkeypatch.delenv("GITHUB_HEAD_REF", raising=False)
    result = run(project, mode, "--ragproof-history=runs/h.sqlite", "--ragproof-report=r.json")
    assert result.ret == 0
    doc = json.loads((project.path / "r.json").read_text())
    result.stdout.fnmatch_lines([f"history: run {doc['run_id']} recorded in runs/h.sqlite"])
    assert doc["run"]["git"] == {
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "branch": "feature/history",
    }
    store = project.path / "runs" / "h.sqlite"
    assert _runs(store) == [doc["run_id"]]
    with open_store(resolve_target(str(store), Path.cwd())) as s:
        (summary,) = list_runs(s)
        assert len(run_cases(s, "latest").cases) == 9
    assert summary.git_commit == doc["run"]["git"]["commit"]
    assert summary.git_branch == "feature/history"


def test_the_ini_default_store_is_made_only_when_history_is_asked_for(
    project: pytest.Pytester,
) -> None:
    assert run(project, []).ret == 0
    assert not (project.path / ".ragproof").exists()
    project.makeini("[pytest]\nragproof_history = default\n")
    sub = project.mkdir("sub")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)  # the default store is in the root folder, wherever pytest starts
        result = project.runpytest(
            f"--ragproof-dataset={project.path / 'cases.frozen.json'}",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:asyncio",
            f"--rootdir={project.path}",
        )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["history: run * recorded in ../.ragproof/history.sqlite"])
    assert len(_runs(project.path / ".ragproof" / "history.sqlite")) == 1
    assert not (sub / ".ragproof").exists()


def test_part_of_a_run_is_not_recorded(project: pytest.Pytester) -> None:
    result = run(project, [], "--ragproof-history=h.sqlite", "-k", "qa-001")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["history: run not recorded in h.sqlite: pytest's selection left cases out"]
    )
    assert _runs(project.path / "h.sqlite") == []


def test_merged_shard_results_load(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in (1, 2):
        result = run(
            project,
            [],
            f"--ragproof-shard={k}/2",
            f"--ragproof-report=shard-{k}.json",
            "--ragproof-history=h.sqlite",
        )
        assert result.ret == 0
        result.stdout.fnmatch_lines(["history: run not recorded in h.sqlite: a shard *"])
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project.path)
        assert main(["merge", "shard-1.json", "shard-2.json", "-o", "merged.json"]) == 0
        assert main(["history", "add", "merged.json", "--store", "h.sqlite"]) == 0
    merged = json.loads((project.path / "merged.json").read_text())
    assert _runs(project.path / "h.sqlite") == [merged["run_id"]]
    assert "added run" in capsys.readouterr().out


def test_a_store_that_cannot_be_used_stops_the_run_before_any_case(
    project: pytest.Pytester,
) -> None:
    (project.path / "notes.txt").write_text("my notes\n")
    result = run(project, [], "--ragproof-history=notes.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ragproof: --ragproof-history: history store notes.txt is not a SQLite database*"]
    )
    assert (project.path / "notes.txt").read_text() == "my notes\n"


MIXED = """
import pytest

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question, case):
        n = int(case.id.rsplit("-", 1)[1])
        if case.kind == "unanswerable" or n % 3 == 0:
            return {"answer": "I don't know.", "contexts": []}
        if n == 5:
            raise RuntimeError("backend down")
        ids = [] if n % 4 == 0 else list(case.expected_source_ids)
        answer = case.expected_answer or "a summary"
        return {"answer": answer, "contexts": [{"id": i, "text": answer} for i in ids]}
    return pipeline
"""


def _threshold_table(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("pipeline "))
    table = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(("---", "rag_pipeline ")):
            break
        table.append(line)
    return table


def test_history_show_prints_the_threshold_rows_the_run_printed(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``<=`` case threshold failed by some cases, an error case, an aggregate gate:
    ``history show`` prints the table of the run's terminal summary, value for value."""
    write_frozen(pytester, cases(qa=12))
    pytester.makeconftest(MIXED)
    result = run(
        pytester,
        [],
        "--ragproof-case-threshold=qa:abstained<=0",
        "--ragproof-case-threshold=qa:hit@5>=1",
        "--ragproof-aggregate-threshold=qa:recall@5>=0.5",
        "--ragproof-history=h.sqlite",
    )
    assert result.ret == 1
    terminal = _threshold_table(result.stdout.str())
    assert len(terminal) > 2
    capsys.readouterr()
    assert main(["history", "show", "latest", "--store", str(pytester.path / "h.sqlite")]) == 0
    shown = _threshold_table(capsys.readouterr().out)
    assert shown == terminal
    # the abstained row: 11 scored qa cases (qa-005 errored), 4 of them abstain
    (abstained,) = [line for line in shown if line.split()[1:3] == ["qa", "abstained"]]
    assert abstained.split()[3:6] == ["11", "0.364", "0.000"] and "4 failed, 1 error" in abstained


def test_a_store_on_a_read_only_file_system_is_a_usage_error_before_any_case(
    project: pytest.Pytester, read_only: Path
) -> None:
    """Neither a store folder that cannot be created nor an existing store on a read-only
    mount is an INTERNALERROR: one line, exit 4, no case run."""
    missing = read_only / "sub" / "h.sqlite"
    result = run(project, [], f"--ragproof-history={missing}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in err and "Traceback" not in err
    assert f"cannot create its folder {missing.parent}: Read-only file system" in err
    # An existing store, written before the mount went read-only: readable, not writable.
    writable = read_only.parent / "src" / "h.sqlite"
    assert run(project, [], f"--ragproof-history={writable}").ret == 0
    result = run(project, [], f"--ragproof-history={read_only / 'h.sqlite'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "INTERNALERROR" not in err and "is on a read-only file system" in err
    assert len(_runs(read_only / "h.sqlite")) == 1  # and reading it works
