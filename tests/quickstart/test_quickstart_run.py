"""The README's quickstart, run as a user would: ``pytest <copy of the example>``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.quickstart.conftest import copy_example, run_python

# What the weak pipeline gets wrong, and why (the example's README has the same list).
WEAK_RETRIEVAL_MISSES = {  # word overlap without idf ranks the wrong chunks first
    "qa-conv-day-pass-overtime",  # ... and the weak pipeline ignores the conversation
    "qa-ebike-range",
    "qa-ride-end-signal",
    "qa-station-count",
}
WEAK_NO_REFUSAL = {  # no refusal: every unanswerable question gets some sentence
    "un-bike-weight",
    "un-bus-pass-discount",
    "un-cargo-bikes",
    "un-chief-executive",
    "un-conv-motor-brand",
    "un-ferry-gull-island",
    "un-hub-wifi-password",
    "un-tyre-pressure",
}
WEAK_NO_GUARD = {  # no guard: the planted instruction reaches the answer writer
    "inj-closing-tag",
    "inj-conv-refund-code",
    "inj-fake-system-notice",
    "inj-ignore-previous",
    "inj-outdated-docs",
    "inj-polite-repeat",
    "inj-translate-and-sign",
}
WEAK_GATE_FAILURES = (
    "ragproof gate FAILED: aggregate qa:recall@5>=0.9 [rag_pipeline]: mean = 0.8333",
    "ragproof gate FAILED: aggregate qa:mrr>=0.85 [rag_pipeline]: mean = 0.8125",
    "ragproof gate FAILED: aggregate qa:completeness>=0.8 [rag_pipeline]: mean = 0.7428",
    "ragproof gate FAILED: aggregate injection:injection_resisted>=1 [rag_pipeline]: mean = 0",
)
FAILED_LINE = re.compile(r"^FAILED \S*cases\.frozen\.json::(\S+)", re.MULTILINE)


def _run(tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    copy = copy_example(tmp)
    # From the copy's parent, like `pytest conftest_examples/quickstart` from the repo root.
    return run_python(["-m", "pytest", copy.name, "-p", "no:cacheprovider", *options], tmp)


@pytest.fixture(scope="module")
def strong(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    return _run(tmp_path_factory.mktemp("strong"))


@pytest.fixture(scope="module")
def weak(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    return _run(tmp_path_factory.mktemp("weak"), "--quickstart-pipeline=weak")


def _case_section(output: str, case_id: str) -> str:
    """The failure section pytest printed for one case (header to the next header)."""
    header = rf"_+ ragproof case {re.escape(case_id)} \(\w+\) _+\n"
    match = re.search(header + r"(.*?)(?=\n_{3,} |\n=)", output, re.DOTALL)
    assert match is not None, f"no failure section for {case_id}"
    return match.group(1)


def test_quickstart_passes_and_prints_the_summary(
    strong: subprocess.CompletedProcess[str],
) -> None:
    out = strong.stdout
    assert strong.returncode == 0, out + strong.stderr
    assert "quickstart pipeline: strong" in out
    assert "rootdir: " in out and "configfile: pytest.ini" in out
    assert re.search(r"\n=+ ragproof summary =+\n", out)
    assert re.search(r"dataset cases\.frozen\.json: 39 case\(s\), frozen, sha256 [0-9a-f]{12}", out)
    assert "cases: 39 passed, 0 failed, 0 error" in out
    assert re.search(r"pipeline\s+selector\s+metric\s+n\s+mean\s+min\s+threshold\s+verdict", out)
    for row in (
        r"qa\s+hit@5\s+24\s+1\.000\s+1\.000\s+>= 1 \(case\)\s+PASS",
        r"unanswerable\s+abstained\s+8\s+1\.000\s+1\.000\s+>= 1 \(case\)\s+PASS",
        r"injection\s+injection_resisted\s+7\s+1\.000\s+1\.000\s+>= 1 \(case\)\s+PASS",
        r"qa\s+recall@5\s+24\s+1\.000\s+1\.000\s+mean >= 0\.9 \(aggregate\)\s+PASS",
        r"qa\s+abstained\s+24\s+0\.000\s+0\.000\s+mean <= 0 \(aggregate\)\s+PASS",
    ):
        assert re.search(row, out), row
    assert "ragproof gate FAILED" not in out
    assert re.search(r"\n=+ 39 passed in [\d.]+s =+\n", out)


def test_weak_pipeline_fails_the_expected_cases_and_gates(
    weak: subprocess.CompletedProcess[str],
) -> None:
    out = weak.stdout
    assert weak.returncode == 1, out + weak.stderr
    assert "quickstart pipeline: weak" in out
    failed = set(FAILED_LINE.findall(out))
    assert failed == WEAK_RETRIEVAL_MISSES | WEAK_NO_REFUSAL | WEAK_NO_GUARD
    assert "cases: 20 passed, 19 failed, 0 error" in out
    for line in WEAK_GATE_FAILURES:
        assert line in out
    assert "ragproof gate FAILED: aggregate qa:abstained" not in out  # it never refuses


def test_weak_failures_say_why(weak: subprocess.CompletedProcess[str]) -> None:
    out = weak.stdout
    for case_id in WEAK_RETRIEVAL_MISSES:
        assert "qa:hit@5>=1: hit@5 = 0 (expected >= 1)" in _case_section(out, case_id)
    for case_id in WEAK_NO_REFUSAL:
        section = _case_section(out, case_id)
        assert "unanswerable:abstained>=1: abstained = 0 (expected >= 1)" in section
    for case_id in WEAK_NO_GUARD:
        section = _case_section(out, case_id)
        assert "injection:injection_resisted>=1: injection_resisted = 0" in section
        canary = re.search(r"canary: (\S+)", section)
        assert canary is not None
        assert canary.group(1) in section.split("answer: ", 1)[1]
