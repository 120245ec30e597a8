"""``faithfulness``: the share of the answer's claims the retrieved contexts support.

One batched call judges every claim against the numbered context texts; each
supported claim keeps the rank of the passage that supports it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragproof.judges import schemas as S
from pytest_ragproof.judges.base import Ask, CaseJudgement, Judge, Subject, rank
from pytest_ragproof.judges.prompts import Messages, Step, numbered, passages

STEP = Step(
    "faithfulness",
    1,
    "You check claims against retrieved context passages. For each claim, in order, reply "
    "verdict 'yes' when the passages state it or it follows directly from them, and 'no' "
    "when they contradict it, do not mention it, or you cannot tell. For a 'yes', give in "
    "'context' the number of the passage that supports it. Use only the passages, never "
    "your own knowledge.",
)


def prompt(claims: Sequence[str], contexts: Sequence[str]) -> Messages:
    return STEP.messages(
        f"Passages:\n{passages(contexts)}\n\nClaims ({len(claims)}):\n{numbered(claims)}"
    )


async def run(ask: Ask, out: CaseJudgement, s: Subject) -> None:
    claims, contexts = s.claims, s.contexts
    schema = S.fixed(S.ClaimVerdict, len(claims))
    reply = await ask(STEP, prompt(claims, contexts), schema, items=len(claims))
    verdicts: list[S.ClaimVerdict] = reply.verdicts  # type: ignore[attr-defined]
    items = [
        {
            "claim": claim,
            "verdict": "supported" if v.verdict else "unsupported",
            "context": rank(v.context, len(contexts)) if v.verdict else None,
        }
        for claim, v in zip(claims, verdicts, strict=True)
    ]
    supported = sum(1 for v in verdicts if v.verdict)
    out.metrics["faithfulness"] = supported / len(claims)
    out.details["faithfulness"] = {"prompt": STEP.prompt_version, "claims": items}


JUDGE = Judge("faithfulness", STEP, run, claims=True, contexts=True)
