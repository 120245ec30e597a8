"""A baseline cannot hide a regression: malformed, edited or empty baselines are refused
(issue 30, items 3-4), before any case runs, naming the file, the case and the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragproof.errors import ConfigError
from pytest_ragproof.regression import compare
from pytest_ragproof.results.document import read_results, write_results
from pytest_ragproof.verdict.baseline import apply_baseline, baseline_settings
from tests.pytester_projects import load_json, resigned, run
from tests.regression.conftest import update
from tests.regression.factory import SHA_B, case, results

Doc = dict[str, Any]


def _baseline() -> Doc:
    return results([case(f"c{i}", {"hit@5": 1.0, "mrr": 1.0}) for i in range(4)])


def _written(tmp_path: Path, change: Callable[[Doc], Any] | None = None, *, digest: bool) -> Path:
    """A baseline written by pytest-ragproof, then changed (its digest kept, or computed again)."""
    path = tmp_path / "base.json"
    write_results(_baseline(), path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    if change is not None:
        change(doc)
    if not digest:
        doc["digest"] = resigned(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")  # NaN stays NaN, as a tool writes it
    return path


def _refusal(path: Path, *, update: bool = False) -> str:
    with pytest.raises(ConfigError) as info:
        baseline_settings(path, shown="base.json", update=update)
    return str(info.value)


def test_a_written_baseline_is_accepted_and_carries_its_digest(tmp_path: Path) -> None:
    path = _written(tmp_path, digest=True)
    baseline_settings(path, shown="base.json")
    assert set(load_json(path)["digest"]) == {"sha256", "covers"}
    # Re-digested: still readable (schema, ranges and duplicates checked).
    baseline_settings(_written(tmp_path, digest=False), shown="base.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d.update({"cases": None}),
            "base.json: field cases: Input should be a valid list",
        ),
        (lambda d: d.update({"cases": []}), "base.json: field cases: holds 0 case(s) and none"),
        (
            lambda d: d["cases"][1]["metrics"].update({"mrr": float("nan")}),
            "base.json: case c1 (cases[1]), field metrics.mrr: Input should be a finite number",
        ),
        (
            lambda d: d["cases"][2]["metrics"].update({"hit@5": 7.0}),
            "base.json: case c2 (cases[2]), field metrics.hit@5: 7 is outside the metric's range",
        ),
        (
            lambda d: d["cases"][0]["metrics"].update({"hit@5": "1"}),
            "base.json: case c0 (cases[0]), field metrics.hit@5: Input should be a valid number",
        ),
        (
            lambda d: d["cases"].append(dict(d["cases"][3])),
            "base.json: case c3 (cases[4]), field id: the case appears twice for pipeline p",
        ),
        (
            lambda d: [c.update({"status": "error"}) for c in d["cases"]],
            "base.json: field cases: holds 4 case(s) and none with a scored metric",
        ),
    ],
    ids=["null-cases", "empty", "nan", "out-of-range", "string", "duplicate", "all-errors"],
)
def test_a_malformed_baseline_is_a_usage_error(
    tmp_path: Path, change: Callable[[Doc], Any], message: str
) -> None:
    assert message in _refusal(_written(tmp_path, change, digest=False))


def test_an_edited_baseline_fails_its_digest(tmp_path: Path) -> None:
    def lower(doc: Doc) -> None:
        doc["cases"][0]["metrics"]["mrr"] = 0.5

    text = _refusal(_written(tmp_path, lower, digest=True))
    assert "base.json: field digest: the file's contents do not match the digest" in text
    # Truncated to fewer cases: the same.
    text = _refusal(_written(tmp_path, lambda d: d["cases"].pop(), digest=True))
    assert "field digest" in text


def test_a_folder_is_refused_as_baseline(tmp_path: Path) -> None:
    folder = tmp_path / "baselines"
    folder.mkdir()
    for update_ in (False, True):
        text = _refusal(folder, update=update_)
        assert "--ragproof-baseline base.json is a folder; give a file path such as" in text


def test_a_baseline_sharing_no_case_or_with_a_changed_kind_is_refused() -> None:
    base = _baseline()
    other = results([case("c0", {"hit@5": 1.0}, pipeline="other")])
    with pytest.raises(ConfigError, match="the baseline holds none of this run's 1 case"):
        compare(other, base)
    moved = _baseline()
    moved["cases"][2]["kind"] = "unanswerable"
    with pytest.raises(ConfigError, match=r"baseline's case c2 \[p\], field kind: 'unanswerable'"):
        compare(_baseline(), moved)
    # With another version of the dataset (allowed), a changed kind is a note, not paired.
    moved["datasets"][0]["sha256"] = SHA_B
    comparison = compare(_baseline(), moved, allow_dataset_change=True)
    assert "1 case(s) changed kind and are not paired: c2" in comparison.notes


def test_read_results_checks_only_when_asked(tmp_path: Path) -> None:
    path = _written(tmp_path, lambda d: d.update({"cases": None}), digest=False)
    assert read_results(path)["cases"] is None  # renderers read leniently, as before
    with pytest.raises(ConfigError, match="field cases"):
        read_results(path, check=True)


def test_a_null_baseline_stops_the_run_before_any_case(project: pytest.Pytester) -> None:
    update(project, [])
    doc = load_json(project.path / "base.json")
    doc["cases"] = None
    (project.path / "base.json").write_text(json.dumps(doc), encoding="utf-8")
    result = run(project, [], "--ragproof-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ragproof: base.json: field cases: Input should be a valid list, got null*"]
    )
    assert "nothing comparable" not in result.stdout.str()
    (project.path / "out").mkdir()
    result = run(project, [], "--ragproof-baseline=out", "--ragproof-baseline-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragproof-baseline out is a folder*"])


def test_a_baseline_comparing_nothing_fails_the_run(tmp_path: Path) -> None:
    settings = baseline_settings(_written(tmp_path, digest=True), shown="base.json")
    renamed = results([case(f"c{i}", {"hit@5": 1.0}, pipeline="v2") for i in range(4)])
    outcome = apply_baseline(settings, renamed)
    (failure,) = outcome.gate_failures
    assert failure.startswith(
        "baseline comparison not run: base.json: the baseline holds none of this run's 4 "
        "case(s) (baseline pipeline(s): p; this run: v2)"
    )
    # The same run against its own pipeline's baseline compares and passes.
    assert apply_baseline(settings, _baseline()).gate_failures == []


def test_a_baseline_naming_the_datasets_sha256_holds_the_datasets_ids(
    project: pytest.Pytester,
) -> None:
    """Issue 40.6: all ids but one renamed and the digest computed again: the baseline
    still names this dataset's sha256, so its ids must be the dataset's."""
    update(project, [])
    doc = load_json(project.path / "base.json")
    assert len(doc["cases"]) > 2
    for i, c in enumerate(doc["cases"][1:]):
        c["id"] = f"renamed-{i}"
    doc["digest"] = resigned(doc)
    (project.path / "base.json").write_text(json.dumps(doc), encoding="utf-8")
    result = run(project, [], "--ragproof-baseline=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ragproof gate FAILED: baseline refused: *base.json: case renamed-0 (cases?1?), "
            "field id: not a case of dataset cases.frozen.json although the baseline names its "
            "sha256 *"
        ]
    )
