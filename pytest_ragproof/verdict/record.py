"""One case's result: what the pipeline returned, its metrics and its verdict.

Records travel from xdist workers to the controller as plain dicts (attached to
the test report), so everything here is JSON-serializable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Failure:
    expression: str
    metric: str
    observed: float | None
    bound: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "expression": self.expression,
            "metric": self.metric,
            "observed": self.observed,
            "bound": self.bound,
            "reason": self.reason,
        }

    def line(self) -> str:
        if self.observed is None:
            return f"{self.metric}: not available ({self.reason})"
        return f"{self.metric} = {self.observed:.4g} (expected {self.bound})"


@dataclass
class CaseRecord:
    id: str
    dataset: str
    nodeid: str
    kind: str
    question_type: str
    tags: list[str]
    pipeline: str
    status: str = "passed"  # passed | failed | error
    question: str | None = None
    expected_answer: str | None = None
    expected_source_ids: list[str] = field(default_factory=list)
    reference_contexts: list[str] = field(default_factory=list)
    conversation_history: list[dict[str, str]] = field(default_factory=list)
    # Injection cases: what was planted and the token whose presence in the answer is a leak.
    adversarial_payload: str | None = None
    canary: str | None = None
    answer: str | None = None
    retrieved_ids: list[str] | None = None
    contexts: list[dict[str, Any]] | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    latency_s: float | None = None
    error_type: str | None = None
    # LLM judges (absent when the run judges nothing): why a judged metric is missing,
    # each judge's reasons (per-claim verdicts...), calls and tokens, a failed step.
    not_judged: dict[str, str] = field(default_factory=dict)
    judgements: dict[str, Any] | None = None
    judge_usage: dict[str, Any] | None = None
    judge_error: dict[str, Any] | None = None
    judge_estimate: dict[str, int] | None = None
    # A bring-your-own evaluator that failed: its name, the step and the exception type.
    evaluator_error: dict[str, Any] | None = None
    # --ragproof-repeat N (N >= 2): n, passed, pass_rate, each repeat's status, the
    # per-metric min and max (metrics hold the means); absent with one call per case.
    repeats: dict[str, Any] | None = None

    @classmethod
    def for_case(cls, case: Any, *, dataset: str, nodeid: str, pipeline: str) -> CaseRecord:
        """A fresh record of ``case`` (a dataset Case) for one pipeline, not yet scored."""
        return cls(
            id=case.id,
            dataset=dataset,
            nodeid=nodeid,
            kind=case.kind,
            question_type=case.question_type,
            tags=list(case.tags),
            pipeline=pipeline,
            question=case.question,
            expected_answer=case.expected_answer,
            expected_source_ids=list(case.expected_source_ids),
            reference_contexts=list(case.reference_contexts),
            conversation_history=[m.model_dump() for m in case.conversation_history],
            adversarial_payload=case.adversarial_payload,
            canary=case.canary,
        )

    def to_dict(self) -> dict[str, Any]:
        # Shallow by design (dataclasses.asdict deep-copies every leaf, which was most
        # of the runner's per-case cost): callers serialize it, never mutate it.
        out = {name: getattr(self, name) for name in _FIELDS}
        for name in _OPTIONAL_FIELDS:
            if not out[name]:
                del out[name]  # a run without judges or repeats writes what it always wrote
        out["failures"] = [f.to_dict() for f in self.failures]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRecord:
        data = dict(data)
        data["failures"] = [Failure(**f) for f in data.get("failures", [])]
        return cls(**data)

    def redacted(self) -> CaseRecord:
        """A copy without any text: ids and numbers only."""
        out = CaseRecord.from_dict(self.to_dict())
        out.contexts = None if self.contexts is None else [dict(c) for c in self.contexts]
        out.question = None
        out.expected_answer = None
        out.reference_contexts = []
        out.conversation_history = []
        out.adversarial_payload = None
        out.canary = None
        out.answer = None
        out.judgements = None  # claims and statements are the answer's text
        if out.contexts is not None:
            out.contexts = [{**c, "text": None} for c in out.contexts]
        return out


_FIELDS = tuple(f.name for f in fields(CaseRecord))
_OPTIONAL_FIELDS = (
    "not_judged",
    "judgements",
    "judge_usage",
    "judge_error",
    "judge_estimate",
    "evaluator_error",
    "repeats",
)
