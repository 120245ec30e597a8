"""``context_relevance``: the share of retrieved contexts useful to answer the question.

One call for all contexts; the per-context verdicts are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject
from pytest_ragproof.judges.prompts import Messages, Step, passages

STEP = Step(
    "context-relevance",
    1,
    "You check retrieved passages against a question. For each passage, in order, reply "
    "verdict 'yes' when it contains information useful to answer the question and 'no' "
    "otherwise.",
)


def prompt(question: str, contexts: Sequence[str]) -> Messages:
    return STEP.messages(
        f"Question:\n{question}\n\nPassages ({len(contexts)}):\n{passages(contexts)}"
    )


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    contexts = s.contexts
    schema = S.fixed(S.PlainVerdict, len(contexts))
    reply = await ask(STEP, prompt(s.inputs.question, contexts), schema, items=len(contexts))
    verdicts: list[S.PlainVerdict] = reply.verdicts  # type: ignore[attr-defined]
    out.metrics["context_relevance"] = sum(1 for v in verdicts if v.verdict) / len(contexts)
    out.details["context_relevance"] = {
        "prompt": STEP.prompt_version,
        "contexts": [
            {"context": i, "verdict": "relevant" if v.verdict else "irrelevant"}
            for i, v in enumerate(verdicts, 1)
        ],
    }


JUDGE = Judge("context_relevance", STEP, run, contexts=True)
