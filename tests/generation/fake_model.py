"""A deterministic fake model behind the stub server, answering by request content.

It plays generator and verifier for the built-in prompts: it reads the task from
the system message, the exact count asked for, the question type and the passage,
and writes items derived from the passage (so different chunks give different
questions). Markers in a passage inject faults for the requests that send it:

=================  ==========================================================
Faults hit generation requests only.

``FAULT_429``      the first request gets HTTP 429 (Retry-After 0.01), then OK
``FAULT_401``      every request gets HTTP 401 (echoing the secret; not retried)
``FAULT_500``      every request gets HTTP 500 (echoing the secret)
``FAULT_HANG``     every request hangs past the client timeout
``FAULT_MALFORMED`` generation replies prose (and again to the repair)
``FAULT_TRUNCATED`` generation replies cut-off JSON (and again to the repair)
``FAULT_COUNT``    generation replies one item too many
``VERIFY_NO``      qa verification: not answerable
``WRONG_ANSWER``   qa verification: answerable, answer wrong
``DUPKEY``         every question is the same sentence (near-duplicates)
=================  ==========================================================

Unanswerable questions containing ``SCOPE_YES`` (written for passages holding
that marker) are judged answerable from the retrieved contexts.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from typing import Any

from tests.llm_stub import Action, hang, rate_limited, reply, server_error

SECRET = "sk-test-SECRET-4f1d9c"
GEN_SYSTEM = "You write test questions"
QA_VERIFY_SYSTEM = "You check test questions"
SCOPE_VERIFY_SYSTEM = "You check whether a question"

_PASSAGE = re.compile(r"<passage>\n(.*?)\n</passage>", re.DOTALL)
_COUNT = re.compile(r"holding exactly (\d+) (?:item|verdict)")
_TYPE = re.compile(r"Question type: (\w+):")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def task_of(body: dict[str, Any]) -> str:
    """``gen``, ``verify_qa``, ``verify_scope`` or ``other``, from the system message."""
    system = str(body["messages"][0]["content"])
    if system.startswith(GEN_SYSTEM):
        return "gen"
    if system.startswith(QA_VERIFY_SYSTEM):
        return "verify_qa"
    if system.startswith(SCOPE_VERIFY_SYSTEM):
        return "verify_scope"
    return "other"


def first_user(body: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in body["messages"] if m["role"] == "user")


class FakeModel:
    """The stub handler. ``calls`` counts answered requests by task."""

    def __init__(self, *, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.calls: Counter[str] = Counter()
        self._seen_429: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Action:
        task = task_of(body)
        system = str(body["messages"][0]["content"])
        user = first_user(body)
        with self._lock:
            self.calls[task] += 1
            fault = self._fault(user) if task == "gen" else None
        if fault is not None:
            return fault
        if task == "gen":
            return self._reply(self._generate(system, user))
        if task == "verify_qa":
            return self._reply(self._verify_qa(system, user))
        if task == "verify_scope":
            scope_yes = "SCOPE_YES" in user.split("\n", 1)[0]
            return self._reply({"answerable": scope_yes, "confidence": 0.8})
        return reply("{}")

    def _reply(self, value: Any) -> Action:
        return reply(json.dumps(value), delay_s=self.latency_s)

    def _fault(self, user: str) -> Action | None:
        # Faults hit generation requests only: verification prompts (and the BM25
        # contexts of unanswerable checks) may quote a faulty passage too.
        if "FAULT_401" in user:
            return server_error(401, echo=f"invalid api key {SECRET}")
        if "FAULT_500" in user:
            return server_error(500, echo=f"upstream failed for key {SECRET}")
        if "FAULT_HANG" in user:
            return hang(30)
        if "FAULT_429" in user and user not in self._seen_429:
            self._seen_429.add(user)
            return rate_limited(retry_after=0.01)
        if "FAULT_MALFORMED" in user:
            return reply("Sure! Here are your questions: none, sorry.")
        if "FAULT_TRUNCATED" in user:
            return reply('{"items": [{"question": "What is')
        return None

    def _generate(self, system: str, user: str) -> dict[str, Any]:
        n = int(_COUNT.search(system).group(1))  # type: ignore[union-attr]
        question_type = _TYPE.search(user).group(1)  # type: ignore[union-attr]
        passage = _PASSAGE.findall(user)[-1]
        if "FAULT_COUNT" in passage:
            n += 1
        unanswerable = "fields: question, missing" in system
        words = [w for w in re.findall(r"[A-Za-z]{5,}", passage)][:3] or ["thing"]
        items = []
        for i in range(n):
            key = f"{digest(passage)} {digest(question_type + str(i))}"
            question = f"Regarding {' '.join(words)} item {i} {key}?"
            if "DUPKEY" in passage:
                question = "What does the duplicate key policy say?"
            if unanswerable:
                marker = " SCOPE_YES" if "SCOPE_YES" in passage else ""
                items.append(
                    {"question": f"Unknown detail of {words[0]} {key}{marker}?", "missing": "a fee"}
                )
                continue
            item: dict[str, Any] = {"question": question, "answer": f"Answer {key}."}
            if question_type == "distracting":
                item["distractor"] = "an unrelated remark"
            elif question_type == "situational":
                item["situation"] = "I am a new customer"
            elif question_type == "double":
                item["parts"] = ["first part", "second part"]
            elif question_type == "conversational":
                item["history"] = [
                    {"role": "user", "content": f"Tell me about {words[0]} {key}."},
                    {"role": "assistant", "content": "Sure, what would you like to know?"},
                ]
            items.append(item)
        return {"items": items}

    def _verify_qa(self, system: str, user: str) -> dict[str, Any]:
        n = int(_COUNT.search(system).group(1))  # type: ignore[union-attr]
        passage = _PASSAGE.findall(user)[0]
        answerable = "VERIFY_NO" not in passage
        correct = "WRONG_ANSWER" not in passage
        return {
            "verdicts": [
                {
                    "index": i + 1,
                    "answerable": answerable,
                    "answer_correct": correct,
                    "confidence": 0.9,
                }
                for i in range(n)
            ]
        }
