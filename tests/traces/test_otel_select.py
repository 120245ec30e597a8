"""Choosing what to keep: time window, service, sample, near-duplicates, cap, redaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import Ran
from tests.traces.otlp import rag_trace, read_jsonl, request, write_jsonl

Cli = Callable[..., Ran]
HOUR = 3_600_000  # ms


def run(cli: Cli, tmp_path: Path, files: list[Path], *options: str) -> tuple[Ran, list[Any]]:
    out = tmp_path / "cases.jsonl"
    ran = cli("import", "--from", "otel", *files, "-o", out, *options)
    assert ran.code == 0, ran.err
    return ran, read_jsonl(out)


def hours(tmp_path: Path, n: int = 6, name: str = "t.jsonl") -> Path:
    """``n`` traces an hour apart from 2025-11-24T16:00Z, question i is ``Question i?``,
    even ones from service ``web``, odd ones from ``api``."""
    requests = [
        request(rag_trace(i + 1, f"Question {i}?", start=i * HOUR), service=("web", "api")[i % 2])
        for i in range(n)
    ]
    return write_jsonl(tmp_path / name, requests)


def test_since_until_and_service(cli: Cli, tmp_path: Path) -> None:
    path = hours(tmp_path)
    ran, cases = run(
        cli,
        tmp_path,
        [path],
        "--since",
        "2025-11-24T17:00:00Z",
        "--until",
        "2025-11-24T20:00:00+00:00",
        "--service",
        "api",
    )
    assert [c["question"] for c in cases] == ["Question 1?", "Question 3?"]
    said = ran.out
    assert "traces: 6 read (18 span(s) in 1 file(s)), 2 kept, 4 skipped" in said
    assert "  1: started before --since" in said
    assert "  2: started at or after --until" in said
    assert "  1: another service than --service" in said
    _, naive = run(cli, tmp_path, [path], "--since", "2025-11-24T21:00")  # naive is UTC
    assert [c["question"] for c in naive] == ["Question 5?"]
    _, both = run(cli, tmp_path, [path], "--service", "api", "--service", "web")
    assert len(both) == 6


def test_sample_is_seeded_and_independent_of_file_order(cli: Cli, tmp_path: Path) -> None:
    path = hours(tmp_path, 30)
    lines = path.read_text().splitlines(keepends=True)
    reversed_path = tmp_path / "reversed.jsonl"
    reversed_path.write_text("".join(reversed(lines)))
    ran, a = run(cli, tmp_path, [path], "--sample", "5", "--seed", "3")
    _, b = run(cli, tmp_path, [reversed_path], "--sample", "5", "--seed", "3")
    _, c = run(cli, tmp_path, [path], "--sample", "5", "--seed", "4")
    assert len(a) == 5 and [x["id"] for x in a] == [x["id"] for x in b]
    assert [x["id"] for x in a] != [x["id"] for x in c]
    starts = [x["metadata"]["trace"]["timestamp"] for x in a]
    assert starts == sorted(starts)
    assert "  25: not in the --sample" in ran.out
    _, default_seed = run(cli, tmp_path, [path], "--sample", "5")
    _, seed_zero = run(cli, tmp_path, [path], "--sample", "5", "--seed", "0")
    assert default_seed == seed_zero


def test_near_duplicates_collapse_into_the_earliest(cli: Cli, tmp_path: Path) -> None:
    questions = ["How do I reset my password?", "how do i RESET my password", "Other?"]
    questions.append("  How do I reset my password?!  ")
    requests = [
        request(rag_trace(i + 1, q, start=(10 - i) * HOUR)) for i, q in enumerate(questions)
    ]
    path = write_jsonl(tmp_path / "d.jsonl", requests)
    ran, cases = run(cli, tmp_path, [path])
    assert [c["question"] for c in cases] == ["How do I reset my password?!", "Other?"]
    kept = cases[0]["metadata"]["trace"]
    assert kept["trace_id"] == f"{4:032x}"  # the earliest of the three
    assert kept["repeats"] == 2 and "repeats" not in cases[1]["metadata"]["trace"]
    assert "  2: a near-duplicate of an earlier trace's question" in ran.out


def test_max_cases_keeps_the_earliest(cli: Cli, tmp_path: Path) -> None:
    ran, cases = run(cli, tmp_path, [hours(tmp_path)], "--max-cases", "2")
    assert [c["question"] for c in cases] == ["Question 0?", "Question 1?"]
    assert "  4: over --max-cases" in ran.out


def test_redact_patterns_and_pii_reach_every_text(cli: Cli, tmp_path: Path) -> None:
    trace = rag_trace(
        1,
        "My order ORD-123456 for jo.doe@mail.example.com, phone (555) 123-4567",
        answer="Order ORD-123456 ships to jo.doe@mail.example.com",
        docs=[("orders/ORD-123456.md", 1.0)],
    )
    path = write_jsonl(tmp_path / "r.jsonl", [request(trace, service="shop ORD-000001")])
    _, [case] = run(
        cli, tmp_path, [path], "--redact", r"ORD-\d{6}", "--redact", "shop", "--redact-pii"
    )
    assert case["question"] == "My order [REDACTED] for [EMAIL], phone [PHONE]"
    trace_meta = case["metadata"]["trace"]
    assert trace_meta["answer"] == "Order [REDACTED] ships to [EMAIL]"
    assert trace_meta["retrieved"][0]["id"] == "orders/[REDACTED].md"
    assert trace_meta["service"] == "[REDACTED] [REDACTED]"
    text = (tmp_path / "cases.jsonl").read_text()
    assert "ORD-" not in text and "@" not in text and "555" not in text


def test_pii_leaves_dates_and_short_numbers(cli: Cli, tmp_path: Path) -> None:
    question = "Since 2025-11-24 my 3 invoices of 1200 euros; call +1 202 555 0143"
    path = write_jsonl(tmp_path / "p.jsonl", [request(rag_trace(1, question))])
    _, [case] = run(cli, tmp_path, [path], "--redact-pii")
    assert case["question"] == "Since 2025-11-24 my 3 invoices of 1200 euros; call [PHONE]"


def test_redaction_is_applied_before_duplicates_are_collapsed(cli: Cli, tmp_path: Path) -> None:
    requests = [
        request(rag_trace(1, "Write to a@example.com please")),
        request(rag_trace(2, "Write to b@example.org please", start=1)),
    ]
    path = write_jsonl(tmp_path / "r.jsonl", requests)
    _, cases = run(cli, tmp_path, [path], "--redact-pii")
    assert len(cases) == 1 and cases[0]["metadata"]["trace"]["repeats"] == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--redact", "(unclosed"], "--redact pattern 1 is not a regular expression"),
        (["--since", "yesterday"], "--since 'yesterday' is not an ISO 8601 date or time"),
        (["--since", "2025-11-02", "--until", "2025-11-01"], "--until must be later than --since"),
        (["--seed", "3"], "--seed chooses the --sample"),
        (["--sample", "0"], "must be at least 1"),
        (["--max-cases", "x"], "is not a whole number"),
        (["--corpus", "."], "--corpus does not apply to --from otel"),
    ],
)
def test_bad_options(cli: Cli, tmp_path: Path, options: list[str], message: str) -> None:
    out = tmp_path / "o.jsonl"
    ran = cli("import", "--from", "otel", hours(tmp_path, 1), "-o", out, *options)
    assert ran.code != 0 and message in ran.err
    assert "Traceback" not in ran.err and not out.exists()


def test_trace_options_belong_to_otel_and_other_tools_take_one_file(
    cli: Cli, tmp_path: Path
) -> None:
    src = tmp_path / "set.jsonl"
    src.write_text('{"question": "Q?", "reference_context": "x"}\n')
    out = tmp_path / "o.jsonl"
    ran = cli("import", "--from", "raget", src, "-o", out, "--redact-pii")
    assert ran.code != 0
    assert "--redact-pii applies to --from otel and --from phoenix only" in ran.err
    ran = cli("import", "--from", "raget", src, src, "-o", out)
    assert ran.code != 0 and "--from raget reads one FILE" in ran.err
    assert not out.exists()
