"""``--ragproof-shard K/N`` and the tests that are not dataset cases (issue 29.11).

They run in shard 1 only (``--ragproof-shard-others=first``, the default), or in every
shard with ``--ragproof-shard-others=all``. ``@pytest.mark.rag`` tests are cases: each
shard runs its own. Real pytest runs of :mod:`tests.runner.shard_project` plus a file
of plain unit tests, serially and under ``-n 2`` (docs/ci.md).
"""

from __future__ import annotations

import pytest

from pytest_ragproof.verdict.shard import shard_of
from tests.pytester_projects import run
from tests.runner.shard_project import CASES, shard_project

__all__ = ["shard_project"]  # the fixture, imported for the tests below

UNIT_TESTS = """
def test_one():
    pass

def test_two():
    pass

def test_three():
    pass
"""

MARKED = """
import pytest

@pytest.mark.rag(dataset="cases.frozen.json", pipeline="marked")
def test_marked(rag_case):
    if rag_case.kind == "unanswerable":
        return "I don't know; that is not in the provided documents."
    ids = list(rag_case.expected_source_ids)
    return {"answer": "yes", "contexts": [{"id": i, "text": "yes"} for i in ids]}
"""


def _owned(k: int, n: int) -> int:
    return sum(shard_of("cases.frozen.json", str(c["id"]), n) == k for c in CASES)


@pytest.fixture
def with_units(shard_project: pytest.Pytester) -> pytest.Pytester:
    shard_project.makepyfile(test_units=UNIT_TESTS)
    return shard_project


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_other_tests_run_in_the_first_shard_only(
    with_units: pytest.Pytester, mode: list[str]
) -> None:
    runs = {k: run(with_units, mode, f"--ragproof-shard={k}/3") for k in (1, 2, 3)}
    for k, result in runs.items():
        outcomes = result.parseoutcomes()
        others = 3 if k == 1 else 0
        assert outcomes.get("passed", 0) == _owned(k, 3) + others, result.stdout.str()
        if not mode:  # xdist's controller does not count its workers' deselections
            assert outcomes.get("deselected", 0) == 3 - others
        note = f"shard {k}/3: 3 test(s) that are not dataset cases run in shard 1 only"
        assert (note in result.stdout.str()) is (k != 1)
        assert "pytest's selection" not in result.stdout.str()
        assert result.ret == 0


def test_others_all_keeps_them_in_every_shard(with_units: pytest.Pytester) -> None:
    result = run(with_units, [], "--ragproof-shard=2/3", "--ragproof-shard-others=all")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == _owned(2, 3) + 3
    assert "deselected" not in outcomes
    assert "not dataset cases" not in result.stdout.str()


def test_marked_tests_are_cases_and_shard_as_cases(with_units: pytest.Pytester) -> None:
    with_units.makepyfile(test_marked=MARKED)
    result = run(with_units, [], "--ragproof-shard=2/3")
    outcomes = result.parseoutcomes()
    # The dataset's items and the marked test's items of shard 2; the unit tests left out.
    assert outcomes.get("passed", 0) == 2 * _owned(2, 3), result.stdout.str()
    assert outcomes.get("deselected", 0) == 3
    assert result.ret == 0


def test_a_bad_value_is_a_usage_error(with_units: pytest.Pytester) -> None:
    result = run(with_units, [], "--ragproof-shard=2/3", "--ragproof-shard-others=some")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragproof-shard-others expects 'first' or 'all'; got 'some'*"])


def test_without_a_shard_every_test_runs(with_units: pytest.Pytester) -> None:
    result = run(with_units, [])
    assert result.parseoutcomes().get("passed", 0) == len(CASES) + 3
