"""``abstained_judged``: does the answer decline (1.0) or answer (0.0)?

Reads like the lexical ``abstained`` metric: on qa cases a 1.0 is a false refusal.
"""

from __future__ import annotations

from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject
from pytest_ragproof.judges.prompts import Messages, Step

STEP = Step(
    "abstained",
    1,
    "You decide whether an answer declines to answer the question: it says it does not "
    "know, cannot answer, has no information, or refuses. An answer that gives any "
    "substantive answer, even a partial or wrong one, does not decline. Reply verdict "
    "'yes' when it declines and 'no' otherwise.",
)


def prompt(question: str, answer: str) -> Messages:
    return STEP.messages(f"Question:\n{question}\n\nAnswer:\n{answer}")


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    reply = await ask(STEP, prompt(s.inputs.question, s.answer), S.OneVerdict)
    out.metrics["abstained_judged"] = 1.0 if reply.verdict else 0.0
    out.details["abstained_judged"] = {
        "prompt": STEP.prompt_version,
        "verdict": "declined" if reply.verdict else "answered",
    }


JUDGE = Judge("abstained_judged", STEP, run, answer=True)
