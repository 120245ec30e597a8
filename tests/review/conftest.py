"""Fixtures of the review app's tests: a judged results file, a generated review file
with its corpus, and a logged-in Starlette test client.

The judged results come from a real ``evaluate()`` run against the scripted judge
(tests/reporting/judged.py); the review file is written as ``ragproof generate``
writes one (provenance with document, chunk, span, model, confidence). Answers and
documents carry planted markup: the app must show it as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.reporting.judged import Judged
from tests.reporting.judged import judged as judged  # the judged runs' session fixture

TOKEN = "test-token-0123456789"
ORIGIN = "http://127.0.0.1:8000"
PLANTED = '<script>alert("answer")</script><img src=x onerror="alert(2)">'

DOCUMENT = (
    "# Refunds\n\n"
    "Refunds are accepted within 30 days of purchase. Refunds take 5 days.\n\n"
    '<script>alert("doc")</script> <img src=x onerror="alert(3)"> is not markup here.\n'
)
PLANS = "# Plans\n\nThe Enterprise plan has SSO. The Team plan has 10 seats.\n"


def write_results(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


@dataclass
class GeneratedFiles:
    """A review file of generated cases and the corpus they came from."""

    cases: Path
    corpus: Path
    ids: list[str]


def _span(text: str, start: str, end: str) -> list[int]:
    a = text.index(start)
    return [a, text.index(end, a) + len(end)]


def write_generated(root: Path) -> GeneratedFiles:
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "refunds.md").write_text(DOCUMENT, encoding="utf-8")
    (corpus / "plans.md").write_text(PLANS, encoding="utf-8")
    refunds = _span(DOCUMENT, "Refunds are", "5 days.")
    plans = _span(PLANS, "The Enterprise", "10 seats.")
    specs: list[tuple[str, list[int], str, str, float]] = [
        ("refunds.md", refunds, "How long is the refund window?", "30 days", 0.92),
        ("refunds.md", refunds, "How long do refunds take?", f"5 days {PLANTED}", 0.81),
        ("plans.md", plans, "Which plan has SSO?", "The Enterprise plan", 0.77),
        ("plans.md", plans, "How many seats has the Team plan?", "10 seats", 0.64),
    ]
    records: list[dict[str, Any]] = []
    for n, (doc, span, question, answer, confidence) in enumerate(specs):
        text = (DOCUMENT if doc == "refunds.md" else PLANS)[span[0] : span[1]]
        records.append(
            {
                "id": f"gen-0-qa-{n}",
                "kind": "qa",
                "question": question,
                "question_type": "simple",
                "synthetic": True,
                "review_status": "pending",
                "provenance": {
                    "document_id": doc,
                    "chunk_id": f"{doc}#0",
                    "span": span,
                    "model": "openai/stub",
                    "prompt_version": "qa/1",
                    "generator_version": "1",
                    "seed": 0,
                    "usage": {"prompt_tokens": 120, "completion_tokens": 30},
                    "confidence": confidence,
                },
                "expected_answer": answer,
                "expected_source_ids": [doc],
                "reference_contexts": [text],
            }
        )
    cases = root / "cases.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return GeneratedFiles(cases, corpus, [str(r["id"]) for r in records])


@pytest.fixture
def generated(tmp_path: Path) -> GeneratedFiles:
    return write_generated(tmp_path / "gen")


@pytest.fixture
def results_path(judged: Judged, tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", judged.full())


def login(app: Any) -> Any:
    """A test client holding the session cookie (it opened the printed URL)."""
    from starlette.testclient import TestClient

    client = TestClient(app, base_url=ORIGIN)
    first = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303 and "token" not in first.headers["location"]
    return client


@dataclass
class ImportedFiles:
    """Draft cases ``ragproof import --from otel`` wrote from OTLP traces, and their ids."""

    cases: Path
    ids: list[str]


PLANTED_ID = 'faq.md#<img src=x onerror="alert(4)">'


def write_imported(root: Path) -> ImportedFiles:
    """Three traces imported by the real command: the first answers with planted markup
    and retrieved a document whose id is planted markup too."""
    from pytest_ragproof.cli import main
    from tests.traces.otlp import rag_trace, read_jsonl, request, write_jsonl

    root.mkdir(parents=True)
    traces = write_jsonl(
        root / "traces.jsonl",
        [
            request(
                rag_trace(
                    1,
                    "How do I reset my password?",
                    answer=f"Use the reset link. {PLANTED}",
                    docs=(("faq.md#2", 0.82), (PLANTED_ID, 0.41)),
                )
            ),
            request(rag_trace(2, "What is the refund window?", answer="30 days.", start=10)),
            request(rag_trace(3, "Who won the 1998 World Cup?", answer="France.", start=20)),
        ],
    )
    cases = root / "cases.jsonl"
    assert main(["import", "--from", "otel", str(traces), "-o", str(cases)]) == 0
    return ImportedFiles(cases, [str(r["id"]) for r in read_jsonl(cases)])


@pytest.fixture
def imported(tmp_path: Path) -> ImportedFiles:
    return write_imported(tmp_path / "imported")
