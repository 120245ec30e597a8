"""An output of a shape ragproof does not recognise makes the case an error, once, clearly."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ragproof.dataset.models import Case
from pytest_ragproof.execution.execute import Outcome, finish_case
from pytest_ragproof.verdict.config import make_config
from pytest_ragproof.verdict.record import CaseRecord

SECRET = "s3cr3t-passage"
CASE = Case(id="qa-1", kind="qa", question="q?", expected_source_ids=("guide.md",))


@dataclass
class Chunk:
    body: str
    ref: str


@dataclass
class LangChainDoc:
    page_content: str
    metadata: dict[str, str]


def _finish(raw: object, **settings: str) -> tuple[CaseRecord, str | None]:
    cfg = make_config(**settings)  # type: ignore[arg-type]
    record = CaseRecord.for_case(CASE, dataset="d.json", nodeid="d.json::qa-1", pipeline="p")
    verdict = finish_case(record, CASE, Outcome(raw=raw, latency_s=0.01), cfg)
    return record, verdict.message


def test_unrecognised_context_is_an_error_naming_its_attributes() -> None:
    record, message = _finish({"answer": "x", "contexts": [Chunk(SECRET, SECRET)]})
    assert record.status == "error"
    assert record.error_type == "OutputShapeError"
    assert record.metrics == {}  # nothing scored, no content hash stands in for an id
    assert message is not None
    assert message.startswith(
        "ragproof case qa-1: context 1 (1-based): a Chunk with attributes 'body', 'ref' "
        "is not a recognised shape; expected a string;"
    )
    assert SECRET not in message


def test_langchain_source_is_the_document_id_in_document_mode() -> None:
    raw = {
        "input": "q?",
        "context": [LangChainDoc("t", {"source": "guide.md"})],
        "answer": "x",
    }
    record, message = _finish(raw, source_match="document")
    assert record.status == "passed", message
    assert record.metrics["hit@1"] == 1.0
    record, message = _finish(raw)  # chunk mode compares the content-hash id
    assert record.status == "failed"
    assert message is not None and "--ragproof-source-match=document" in message
