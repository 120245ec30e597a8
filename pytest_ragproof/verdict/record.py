"""One case's result: what the pipeline returned, its metrics and its verdict.

Records travel from xdist workers to the controller as plain dicts (attached to
the test report), so everything here is JSON-serializable.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

#: Metric values seen so far, each kept once: most metrics take few values (hit@k is 0
#: or 1, precision@k a fraction of k), and a run keeps every case's until its end.
_VALUES: dict[float, float] = {}
#: Enough for the distinct values of a large run; past it, new values are not shared.
_MAX_VALUES = 1 << 16
#: Never shared: different on every case.
_UNSHARED = frozenset({"latency_s"})


_ZERO = 0.0


def _shared(value: float) -> float:
    """``value``, as the float object already kept for an equal value when there is one."""
    if type(value) is not float or value != value:  # a NaN equals nothing
        return value
    if value == 0.0:  # 0.0 equals -0.0, which is written differently
        return _ZERO if math.copysign(1.0, value) > 0 else value
    kept = _VALUES.get(value)
    if kept is not None:
        return kept
    if len(_VALUES) < _MAX_VALUES:
        _VALUES[value] = value
    return value


def sorted_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """A case's metrics for its record: sorted by name, equal values as one object.

    A record lives to the end of the run; a run of 100,000 cases holds millions of
    metric values, most of them equal (see ``_VALUES``). The values are unchanged.
    """
    return {
        name: value if name in _UNSHARED else _shared(value)
        for name, value in sorted(metrics.items())
    }


#: Each set of metric names seen, as its names' positions (few per run: one per kind of
#: case and judge set), shared by every :class:`Scores` of those names.
_POSITIONS: dict[tuple[str, ...], dict[str, int]] = {}
_MAX_POSITIONS = 1 << 10


class Scores(Mapping[str, float]):
    """A case's metrics packed for the rest of the run: the values as one tuple, the
    names' positions shared by every case with the same names.

    Read-only and equal to the dict it packs (same names, order and values). A record
    that no results document lists keeps its metrics this way once its case is
    concluded (:meth:`CaseRecord.drop_entry_only`): a dict of thirty metrics is about
    0.8 KB a case, its tuple a third of it.
    """

    __slots__ = ("_positions", "_values")

    def __init__(self, metrics: Mapping[str, float]) -> None:
        names = tuple(metrics)
        positions = _POSITIONS.get(names)
        if positions is None:
            positions = {name: i for i, name in enumerate(names)}
            if len(_POSITIONS) < _MAX_POSITIONS:
                _POSITIONS[names] = positions
        self._positions = positions
        self._values = tuple(metrics.values())

    def __getitem__(self, name: str) -> float:
        return self._values[self._positions[name]]

    def __contains__(self, name: object) -> bool:
        return name in self._positions

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Scores({dict(self)!r})"


@dataclass(slots=True)
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


# Slots: a run keeps every case's record to its end, and an instance dict of thirty
# fields is about 1.3 KB a case where slots are a quarter of it.
@dataclass(slots=True)
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
    metrics: Mapping[str, float] = field(default_factory=dict)  # a dict, or Scores once packed
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
    # xfailed or xpassed by a pytest xfail marker of the user's (not --ragproof-xfail-tag):
    # its reason, so that a merge tells it from a status edited to xfailed.
    xfail_reason: str | None = None

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
        if isinstance(self.metrics, Scores):
            out["metrics"] = dict(self.metrics)  # a JSON object, as it is sent and written
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRecord:
        data = dict(data)
        data["failures"] = [Failure(**f) for f in data.get("failures", [])]
        return cls(**data)

    def drop_entry_only(self) -> None:
        """Forget what only the case's entry in a results document shows (the answer, the
        retrieved ids and contexts with their texts, the judges' reasons) and pack its
        metrics (:class:`Scores`): for a run that writes no case entries, whose verdict
        and summary read statuses and scores."""
        self.metrics = Scores(self.metrics)
        self.answer = None
        self.retrieved_ids = None
        self.contexts = None
        self.judgements = None

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
    "xfail_reason",
)
