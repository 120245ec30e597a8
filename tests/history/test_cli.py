"""``ragproof history add|list|show|trend|compare`` on SQLite and PostgreSQL stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.cli import main
from pytest_ragproof.commands.history import sparkline
from pytest_ragproof.results.document import write_results
from tests.history.runs import document


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("results")
    docs = {
        "good": document(),
        "worse": document(halved={f"qa-{n:03d}" for n in range(1, 9)}),
    }
    out = {}
    for name, doc in docs.items():
        out[name] = folder / f"{name}.json"
        write_results(doc, out[name])
    return out


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["history", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _id(path: Path) -> str:
    run_id: str = json.loads(path.read_text())["run_id"]
    return run_id


def test_add_list_show_trend_compare(
    store_value: str, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", store_value]
    good, worse = _id(files["good"]), _id(files["worse"])
    code, out, _ = _run(capsys, "add", str(files["good"]), str(files["worse"]), *store)
    assert code == 0
    assert f"{files['good']}: added run {good} (19 case(s))" in out
    code, out, _ = _run(capsys, "add", str(files["good"]), *store)
    assert code == 0 and f"run {good} is already in the store; not added again" in out

    code, out, _ = _run(capsys, "list", *store)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["run", "time", "(UTC)", "verdict"]
    assert lines[2].startswith(worse) and lines[3].startswith(good)  # newest first

    # A prefix one character past where the two ids part (both may carry the same second).
    unique = next(i for i, (a, b) in enumerate(zip(good, worse, strict=True)) if a != b) + 1
    code, out, _ = _run(capsys, "show", good[:unique], *store)
    assert code == 0 and out.startswith(f"run {good}: passed\n")
    assert "qa:recall@5" not in out and ">= 0.8 (aggregate)" in out

    code, out, _ = _run(capsys, "trend", "--metric", "qa:recall@5", *store)
    assert code == 0
    assert out.splitlines()[0] == "qa:recall@5 [rag_pipeline]"
    spark = sparkline([1.0, 0.75])
    assert f"qa:recall@5 [rag_pipeline] {spark}  min 0.750 max 1.000 last 0.750" in out
    assert "gate >= 0.8" in out

    code, out, _ = _run(capsys, "compare", good, "latest", *store)
    assert code == 1  # recall@5 fell on 8 of 16 cases: a significant regression
    assert f"run {worse} compared with run {good}" in out
    assert f"ragproof baseline {good} (alpha 0.05):" in out
    assert "ragproof gate FAILED: regression qa:recall@5 [rag_pipeline]" in out
    code, out, _ = _run(capsys, "compare", good, "latest", "--tolerance", "qa:recall@5=0.3", *store)
    assert code == 0 and "within tolerance" in out


def test_a_sparkline_scales_between_the_series_min_and_max() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([0.7, 0.7]) == "▅▅"
    assert sparkline([0.2, None, 0.4]) == "▁ █"


def test_bad_input_is_an_error_naming_the_file(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(tmp_path / "h.sqlite")]
    doc: dict[str, Any] = json.loads(files["good"].read_text())
    doc["cases"][0]["metrics"]["recall@5"] = 0.25  # edited after it was written
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "add", str(edited), *store)
    assert code == 2
    assert f"ragproof history add: error: {edited}: field digest" in err
    assert not (tmp_path / "h.sqlite").exists()

    code, _, err = _run(capsys, "add", str(files["good"]), "--store", str(files["worse"]))
    assert code == 2 and "is not a SQLite database" in err
    code, _, err = _run(capsys, "trend", "--metric", "qa:faithfulness", *store)
    assert code == 2 and "no history store at" in err

    _run(capsys, "add", str(files["good"]), *store)
    code, _, err = _run(capsys, "trend", "--metric", "qa:faithfulness", *store)
    assert code == 2 and "no run in the store has qa:faithfulness" in err
    assert "qa:recall@5" in err
    code, _, err = _run(capsys, "show", "-2", *store)
    assert code == 2 and "the store holds 1 run(s)" in err


def test_the_default_store_is_created_only_when_asked(
    tmp_path: Path,
    files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGPROOF_HISTORY", raising=False)
    code, _, err = _run(capsys, "list")
    assert code == 2 and "no history store at .ragproof/history.sqlite" in err
    assert not (tmp_path / ".ragproof").exists()
    code, out, _ = _run(capsys, "add", str(files["good"]))
    assert code == 0 and out.endswith("history store: .ragproof/history.sqlite\n")
    assert (tmp_path / ".ragproof" / "history.sqlite").is_file()
    monkeypatch.setenv("RAGPROOF_HISTORY", str(tmp_path / "other.sqlite"))
    code, out, _ = _run(capsys, "add", str(files["good"]))
    assert code == 0 and "added run" in out and (tmp_path / "other.sqlite").is_file()


def test_compare_names_its_own_options_not_pytests(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(tmp_path / "h.sqlite")]
    other = tmp_path / "other.json"  # another dataset (fewer cases), three qa cases failing
    write_results(document(qa=12, missing={"qa-001", "qa-002", "qa-003"}), other)
    assert _run(capsys, "add", str(files["good"]), str(other), *store)[0] == 0

    code, out, _ = _run(capsys, "compare", _id(files["good"]), _id(other), *store)
    assert code == 1
    assert "not compared (dataset changed)" in out
    assert (
        "; compare two runs of the same dataset, or compare the case ids both share with "
        "ragproof history compare --allow-dataset-change\n"
    ) in out
    assert "--ragproof-" not in out

    allowed = [_id(files["good"]), _id(other), "--allow-dataset-change", *store]
    code, out, _ = _run(capsys, "compare", *allowed)
    assert "3 regressed" in out
    assert "case flips do not gate the run (--fail-on-case-regression makes them)" in out
    code, out, _ = _run(capsys, "compare", *allowed, "--fail-on-case-regression")
    assert code == 1
    assert "3 case(s) regressed against the baseline [rag_pipeline]: qa-001, qa-002, qa-003 " in out
    assert "(--fail-on-case-regression)" in out and "--ragproof-" not in out


def test_compare_says_why_latency_is_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(tmp_path / "h.sqlite")]
    gates = ("qa:recall@5>=0.8", "latency_s.p95<=5")
    for name in ("a", "b"):
        write_results(document(thresholds=gates), tmp_path / f"{name}.json")
    assert _run(capsys, "add", str(tmp_path / "a.json"), str(tmp_path / "b.json"), *store)[0] == 0
    code, out, _ = _run(capsys, "compare", "-2", "latest", *store)
    assert code == 0
    assert (
        "  note: latency_s [rag_pipeline] not compared: timings depend on the machine that ran "
        "them, so a baseline never holds them\n"
    ) in out
    assert "no case scored in both runs" not in out


def test_a_store_folder_on_a_read_only_file_system_is_one_line(
    read_only: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store = read_only / "sub" / "h.sqlite"
    code, _, err = _run(capsys, "add", str(files["good"]), "--store", str(store))
    assert code == 2
    assert err == (
        f"ragproof history add: error: history store {store}: cannot create its folder "
        f"{store.parent}: Read-only file system; give a store path in a folder you can write\n"
    )


def test_a_store_on_a_read_only_mount_is_listed_shown_trended_and_compared(
    read_only: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    writable = read_only.parent / "src" / "h.sqlite"
    code, _, _ = _run(
        capsys, "add", str(files["good"]), str(files["worse"]), "--store", str(writable)
    )
    assert code == 0
    subprocess.run(["mount", "-o", "remount,bind,ro", str(read_only)], check=True)  # refresh
    store = ["--store", str(read_only / "h.sqlite")]
    good, worse = _id(files["good"]), _id(files["worse"])
    code, out, err = _run(capsys, "list", *store)
    assert code == 0, err
    assert out.splitlines()[2].startswith(worse) and out.splitlines()[3].startswith(good)
    code, out, err = _run(capsys, "show", worse, *store)
    assert code == 0 and worse in out, err
    code, out, err = _run(capsys, "trend", "--metric", "qa:recall@5", *store)
    assert code == 0, err
    code, out, err = _run(capsys, "compare", good, worse, *store)
    assert code in (0, 1) and "Traceback" not in err and "unable to open" not in err, err
    assert "regression" in out
    assert sorted(p.name for p in read_only.iterdir()) == ["h.sqlite"]  # nothing written
    # Recording into it says why it cannot, in one line.
    code, _, err = _run(capsys, "add", str(files["good"]), *store)
    assert code == 2 and err.count("\n") == 1 and "is on a read-only file system" in err, err
