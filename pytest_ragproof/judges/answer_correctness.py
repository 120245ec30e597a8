"""``answer_correctness``: F1 of the answer's claims against the reference answer.

One call judges each answer claim against the reference (precision) and splits the
reference into claims, each stated by the answer or not (recall); precision and
recall are reported too (``answer_correctness_precision`` / ``_recall``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.judges import grounding
from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject
from pytest_ragproof.judges.prompts import Messages, Step, numbered

STEP = Step(
    "answer-correctness",
    1,
    "You compare an answer with a reference answer. (1) For each claim of the answer, in "
    "order, reply verdict 'yes' when the reference answer states it or it follows from it "
    "and 'no' otherwise. (2) Split the reference answer into its factual claims (short "
    "standalone sentences) and for each reply verdict 'yes' when the answer states it and "
    "'no' otherwise.",
)


def prompt(question: str, reference: str, claims: Sequence[str]) -> Messages:
    return STEP.messages(
        f"Question:\n{question}\n\nReference answer:\n{reference}\n\n"
        f"Claims of the answer ({len(claims)}):\n{numbered(claims)}"
    )


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    x, claims = s.inputs, s.claims
    assert x.reference is not None
    schema = S.correctness(len(claims))
    messages = prompt(x.question, x.reference, claims)
    with grounding.claims_from("reference answer", x.reference, x.question):
        reply = await ask(STEP, messages, schema, items=len(claims) + 3)
    answer_v: list[S.PlainVerdict] = reply.answer_claims  # type: ignore[attr-defined]
    reference_v: list[S.ReferenceClaim] = reply.reference_claims  # type: ignore[attr-defined]
    precision = sum(1 for v in answer_v if v.verdict) / len(claims)
    recall = sum(1 for v in reference_v if v.verdict) / len(reference_v)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    out.metrics["answer_correctness"] = f1
    out.metrics["answer_correctness_precision"] = precision
    out.metrics["answer_correctness_recall"] = recall
    out.details["answer_correctness"] = {
        "prompt": STEP.prompt_version,
        "precision": precision,
        "recall": recall,
        "answer_claims": [
            {"claim": c, "verdict": "in reference" if v.verdict else "not in reference"}
            for c, v in zip(claims, answer_v, strict=True)
        ],
        "reference_claims": [
            {"claim": v.claim, "verdict": "in answer" if v.verdict else "missing from answer"}
            for v in reference_v
        ],
    }


JUDGE = Judge("answer_correctness", STEP, run, claims=True, reference=True)
