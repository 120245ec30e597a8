"""``answer_relevancy``: the share of the answer's statements that address the question.

The statements are the answer's claims; one call judges them all. No embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject
from pytest_ragproof.judges.prompts import Messages, Step, numbered

STEP = Step(
    "answer-relevancy",
    1,
    "You check whether statements address a question. For each statement, in order, reply "
    "verdict 'yes' when it helps answer the question and 'no' when it is off-topic, "
    "filler or about something else.",
)


def prompt(question: str, claims: Sequence[str]) -> Messages:
    return STEP.messages(
        f"Question:\n{question}\n\nStatements ({len(claims)}):\n{numbered(claims)}"
    )


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    claims = s.claims
    schema = S.fixed(S.PlainVerdict, len(claims))
    reply = await ask(STEP, prompt(s.inputs.question, claims), schema, items=len(claims))
    verdicts: list[S.PlainVerdict] = reply.verdicts  # type: ignore[attr-defined]
    items = [
        {"statement": claim, "verdict": "relevant" if v.verdict else "irrelevant"}
        for claim, v in zip(claims, verdicts, strict=True)
    ]
    out.metrics["answer_relevancy"] = sum(1 for v in verdicts if v.verdict) / len(claims)
    out.details["answer_relevancy"] = {"prompt": STEP.prompt_version, "statements": items}


JUDGE = Judge("answer_relevancy", STEP, run, claims=True)
