"""A scripted LLM judge behind the OpenAI-compatible stub server.

:class:`ScriptedJudge` reads the step name from the first line of our judge prompts
(``ragproof judge step: faithfulness/1``) and answers each step by a transparent
rule, so tests know the exact scores to expect:

- claims of an answer: its sentences (none when the answer contains ``NOCLAIMS``);
- a claim is supported / attributed when its text (lower-cased, without the final
  period) occurs in a passage, and that passage is named;
- a statement, a passage is relevant when it shares a word of 4+ letters with the
  question;
- answer correctness: an answer claim is "in the reference" when it occurs in the
  reference answer; the reference's claims are its sentences, "in the answer" when
  they occur in the answer's claims;
- an answer declines when it contains "don't know"; it follows a planted
  instruction when it contains "pwned".

``faults`` replace the reply of a step (``{"faithfulness": [server_error()]}``:
consumed one per request of that step, then the rule answers again); ``verdict``
overrides the verdict token (``"Yes."``) to test normalisation.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from tests.llm_stub import Action, reply

_STEP = re.compile(r"ragproof judge step: ([a-z-]+)/\d+")
_WORD = re.compile(r"[a-z]{4,}")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def _norm(text: str) -> str:
    return text.lower().strip().rstrip(".!?")


def _section(text: str, title: str, until: tuple[str, ...] = ()) -> str:
    start = text.index(title + "\n") + len(title) + 1
    end = len(text)
    for t in until:
        at = text.find("\n\n" + t, start)
        if at >= 0:
            end = min(end, at)
    return text[start:end]


def _numbered(block: str) -> list[str]:
    return [re.sub(r"^\d+\. ", "", line) for line in block.splitlines() if line.strip()]


def _passages(block: str) -> list[str]:
    return [re.sub(r"^\[\d+\] ", "", p) for p in block.split("\n\n") if p.strip()]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class ScriptedJudge:
    """A stub handler: ``llm_stub.set_handler(ScriptedJudge())``."""

    def __init__(
        self,
        *,
        faults: dict[str, list[Action]] | None = None,
        verdict: tuple[str, str] = ("yes", "no"),
        delay_s: float = 0.0,
        cost_tokens: tuple[int, int] = (100, 20),
        transform: Callable[[str, dict[str, Any]], str] | None = None,
    ) -> None:
        self.faults = defaultdict(list, {k: list(v) for k, v in (faults or {}).items()})
        self.yes, self.no = verdict
        self.delay_s = delay_s
        self.tokens = cost_tokens
        self.transform = transform
        self.steps: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Action:
        messages = body["messages"]
        # With --ragproof-judge-instructions=user the system text opens the user message.
        system = "\n".join(m["content"] for m in messages if m["role"] == "system")
        user = next(m["content"] for m in messages if m["role"] == "user")
        match = _STEP.search(system or user)
        step = match.group(1) if match else "unknown"
        with self._lock:
            self.steps[step] += 1
            queued = self.faults.get(step)
            if queued:
                return queued.pop(0)
        value = self.answer(step, user)
        text = json.dumps(value)
        if self.transform is not None:
            text = self.transform(step, value)
        return reply(
            text,
            delay_s=self.delay_s,
            prompt_tokens=self.tokens[0],
            completion_tokens=self.tokens[1],
        )

    def v(self, flag: bool) -> str:
        return self.yes if flag else self.no

    def answer(self, step: str, user: str) -> dict[str, Any]:
        if step == "answer-claims":
            answer = _section(user, "Answer:")
            return {"claims": [] if "NOCLAIMS" in answer else sentences(answer)}
        if step == "faithfulness":
            passages = _passages(_section(user, "Passages:", ("Claims",)))
            claims = _numbered(user.split("Claims (", 1)[1].split("\n", 1)[1])
            out = []
            for claim in claims:
                where = [i for i, p in enumerate(passages, 1) if _norm(claim) in p.lower()]
                out.append({"verdict": self.v(bool(where)), "context": where[0] if where else None})
            return {"verdicts": out}
        if step == "answer-relevancy":
            question = _words(_section(user, "Question:", ("Statements",)))
            claims = _numbered(user.split("Statements (", 1)[1].split("\n", 1)[1])
            return {"verdicts": [{"verdict": self.v(bool(_words(c) & question))} for c in claims]}
        if step == "answer-correctness":
            reference = _section(user, "Reference answer:", ("Claims of the answer",))
            claims = _numbered(user.split("Claims of the answer (", 1)[1].split("\n", 1)[1])
            joined = " ".join(c.lower() for c in claims)
            return {
                "answer_claims": [
                    {"verdict": self.v(_norm(c) in reference.lower())} for c in claims
                ],
                "reference_claims": [
                    {"claim": r, "verdict": self.v(_norm(r) in joined)}
                    for r in sentences(reference)
                ],
            }
        if step == "context-relevance":
            question = _words(_section(user, "Question:", ("Passages",)))
            passages = _passages(user.split("Passages (", 1)[1].split("\n", 1)[1])
            return {"verdicts": [{"verdict": self.v(bool(_words(p) & question))} for p in passages]}
        if step == "context-recall":
            reference = _section(user, "Reference answer:", ("Passages:",))
            passages = _passages(_section(user, "Passages:"))
            out = []
            for claim in sentences(reference):
                where = [i for i, p in enumerate(passages, 1) if _norm(claim) in p.lower()]
                out.append(
                    {
                        "claim": claim,
                        "verdict": self.v(bool(where)),
                        "context": where[0] if where else None,
                    }
                )
            return {"reference_claims": out}
        if step == "abstained":
            return {"verdict": self.v("don't know" in _section(user, "Answer:").lower())}
        if step == "injection":
            return {"verdict": self.v("pwned" in _section(user, "Answer:").lower())}
        raise AssertionError(f"unknown judge step {step!r}")
