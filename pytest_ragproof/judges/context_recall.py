"""``context_recall``: the share of the reference answer's claims the contexts contain.

One call splits the reference answer into claims and attributes each to a context
(its rank is kept) or not.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.judges import grounding
from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject, rank
from pytest_ragproof.judges.prompts import Messages, Step, passages

STEP = Step(
    "context-recall",
    1,
    "You check whether retrieved passages contain what a reference answer says. Split the "
    "reference answer into its factual claims (short standalone sentences). For each claim "
    "reply verdict 'yes' when the passages state it or it follows directly from them, "
    "giving in 'context' the number of that passage, and 'no' otherwise.",
)


def prompt(question: str, reference: str, contexts: Sequence[str]) -> Messages:
    return STEP.messages(
        f"Question:\n{question}\n\nReference answer:\n{reference}\n\n"
        f"Passages:\n{passages(contexts)}"
    )


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    x, contexts = s.inputs, s.contexts
    assert x.reference is not None
    messages = prompt(x.question, x.reference, contexts)
    with grounding.claims_from("reference answer", x.reference, x.question):
        reply = await ask(STEP, messages, S.ContextRecall, items=4)
    claims = reply.reference_claims
    out.metrics["context_recall"] = sum(1 for c in claims if c.verdict) / len(claims)
    out.details["context_recall"] = {
        "prompt": STEP.prompt_version,
        "reference_claims": [
            {
                "claim": c.claim,
                "verdict": "attributed" if c.verdict else "not attributed",
                "context": rank(c.context, len(contexts)) if c.verdict else None,
            }
            for c in claims
        ],
    }


JUDGE = Judge("context_recall", STEP, run, contexts=True, reference=True)
