"""The second pass: is each generated question what it claims to be?

* qa items (and injection bases): ONE request per generation request sends the
  same chunk and every item of that request (conversation, question, proposed
  answer), asking for exactly one verdict per item: is the question answerable
  from the passage alone, and is the answer right. A "no" to either discards
  the item (``not_answerable`` / ``wrong_answer``).
* unanswerable items: for each question the built-in BM25 retriever fetches the
  top ``k`` chunks of the whole corpus, and one request asks whether those
  passages answer it. "Yes" discards the item (``answerable``).

The verifier's ``confidence`` in the verdict that kept an item becomes the case's
``provenance.confidence``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from pytest_ragproof.generation.prompts import PROMPT_REVISION
from pytest_ragproof.generation.types import GeneratedItem, ItemRequest

QA_VERIFY_VERSION = f"ragproof.verify.qa/{PROMPT_REVISION}"
SCOPE_VERIFY_VERSION = f"ragproof.verify.unanswerable/{PROMPT_REVISION}"


class QAVerdict(BaseModel):
    index: int = Field(ge=1, description="the item number")
    answerable: bool = Field(description="the passage alone answers the question")
    answer_correct: bool = Field(description="the proposed answer is right and complete")
    confidence: float = Field(ge=0.0, le=1.0, description="how sure you are, 0 to 1")


class QAVerification(BaseModel):
    verdicts: list[QAVerdict]


class ScopeVerdict(BaseModel):
    answerable: bool = Field(description="the passages contain the answer")
    confidence: float = Field(ge=0.0, le=1.0, description="how sure you are, 0 to 1")


def _language(request: ItemRequest) -> str:
    return f"The questions are written in {request.language_name}."


def qa_messages(request: ItemRequest, items: Sequence[GeneratedItem]) -> list[dict[str, str]]:
    """The verification request for the items of one generation request."""
    n = len(items)
    system = "\n".join(
        (
            "You check test questions written for a retrieval-augmented assistant "
            "against the passage they were written from.",
            "For each numbered item decide: answerable: can the final question be fully "
            "answered from the passage alone, without outside knowledge? answer_correct: is "
            "the proposed answer correct and complete according to the passage? "
            "confidence: how sure you are of both verdicts, from 0 to 1.",
            _language(request),
            f'Reply with a JSON object {{"verdicts": [...]}} holding exactly {n} verdict(s), '
            "one per item in item order, each with the fields: index (the item number), "
            "answerable, answer_correct, confidence.",
        )
    )
    blocks = [f"Passage:\n<passage>\n{request.chunk.text}\n</passage>"]
    for number, item in enumerate(items, start=1):
        lines = [f"Item {number}"]
        for role, content in item.conversation_history:
            lines.append(f"Earlier {role} message: {content}")
        lines.append(f"Question: {item.question}")
        lines.append(f"Proposed answer: {item.answer or ''}")
        blocks.append("\n".join(lines))
    blocks.append(f"Give exactly {n} verdict(s).")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(blocks)},
    ]


def scope_messages(
    request: ItemRequest, item: GeneratedItem, contexts: Sequence[str]
) -> list[dict[str, str]]:
    """The request checking that ``item`` is NOT answered by the retrieved ``contexts``."""
    system = "\n".join(
        (
            "You check whether a question can be answered from passages a search engine "
            "retrieved for it.",
            "answerable: true if the passages contain the information needed to answer the "
            "question, fully or in large part; false if the answer is not in them. "
            "confidence: how sure you are of the verdict, from 0 to 1.",
            _language(request),
            "Reply with a JSON object with the fields: answerable, confidence.",
        )
    )
    blocks = [f"Question: {item.question}"]
    for number, text in enumerate(contexts, start=1):
        blocks.append(f"Passage {number}:\n<passage>\n{text}\n</passage>")
    if not contexts:
        blocks.append("(The search engine found no passage.)")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(blocks)},
    ]


def ordered_verdicts(reply: QAVerification, n: int) -> list[QAVerdict] | None:
    """The verdicts sorted by index when they are exactly items 1..n, else None."""
    verdicts = sorted(reply.verdicts, key=lambda v: v.index)
    if [v.index for v in verdicts] != list(range(1, n + 1)):
        return None
    return verdicts
