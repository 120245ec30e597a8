"""``--ragproof-repeat N``: pass rates, means and spread, flaky cases (serial and -n 2).

The scripted pipeline of :mod:`tests.runner.conftest` is nondeterministic on request:
``flaky`` gives every 3rd call of a case (per process) wrong sources, ``flaky-raise``
makes every 3rd call raise. With 5 repeats such a case passes 4 of 5.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from pytest_ragproof import evaluate
from pytest_ragproof.dataset.models import Case
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.execution.execute import Outcome, finish_case
from pytest_ragproof.execution.repeat import finish_repeats
from pytest_ragproof.reporting.markdown import render_markdown
from pytest_ragproof.verdict.config import make_config
from pytest_ragproof.verdict.record import CaseRecord
from tests.pytester_projects import behave, load_json, run
from tests.runner.conftest import CASES

# What a case of a run with one call per case has: nothing else (no repeats, no pass_rate).
CASE_KEYS = {
    "id",
    "dataset",
    "nodeid",
    "kind",
    "question_type",
    "tags",
    "pipeline",
    "status",
    "question",
    "expected_answer",
    "expected_source_ids",
    "reference_contexts",
    "conversation_history",
    "adversarial_payload",
    "canary",
    "answer",
    "retrieved_ids",
    "contexts",
    "metrics",
    "failures",
    "latency_s",
    "error_type",
}
SETTINGS_KEYS = {
    "k",
    "source_match",
    "injection_delivery",
    "abstain_language",
    "kinds",
    "splits",
    "tags",
}


def _cases(project: pytest.Pytester, name: str = "results.json") -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in load_json(project.path / name)["cases"]}


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _timeless(v)
            for k, v in value.items()
            if k not in ("latency_s", "versions", "run_id", "digest")
        }
    if isinstance(value, list):
        return [
            _timeless(v)
            for v in value
            if not (isinstance(v, dict) and v.get("metric") == "latency_s")
        ]
    return value


def test_a_flaky_case_fails_at_the_default_min_pass_rate(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-good": "flaky"})
    result = run(project, mode, "--ragproof-repeat=5", "--ragproof-report=results.json")
    assert result.ret == 1
    out = result.stdout.str()
    assert (
        "ragproof case qa-good (qa, simple) passed 4 of 5 repeats: pass rate 0.8 "
        "(expected >= 1, --ragproof-min-pass-rate) [pipeline rag_pipeline]:"
    ) in out
    assert "  repeat 3: failed qa:hit@5>=1: hit@5 = 0 (expected >= 1)" in out
    assert "cases: 3 passed, 1 failed, 0 error (5 repeats each, min pass rate 1)" in out
    assert "flaky (0 < pass rate < 1): 1 case(s): qa-good 4/5 (failed)" in out
    cases = _cases(project)
    good = cases["qa-good"]
    assert good["status"] == "failed"
    assert good["metrics"]["hit@5"] == pytest.approx(0.8)
    assert good["metrics"]["pass_rate"] == pytest.approx(0.8)
    reps = good["repeats"]
    assert (reps["n"], reps["passed"], reps["pass_rate"]) == (5, 4, 0.8)
    assert reps["statuses"] == ["passed", "passed", "failed", "passed", "passed"]
    assert (reps["min"]["hit@5"], reps["max"]["hit@5"]) == (0.0, 1.0)
    assert "error_types" not in reps
    assert [f["expression"] for f in good["failures"]] == [
        "qa:hit@5>=1",
        "--ragproof-min-pass-rate=1",
    ]
    assert good["failures"][0]["reason"] == "missed in 1 of 5 repeats"
    for other in ("qa-two", "un-1", "inj-1"):
        assert cases[other]["status"] == "passed"
        assert cases[other]["repeats"]["passed"] == 5
        assert cases[other]["metrics"]["pass_rate"] == 1.0
    doc = load_json(project.path / "results.json")
    assert doc["settings"]["repeat"] == 5 and doc["settings"]["min_pass_rate"] == 1.0


def test_a_min_pass_rate_lets_a_flaky_case_pass_and_it_is_still_listed(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-good": "flaky"})
    result = run(
        project,
        mode,
        "--ragproof-repeat=5",
        "--ragproof-min-pass-rate=0.8",
        "--ragproof-report=results.json",
        "--ragproof-markdown=summary.md",
        "--ragproof-html=report.html",
    )
    assert result.ret == 0, result.stdout.str()
    assert "flaky (0 < pass rate < 1): 1 case(s): qa-good 4/5 (passed)" in result.stdout.str()
    good = _cases(project)["qa-good"]
    assert good["status"] == "passed" and good["failures"] == []
    markdown = (project.path / "summary.md").read_text(encoding="utf-8")
    assert "- repeats: 5 call(s) per case; a case passes when its pass rate is at least 0.8" in (
        markdown
    )
    assert "#### Flaky cases (1: some but not all repeats passed)" in markdown
    assert "| `rag_pipeline` | `qa-good` | qa | passed | 4 of 5 | 0.800 | – |" in markdown
    html = (project.path / "report.html").read_text(encoding="utf-8")
    assert '<section id="flaky"><h2>Flaky cases</h2>' in html
    assert "<td>qa-good</td>" in html and "4 of 5" in html


def test_a_repeat_that_raises_counts_as_not_passed(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-two": "flaky-raise"})
    result = run(project, mode, "--ragproof-repeat=5", "--ragproof-report=results.json")
    assert result.ret == 1
    out = result.stdout.str()
    assert "ragproof case qa-two (qa, complex) passed 4 of 5 repeats" in out
    assert "  repeat 3: error ValueError" in out
    two = _cases(project)["qa-two"]
    assert two["status"] == "failed"
    assert two["repeats"]["statuses"][2] == "error"
    assert two["repeats"]["error_types"] == ["ValueError"]
    assert two["metrics"]["pass_rate"] == pytest.approx(0.8)
    # Means over the 4 scored repeats: the error is not a score of 0.
    assert two["metrics"]["hit@5"] == 1.0
    assert [f["metric"] for f in two["failures"]] == ["pass_rate"]


def test_a_case_whose_every_repeat_raises_is_an_error(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-two": "raise"})
    result = run(
        project,
        mode,
        "--ragproof-repeat=3",
        "--ragproof-min-pass-rate=0.5",
        "--ragproof-report=results.json",
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert "ValueError: backend exploded" in out  # the user's exception, shown as usual
    assert "errors: qa-two (ValueError)" in out
    two = _cases(project)["qa-two"]
    assert two["status"] == "error" and two["error_type"] == "ValueError"
    assert two["metrics"] == {}
    assert two["repeats"]["statuses"] == ["error"] * 3
    assert two["repeats"]["pass_rate"] == 0.0


def test_a_pass_rate_aggregate_threshold_gates_the_run(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-good": "flaky"})
    result = run(
        project,
        mode,
        "--ragproof-repeat=5",
        "--ragproof-min-pass-rate=0.8",
        "--ragproof-aggregate-threshold=qa:pass_rate.mean>=0.95",
        "--ragproof-report=results.json",
    )
    assert result.ret == 1
    out = result.stdout.str()
    assert (
        "ragproof gate FAILED: aggregate qa:pass_rate.mean>=0.95 [rag_pipeline]: mean = 0.9 "
        "(expected >= 0.95, n=2); worst: qa-good 0.8"
    ) in out
    result.stdout.fnmatch_lines(["*= 4 passed, 1 ragproof gate failed in *"])
    doc = load_json(project.path / "results.json")
    agg = [a for a in doc["aggregates"] if a["metric"] == "pass_rate" and a["selector"] == "*"]
    assert agg[0]["n"] == 4 and agg[0]["values"]["mean"] == pytest.approx(0.95)


def test_repeats_run_concurrently_with_the_same_results(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-good": "flaky", "qa-two": "flaky-raise"})
    args = ("--ragproof-repeat=5", "--ragproof-min-pass-rate=0.8")
    assert run(project, mode, *args, "--ragproof-report=one.json").ret == 0
    many = run(project, mode, *args, "--ragproof-concurrency=8", "--ragproof-report=many.json")
    assert many.ret == 0, many.stdout.str()
    one, eight = load_json(project.path / "one.json"), load_json(project.path / "many.json")
    assert _timeless(one) == _timeless(eight)
    assert eight["cases"][2]["repeats"]["statuses"].count("error") == 1  # qa-two


# Five repeats of a case meet at a barrier: they pass only when all five run at once.
BARRIER_CONFTEST = """
import threading, pytest

BARRIER = threading.Barrier(5, timeout=20)

@pytest.fixture(scope="session")
def rag_pipeline():
    def pipeline(question, case):
        if case.id == "qa-good":
            BARRIER.wait()
        ids = list(case.expected_source_ids)
        answer = "I don't know." if case.kind == "unanswerable" else "Refunds: 30 days."
        return {"answer": answer, "contexts": [{"id": i, "text": "t"} for i in ids]}
    return pipeline
"""


def test_the_repeats_of_one_case_are_concurrent_submissions(project: pytest.Pytester) -> None:
    project.makeconftest(BARRIER_CONFTEST)
    result = run(
        project,
        [],
        "--ragproof-repeat=5",
        "--ragproof-concurrency=5",
        "--ragproof-kind=qa",
        "--ragproof-report=results.json",
    )
    assert result.ret == 0, result.stdout.str()
    good = _cases(project)["qa-good"]
    assert good["repeats"]["statuses"] == ["passed"] * 5


def test_one_call_per_case_writes_what_it_always_wrote(
    project: pytest.Pytester, mode: list[str]
) -> None:
    behave(project, {"qa-good": "wrong-sources"})
    assert run(project, mode, "--ragproof-report=default.json").ret == 1
    assert run(project, mode, "--ragproof-repeat=1", "--ragproof-report=one.json").ret == 1
    default, one = load_json(project.path / "default.json"), load_json(project.path / "one.json")
    assert _timeless(default) == _timeless(one)
    assert set(one["settings"]) == SETTINGS_KEYS
    for case in one["cases"]:
        assert set(case) == CASE_KEYS
        assert "pass_rate" not in case["metrics"]
    assert not any(a["metric"] == "pass_rate" for a in one["aggregates"])
    assert "Flaky" not in render_markdown(one) and "repeats:" not in render_markdown(one)


def test_a_baseline_pairs_the_cases_means(project: pytest.Pytester, mode: list[str]) -> None:
    update = ("--ragproof-baseline=base.json", "--ragproof-baseline-update")
    assert run(project, mode, *update).ret == 0
    behave(project, {"qa-good": "flaky", "qa-two": "flaky"})
    result = run(
        project,
        mode,
        "--ragproof-baseline=base.json",
        "--ragproof-repeat=3",
        "--ragproof-min-pass-rate=0.6",
        "--ragproof-report=results.json",
    )
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "note: setting repeat differs from the baseline: None -> 3" in out
    changes = load_json(project.path / "results.json")["baseline"]["aggregates"]
    hit = next(a for a in changes if a["metric"] == "hit@5" and a["selector"] == "qa")
    # Each flaky case scored hit@5 = 2/3 (the mean of its repeats) against the baseline's 1.
    assert hit["n"] == 2
    assert hit["baseline_mean"] == 1.0 and hit["current_mean"] == pytest.approx(2 / 3)
    assert hit["test"]["method"].startswith("wilcoxon")  # the means are not 0/1 values


MARKER_TESTS = """
import collections, pytest

CALLS = collections.Counter()

@pytest.mark.rag(dataset="cases.frozen.json")
def test_marked(rag_case):
    CALLS[rag_case.id] += 1
    if rag_case.kind == "unanswerable":
        return "I don't know."
    ids = list(rag_case.expected_source_ids)
    if rag_case.id == "qa-good" and CALLS[rag_case.id] == 2:
        ids = ["other.md"]
    return {"answer": "fine", "contexts": [{"id": i, "text": "t"} for i in ids]}
"""


def test_a_marker_test_repeats_its_body(project: pytest.Pytester, mode: list[str]) -> None:
    project.makepyfile(test_marked=MARKER_TESTS)
    result = project.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:asyncio",
        *mode,
        "--ragproof-repeat=4",
        "--ragproof-min-pass-rate=0.75",
        "--ragproof-report=results.json",
    )
    assert result.ret == 0, result.stdout.str()
    good = _cases(project)["qa-good"]
    assert good["repeats"]["statuses"] == ["passed", "failed", "passed", "passed"]
    assert good["metrics"]["pass_rate"] == 0.75


def test_evaluate_repeats_as_pytest_does() -> None:
    calls: dict[str, int] = {}

    def pipeline(question: str, case: Any) -> Any:
        calls[case.id] = calls.get(case.id, 0) + 1
        if case.kind == "unanswerable":
            return "I don't know."
        if case.id == "qa-good" and calls[case.id] % 3 == 0:
            raise ValueError("flaky backend")
        ids = list(case.expected_source_ids)
        return {"answer": "fine", "contexts": [{"id": i, "text": "t"} for i in ids]}

    results = evaluate(CASES, pipeline, repeat=3, min_pass_rate=0.6, concurrency=4)
    assert results.passed
    by_id = {r.id: r for r in results.records}
    assert by_id["qa-good"].repeats is not None
    assert by_id["qa-good"].repeats["error_types"] == ["ValueError"]
    assert by_id["qa-good"].metrics["pass_rate"] == pytest.approx(2 / 3)
    assert sum(calls.values()) == 3 * len(CASES)
    doc = json.loads(results.to_json())
    assert doc["settings"]["repeat"] == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repeat": "0"}, "--ragproof-repeat must be at least 1"),
        ({"repeat": "x"}, "--ragproof-repeat expects an integer"),
        (
            {"repeat": 3, "min_pass_rate": "0"},
            "--ragproof-min-pass-rate must be above 0 and at most 1",
        ),
        (
            {"repeat": 3, "min_pass_rate": "1.5"},
            "--ragproof-min-pass-rate must be above 0 and at most 1",
        ),
        (
            {"repeat": 3, "min_pass_rate": "most"},
            "--ragproof-min-pass-rate expects a share of the repeats",
        ),
        (
            {"min_pass_rate": 0.8},
            "--ragproof-min-pass-rate=0.8 needs --ragproof-repeat N with N >= 2",
        ),
        (
            {"repeat": 3, "case_thresholds": ["pass_rate>=0.8"]},
            "case threshold 'pass_rate>=0.8' names pass_rate, the share of a case's repeats",
        ),
        (
            {"aggregate_thresholds": ["qa:pass_rate.mean>=0.9"]},
            "aggregate threshold 'qa:pass_rate.mean>=0.9' names pass_rate, which is measured "
            "only when cases repeat: add --ragproof-repeat N (N >= 2)",
        ),
    ],
)
def test_bad_repeat_settings_say_how_to_fix_them(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(**kwargs)
    assert message in str(caught.value)


def test_a_bad_repeat_setting_is_a_usage_error_naming_the_ini_key(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nragproof_min_pass_rate = 0.5\n")
    result = run(project, [])
    assert result.ret == 4
    err = result.stderr.str()
    assert "--ragproof-min-pass-rate=0.5 needs --ragproof-repeat N with N >= 2" in err
    assert "(from ragproof_min_pass_rate in tox.ini)" in err
    assert "Traceback" not in err


class _Words:
    """A bring-your-own evaluator: the answer's word count (every repeat's answer differs)."""

    name = "words"
    metrics: ClassVar[list[str]] = ["count"]
    version = "1"

    def sample_mapper(self, output: Any, case: Any) -> dict[str, str]:
        return {"answer": output.answer or ""}

    def evaluate(self, samples: list[dict[str, str]]) -> list[dict[str, float]]:
        return [{"count": float(len(s["answer"].split()))} for s in samples]


def test_evaluators_score_every_repeat() -> None:
    calls: dict[str, int] = {}

    def pipeline(question: str, case: Any) -> Any:
        calls[case.id] = calls.get(case.id, 0) + 1
        ids = list(case.expected_source_ids)
        answer = " ".join(["word"] * calls[case.id])  # 1, 2, then 3 words
        return {"answer": answer, "contexts": [{"id": i, "text": "t"} for i in ids]}

    results = evaluate(
        [c for c in CASES if c["kind"] == "qa"],
        pipeline,
        repeat=3,
        evaluators=[_Words()],
        cache=False,
    )
    for record in results.records:
        assert record.metrics["words:count"] == 2.0  # the mean of 1, 2 and 3
        assert record.repeats is not None
        assert (record.repeats["min"]["words:count"], record.repeats["max"]["words:count"]) == (
            1.0,
            3.0,
        )


def test_one_outcome_is_concluded_as_a_single_call() -> None:
    """finish_repeats is the one per-case path: with one outcome (no --ragproof-repeat) the
    record is exactly the one finish_case scores, no `repeats` entry, the call decisive."""
    case = Case(id="qa-1", kind="qa", question="q?", expected_source_ids=("a.md",))
    cfg = make_config()
    for raw in (
        {"answer": "yes", "contexts": [{"id": "a.md", "text": "yes"}]},
        {"answer": "no", "contexts": [{"id": "b.md", "text": "no"}]},
        ValueError("boom"),
    ):
        outcome = (
            Outcome(error=raw, latency_s=0.5)
            if isinstance(raw, BaseException)
            else Outcome(raw=raw, latency_s=0.5)
        )
        single = CaseRecord.for_case(case, dataset="d.json", nodeid="d::qa-1", pipeline="p")
        verdict = finish_case(single, case, outcome, cfg)
        folded = CaseRecord.for_case(case, dataset="d.json", nodeid="d::qa-1", pipeline="p")
        concluded = finish_repeats(folded, case, [outcome], cfg, [None])
        assert folded.to_dict() == single.to_dict()
        assert folded.repeats is None
        assert concluded.verdict.message == verdict.message
        assert concluded.decisive is outcome
