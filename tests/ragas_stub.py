"""A scripted server for Ragas' own prompts (Faithfulness, LLMContextRecall), by rule.

Ragas sends its instruction, the output schema, examples, and the input as JSON after
a last ``input:``. The rules mirror tests/judge_stub.py: statements are the answer's
sentences; a statement (or a reference sentence) is supported / attributed when its
text, lower-cased and without its final period, occurs in the context.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

from tests.judge_stub import sentences
from tests.llm_stub import Action, reply

_INPUT = re.compile(r"input:\s*(\{.*\})\s*Output:", re.S)


def _norm(text: str) -> str:
    return text.lower().strip().rstrip(".!?")


def ragas_metrics(url: str) -> tuple[list[Any], Any]:
    """Faithfulness and context recall on the stub at ``url``, through Ragas' own client,
    for the Ragas release installed: (metrics, the llm to give RagasEvaluator).

    Ragas 0.4: the collections metrics over ``llm_factory(..., client=AsyncOpenAI)``;
    Ragas 0.3: the 0.3 metrics, and ``llm_factory(..., base_url=...)`` (ChatOpenAI).
    """
    import ragas
    from ragas.llms import llm_factory

    if tuple(int(p) for p in ragas.__version__.split(".")[:2]) >= (0, 4):
        from openai import AsyncOpenAI
        from ragas.metrics.collections import ContextRecall, Faithfulness

        llm = llm_factory("gpt-4o-mini", client=AsyncOpenAI(base_url=url))
        return [Faithfulness(llm=llm), ContextRecall(llm=llm)], None
    from ragas.metrics import Faithfulness as Faithfulness03
    from ragas.metrics import LLMContextRecall

    return [Faithfulness03(), LLMContextRecall()], llm_factory("gpt-4o-mini", base_url=url)


class ScriptedRagas:
    def __init__(
        self,
        *,
        fail_with: Action | None = None,
        marker: str | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.prompts: Counter[str] = Counter()
        self.fail_with = fail_with
        self.marker = marker
        self.delay_s = delay_s  # each reply held this long: concurrent requests overlap
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Action:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        if self.fail_with is not None and (self.marker is None or self.marker in text):
            return self.fail_with
        found = _INPUT.findall(text)
        data = json.loads(found[-1]) if found else {}
        value: dict[str, Any]
        if "Break down each sentence" in text:
            kind, value = "statements", {"statements": sentences(data.get("answer", ""))}
        elif "judge the faithfulness of a series of statements" in text:
            context = data.get("context", "").lower()
            kind = "nli"
            value = {
                "statements": [
                    {"statement": s, "reason": "stub", "verdict": int(_norm(s) in context)}
                    for s in data.get("statements", [])
                ]
            }
        elif "can be attributed to the given context" in text:
            context = data.get("context", "").lower()
            kind = "recall"
            value = {
                "classifications": [
                    {"statement": s, "reason": "stub", "attributed": int(_norm(s) in context)}
                    for s in sentences(data.get("answer", ""))
                ]
            }
        else:
            raise AssertionError("unknown Ragas prompt: " + text[:200])
        with self._lock:
            self.prompts[kind] += 1
        return reply(json.dumps(value), delay_s=self.delay_s)
