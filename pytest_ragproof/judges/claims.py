"""``answer-claims``: the answer's claims, extracted once per case and shared.

``faithfulness``, ``answer_relevancy`` and ``answer_correctness`` judge the same
claims; the engine extracts them with :data:`STEP` before running those judges.
"""

from __future__ import annotations

import re

from pytest_ragproof.judges import grounding
from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask
from pytest_ragproof.judges.prompts import Messages, Step

STEP = Step(
    "answer-claims",
    1,
    "You split an answer to a question into its factual claims. Each claim is one short, "
    "standalone sentence that can be checked on its own (replace pronouns by what they "
    "refer to). Leave out greetings, hedges, refusals and statements about the answerer. "
    'An answer that states no fact has no claims: reply {"claims": []}.',
)


def prompt(question: str, answer: str) -> Messages:
    return STEP.messages(f"Question:\n{question}\n\nAnswer:\n{answer}")


async def extract(ask: Ask, question: str, answer: str) -> list[str]:
    """The answer's claims, stripped, empty ones dropped."""
    with grounding.claims_from("answer", answer, question):
        extracted = await ask(
            STEP, prompt(question, answer), S.Claims, items=len(sentences(answer))
        )
    return [c.strip() for c in extracted.claims if c.strip()]


def sentences(text: str) -> list[str]:
    """A rough claim split, used only to size dry-run estimates of dependent steps."""
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s] or [text]
