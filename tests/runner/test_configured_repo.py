"""A repository that configures ragproof in its ini file still behaves like pytest.

The project has ordinary unit tests in ``tests/`` and ``ragproof_dataset`` in
``pytest.ini``; every test runs serially and under ``-n 2``.
"""

from __future__ import annotations

import pytest

from tests.pytester_projects import behave, load_json, write_frozen
from tests.runner.conftest import CASES, CONFTEST

UNIT = """
def test_unit():
    assert 1 + 1 == 2

def test_other():
    assert True
"""


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    behave(pytester, {})
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text(UNIT, encoding="utf-8")
    pytester.makeini("[pytest]\nragproof_dataset = cases.frozen.json\n")
    return pytester


def _run(repo: pytest.Pytester, mode: list[str], *args: str) -> pytest.RunResult:
    return repo.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio", *mode, *args)


NOT_SELECTED = (
    "note: configured dataset(s) cases.frozen.json not selected by the given paths: run "
    "pytest without paths, or name the dataset file, to evaluate them"
)


@pytest.mark.parametrize("target", ["tests/test_unit.py", "tests/test_unit.py::test_unit", "tests"])
def test_naming_other_paths_runs_only_those(
    repo: pytest.Pytester, mode: list[str], target: str
) -> None:
    result = _run(repo, mode, target)
    assert result.ret == 0, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == (1 if "::" in target else 2)
    result.stdout.fnmatch_lines(["*ragproof summary*", NOT_SELECTED])
    out = result.stdout.str()
    assert "not found" not in out and "left out" not in out and "cases:" not in out


@pytest.mark.parametrize("target", [None, ".", "cases.frozen.json", "cases.frozen.json::qa-good"])
def test_no_path_the_dataset_or_its_folder_joins(
    repo: pytest.Pytester, mode: list[str], target: str | None
) -> None:
    result = _run(repo, mode, *([target] if target else []))
    assert result.ret == 0, result.stdout.str()
    expected = {None: 6, ".": 6, "cases.frozen.json": 4, "cases.frozen.json::qa-good": 1}
    assert result.parseoutcomes()["passed"] == expected[target]
    assert "not selected by the given paths" not in result.stdout.str()


def test_a_dataset_on_the_command_line_always_joins(repo: pytest.Pytester, mode: list[str]) -> None:
    result = _run(repo, mode, "tests/test_unit.py", "--ragproof-dataset=cases.frozen.json")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*cases: 4 passed, 0 failed, 0 error*"])


def test_the_source_of_a_frozen_dataset_says_what_to_run(repo: pytest.Pytester) -> None:
    (repo.path / "cases.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    result = _run(repo, [], "cases.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not found" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(
        [
            "*ragproof: cases.jsonl is the source of the configured dataset cases.frozen.json; "
            "run `pytest cases.frozen.json` (after `ragproof freeze cases.jsonl` if you changed "
            "it), or `pytest --ragproof-dataset=cases.jsonl` to run the unfrozen file*"
        ]
    )
    (repo.path / "other.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    result = _run(repo, [], "other.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ragproof: other.jsonl is not a configured dataset; run it with `pytest --ragproof-*"]
    )


def test_stop_after_first_failure_is_not_a_gate_failure(
    repo: pytest.Pytester, mode: list[str]
) -> None:
    behave(repo, {"inj-1": "leak"})
    result = _run(repo, mode, "-x", "cases.frozen.json", "--ragproof-report=r.json")
    # xdist ends a run stopped by -x as interrupted (exit 2), pytest alone as failed (1).
    assert result.ret == (2 if mode else 1)
    out = result.stdout.str()
    assert "ragproof gate FAILED" not in out and "scores missing" not in out
    result.stdout.fnmatch_lines(
        ["*ragproof: run stopped after * of 4 case(s): aggregates reported, not gated*"]
    )
    doc = load_json(repo.path / "r.json")
    assert doc["passed"] is False


def test_maxfail_stop_is_reported_once(repo: pytest.Pytester, mode: list[str]) -> None:
    behave(repo, {"qa-good": "wrong-sources", "qa-two": "wrong-sources", "un-1": "leak"})
    result = _run(repo, mode, "--maxfail=1", "--ragproof-aggregate-threshold=qa:recall@5>=0.9")
    assert result.ret == (2 if mode else 1)
    out = result.stdout.str()
    assert out.count("run stopped after") == 1
    assert "ragproof gate FAILED" not in out


def test_keyboard_interrupt_in_the_pipeline_is_a_stopped_run(repo: pytest.Pytester) -> None:
    repo.makeconftest(
        CONFTEST.replace(
            'if action == "raise":',
            'if action == "interrupt":\n'
            "            raise KeyboardInterrupt\n"
            '        if action == "raise":',
        )
    )
    behave(repo, {"qa-two": "interrupt"})
    # In a subprocess: pytester's in-process run hands a KeyboardInterrupt on to us.
    result = repo.runpytest_subprocess("-p", "no:cacheprovider", "cases.frozen.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ragproof: run stopped after * of 4 case(s)*not gated*"])
    assert "ragproof gate FAILED" not in result.stdout.str()


@pytest.mark.parametrize(
    "args",
    [
        ["--ragproof-baseline-update"],
        ["--ragproof-regression-tolerance=qa:recall@5=0.1"],
        ["--ragproof-regression-alpha=0.1"],
        ["--ragproof-fail-on-case-regression"],
        ["--ragproof-baseline-allow-dataset-change"],
    ],
)
def test_baseline_options_without_a_baseline_are_usage_errors(
    repo: pytest.Pytester, args: list[str]
) -> None:
    result = _run(repo, [], *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    flag = args[0].split("=")[0]
    result.stderr.fnmatch_lines(
        [f"*ragproof: {flag} has no effect without a baseline; add --ragproof-baseline=PATH*"]
    )


def test_a_baseline_ini_key_without_a_baseline_names_the_key(repo: pytest.Pytester) -> None:
    repo.makeini(
        "[pytest]\nragproof_dataset = cases.frozen.json\nragproof_regression_alpha = 0.01\n"
    )
    result = _run(repo, [])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragproof: ragproof_regression_alpha has no effect without*"])


def test_an_unknown_ini_key_names_the_closest_one(repo: pytest.Pytester) -> None:
    repo.makeini(
        "[pytest]\nragproof_dataset = cases.frozen.json\n"
        "ragproof_agregate_threshold = qa:recall@5>=0.9\n"
    )
    result = _run(repo, [])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*ragproof: unknown ini key ragproof_agregate_threshold in tox.ini; "
            "did you mean ragproof_aggregate_threshold?*"
        ]
    )


@pytest.mark.parametrize("target", ["cases.frozen.json", "data.jsonl"])
def test_a_dataset_is_never_a_baseline(repo: pytest.Pytester, target: str) -> None:
    (repo.path / "data.jsonl").write_text('{"kind": "qa", "question": "q"}\n', encoding="utf-8")
    before = (repo.path / target).read_bytes()
    for extra in ([], ["--ragproof-baseline-update"]):
        result = _run(repo, [], f"--ragproof-baseline={target}", *extra)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(
            [f"*ragproof: --ragproof-baseline {target} is a ragproof dataset, not a results file*"]
        )
        assert "--ragproof-baseline-update`" not in result.stderr.str()
    assert (repo.path / target).read_bytes() == before


def test_a_report_path_that_is_a_dataset_is_refused(repo: pytest.Pytester) -> None:
    before = (repo.path / "cases.frozen.json").read_bytes()
    result = _run(repo, [], "--ragproof-report=cases.frozen.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragproof-report cases.frozen.json is a ragproof dataset*"])
    assert (repo.path / "cases.frozen.json").read_bytes() == before


def test_a_case_threshold_matching_no_case_reads_no_cases(
    repo: pytest.Pytester, mode: list[str]
) -> None:
    result = _run(
        repo, mode, "--ragproof-case-threshold=tag=nothing:hit@5>=1", "--ragproof-report=r.json"
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*tag=nothing*hit@5*0*-*-*>= 1 (case)*no cases*"])
    rows = load_json(repo.path / "r.json")["thresholds"]
    (row,) = [r for r in rows if r["selector"] == "tag=nothing"]
    assert (row["verdict"], row["gated"]) == ("no cases", False)


def test_a_false_refusal_fails_by_default(repo: pytest.Pytester, mode: list[str]) -> None:
    repo.makeconftest(
        CONFTEST.replace(
            '"SSO": ("Enterprise has SSO.", ["plans.md"])',
            '"SSO": ("I don\'t know; that is not in the provided documents.", ["plans.md"])',
        )
    )
    result = _run(repo, mode, "cases.frozen.json")
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*qa:abstained<=0: abstained = 1 (expected <= 0)*"])
    cleared = _run(repo, mode, "cases.frozen.json", "--ragproof-case-threshold=none")
    assert cleared.ret == 0


def test_a_failed_gate_is_in_pytests_final_line(repo: pytest.Pytester, mode: list[str]) -> None:
    result = _run(repo, mode, "--ragproof-aggregate-threshold=qa:precision@5>=0.5")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*= 6 passed, 1 ragproof gate failed in *"])


def test_an_aggregate_failure_names_its_worst_cases(repo: pytest.Pytester, mode: list[str]) -> None:
    behave(repo, {"qa-two": "wrong-sources"})
    result = _run(
        repo, mode, "--ragproof-aggregate-threshold=qa:precision@5>=0.5", "--ragproof-report=r.json"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*ragproof gate FAILED: aggregate qa:precision@5>=0.5 [[]rag_pipeline[]]: mean = 0.1 "
            "(expected >= 0.5, n=2); worst: qa-two 0, qa-good 0.2*"
        ]
    )
    rows = load_json(repo.path / "r.json")["thresholds"]
    (row,) = [r for r in rows if r["metric"] == "precision@5"]
    assert row["worst"] == [["qa-two", 0.0], ["qa-good", 0.2]]


@pytest.mark.parametrize("how", ["option", "conftest"])
def test_xfail_cases_are_counted_as_pytest_counts_them(
    repo: pytest.Pytester, mode: list[str], how: str
) -> None:
    behave(repo, {"qa-good": "wrong-sources"})
    if how == "option":
        args = ["--ragproof-xfail-tag=billing"]
    else:
        args = []
        repo.makeconftest(
            CONFTEST
            + """
def pytest_collection_modifyitems(items):
    for item in items:
        case = getattr(item, "case", None)
        if case is not None and "billing" in case.tags:
            item.add_marker(pytest.mark.xfail(reason="known gap"))
"""
        )
    result = _run(repo, mode, "cases.frozen.json", "--ragproof-report=r.json", *args)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=3, xfailed=1)
    result.stdout.fnmatch_lines(["*cases: 3 passed, 0 failed, 0 error, 1 xfailed*"])
    doc = load_json(repo.path / "r.json")
    assert doc["passed"] is True
    assert {c["id"]: c["status"] for c in doc["cases"]}["qa-good"] == "xfailed"
    behave(repo, {})
    result = _run(repo, mode, "cases.frozen.json", "--ragproof-report=r.json", *args)
    assert result.ret == 0
    result.assert_outcomes(passed=3, xpassed=1)
    assert {c["id"]: c["status"] for c in load_json(repo.path / "r.json")["cases"]}["qa-good"] == (
        "xpassed"
    )


def test_a_pipeline_asking_for_chat_history_is_one_error(
    repo: pytest.Pytester, mode: list[str]
) -> None:
    repo.makeconftest(
        CONFTEST.replace("def pipeline(question, case):", "def pipeline(question, chat_history):")
    )
    result = _run(repo, mode, "cases.frozen.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str()
    # One failing case per process at most (each xdist worker meets it at its first case).
    assert out.count("declares the parameter 'chat_history'") <= (2 if mode else 1) * 2
    result.stdout.fnmatch_lines(
        [
            "*ragproof: fixture 'rag_pipeline': the pipeline 'pipeline' declares the parameter "
            "'chat_history', which ragproof never passes*"
        ]
    )
    assert result.parseoutcomes().get("passed", 0) == 0
    assert result.parseoutcomes()["failed"] <= (2 if mode else 1)


def test_components_off_hides_the_table(repo: pytest.Pytester, mode: list[str]) -> None:
    shown = _run(repo, mode)
    assert "component scores" in shown.stdout.str()
    hidden = _run(repo, mode, "--ragproof-components=off")
    assert hidden.ret == 0
    assert "component scores" not in hidden.stdout.str()


def test_every_inspectorraget_file_is_named(repo: pytest.Pytester, mode: list[str]) -> None:
    result = _run(repo, mode, "--ragproof-inspectorraget=ir.json")
    assert result.ret == 0
    names = ["ir.qa.json", "ir.unanswerable.json", "ir.injection.json"]
    for name in names:
        assert (repo.path / name).is_file()
    line = [ln for ln in result.stdout.lines if ln.startswith("inspectorraget written to")]
    assert len(line) == 1 and all(name in line[0] for name in names)


def test_a_stale_frozen_dataset_is_noted_once(repo: pytest.Pytester) -> None:
    import json

    (repo.path / "cases.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in CASES[:2]), encoding="utf-8"
    )
    result = _run(repo, [])
    assert result.ret == 0
    line = (
        "note: cases.frozen.json differs from cases.jsonl: the frozen file is stale: "
        "run ragproof freeze cases.jsonl"
    )
    assert result.stdout.lines.count(line) == 1


def test_markdown_and_html_show_no_cases_and_worst_cases(repo: pytest.Pytester) -> None:
    behave(repo, {"qa-two": "wrong-sources"})
    result = _run(
        repo,
        [],
        "--ragproof-case-threshold=tag=nothing:hit@5>=1",
        "--ragproof-aggregate-threshold=qa:precision@5>=0.5",
        "--ragproof-markdown=summary.md",
        "--ragproof-html=report.html",
    )
    assert result.ret == 1
    md = (repo.path / "summary.md").read_text(encoding="utf-8")
    row = "| `rag_pipeline` | tag=nothing | hit@5 | &gt;= 1 (case) | – | 0 | ➖ no cases"
    assert row + " (not gated) |" in md
    assert "- qa:precision@5&gt;=0.5 `rag_pipeline`: `qa-two` 0, `qa-good` 0.2" in md
    html = (repo.path / "report.html").read_text(encoding="utf-8")
    assert "no cases" in html


@pytest.mark.parametrize(
    ("option", "target", "why"),
    [
        ("html", "cases.frozen.json", "is a ragproof dataset"),
        ("markdown", "cases.frozen.json", "is a ragproof dataset"),
        ("inspectorraget", "cases.frozen.json", "is a ragproof dataset"),
        ("html", "notes.html", "exists and was not written by this export"),
        ("html", "r.json", "is a ragproof results file"),
    ],
)
def test_exports_never_replace_a_file_they_did_not_write(
    repo: pytest.Pytester, option: str, target: str, why: str
) -> None:
    (repo.path / "notes.html").write_text("<p>mine</p>", encoding="utf-8")
    assert _run(repo, [], "--ragproof-report=r.json").ret == 0
    before = (repo.path / target).read_bytes()
    result = _run(repo, [], f"--ragproof-{option}={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ragproof: --ragproof-{option} {target}: {target} {why}*"])
    assert (repo.path / target).read_bytes() == before
    # Its own earlier output is replaced (HTML) or appended to (Markdown) as before.
    assert _run(repo, [], "--ragproof-html=report.html", "--ragproof-markdown=s.md").ret == 0
    assert _run(repo, [], "--ragproof-html=report.html", "--ragproof-markdown=s.md").ret == 0


def test_a_frozen_dataset_named_in_a_run_that_configures_none(pytester: pytest.Pytester) -> None:
    write_frozen(pytester, CASES)
    pytester.makeconftest(CONFTEST)
    behave(pytester, {})
    result = _run(pytester, [], "cases.frozen.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # one collection error, as pytest does
    result.stdout.fnmatch_lines(
        [
            "*ragproof: cases.frozen.json is a ragproof dataset, but this run configures none; "
            "run it with pytest --ragproof-dataset=cases.frozen.json*"
        ]
    )
    assert "not found" not in result.stdout.str() + result.stderr.str()


def test_a_configured_run_uses_no_deprecated_pytest_api(repo: pytest.Pytester) -> None:
    # pytest 9 deprecates config.inicfg: reading it would warn in every user's run. The
    # warning is raised while pytest configures, so it is recorded here, around the run.
    import warnings

    repo.makeini("[pytest]\nragproof_dataset = cases.frozen.json\nragproof_k = 1,3,5\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _run(repo, [])
    assert result.ret == 0, result.stdout.str()
    ours = [w for w in caught if "pytest_ragproof" in str(w.filename)]
    assert not ours, [f"{w.filename}:{w.lineno}: {w.message}" for w in ours]
