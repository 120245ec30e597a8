"""The LLM judges, one entry each: the one registry every other table is read from.

A judge is named by the metric it produces. Its entry says which module under
``pytest_ragproof.judges`` holds it (prompt step, schema, scoring), the case kinds it
applies to, what it needs, how the metric is described, shown and exported, what a
person's yes and no mean when labelling it, the side metrics it also reports, which
items of its reasons lowered a score and which claims a label may overrule.
Adding a judge is its module plus one entry here: the judge names and kinds
(:mod:`pytest_ragproof.judges`), the engine's modules (``judges/engine.py``), the
metric registry, the labelled metrics, their meanings and claims (``labels/model.py``),
the yes/no metrics of labels (``labels/cases.py``), the ``--ragproof-judges`` help, the
InspectorRAGet names and categories (``reporting/inspectorraget_metrics.py``, ``_people.py``)
and the failure message's judge reasons (``execution/scoring.py``) read this tuple.

Imports nothing: the option table (loaded by every pytest run) reads the names.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JUDGE_SPECS", "JudgeSpec", "SideMetric", "judge_names"]

_ALL = frozenset({"qa", "unanswerable", "injection"})
_QA_LIKE = frozenset({"qa", "injection"})
_QA = frozenset({"qa"})


@dataclass(frozen=True)
class SideMetric:
    """A metric a judge reports besides its own (``answer_correctness_precision``)."""

    name: str
    description: str
    display: str


@dataclass(frozen=True)
class JudgeSpec:
    """One judge, by the metric it produces."""

    name: str
    module: str  # pytest_ragproof.judges.<module> defines JUDGE
    kinds: frozenset[str]
    needs: frozenset[str]  # what a case must supply (metric registry's NEEDS, "judge" added)
    description: str
    display: str  # InspectorRAGet's name for the metric
    yes: str  # what a verdict of 1 says (a person labelling it, the review app)
    no: str  # what a verdict of 0 says
    side: tuple[SideMetric, ...] = ()
    categories: tuple[str, str] | None = None  # a 0/1 verdict, exported as: (for 1, for 0)
    lower_is_better_kinds: frozenset[str] = frozenset()
    #: The lists of items in the judge's reasons that can lower its score, as (the list's
    #: key, an item's text key, the verdict that lowered it): a failed case shows them.
    lowered_by: tuple[tuple[str, str, str], ...] = ()
    #: The key of the claims list a person's label may overrule (None: no such list).
    claims_key: str | None = None

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric name the judge reports: its own, then its side metrics."""
        return (self.name, *(m.name for m in self.side))


JUDGE_SPECS: tuple[JudgeSpec, ...] = (
    JudgeSpec(
        "faithfulness",
        "faithfulness",
        _QA_LIKE,
        frozenset({"answer", "contexts"}),
        "claims of the answer supported by the retrieved contexts / claims (LLM judge)",
        "Faithfulness",
        "every claim of the answer is supported by the retrieved contexts",
        "the answer claims something the contexts do not support",
        lowered_by=(("claims", "claim", "unsupported"),),
        claims_key="claims",
    ),
    JudgeSpec(
        "answer_relevancy",
        "answer_relevancy",
        _QA_LIKE,
        frozenset({"answer"}),
        "statements of the answer that address the question / statements (LLM judge)",
        "Answer relevancy",
        "the answer addresses the question",
        "the answer is off the question or evades it",
        lowered_by=(("statements", "statement", "irrelevant"),),
    ),
    JudgeSpec(
        "answer_correctness",
        "answer_correctness",
        _QA,
        frozenset({"answer", "expected_answer"}),
        "F1 of the answer's claims against the expected answer's (LLM judge)",
        "Answer correctness (F1)",
        "the answer says what the expected answer says",
        "the answer contradicts or misses the expected answer",
        side=(
            SideMetric(
                "answer_correctness_precision",
                "answer claims stated by the expected answer / answer claims (LLM judge)",
                "Answer correctness: precision",
            ),
            SideMetric(
                "answer_correctness_recall",
                "expected-answer claims stated by the answer / expected-answer claims (LLM judge)",
                "Answer correctness: recall",
            ),
        ),
        lowered_by=(
            ("answer_claims", "claim", "not in reference"),
            ("reference_claims", "claim", "missing from answer"),
        ),
    ),
    JudgeSpec(
        "context_relevance",
        "context_relevance",
        _ALL,
        frozenset({"contexts"}),
        "retrieved contexts relevant to the question / contexts (LLM judge)",
        "Context relevance",
        "the retrieved contexts are relevant to the question",
        "the retrieved contexts are not relevant to it",
        lowered_by=(("contexts", "context", "irrelevant"),),
    ),
    JudgeSpec(
        "context_recall",
        "context_recall",
        _QA,
        frozenset({"contexts", "expected_answer"}),
        "expected-answer claims attributable to the contexts / its claims (LLM judge)",
        "Context recall",
        "the contexts hold everything the expected answer says",
        "part of the expected answer is in no context",
        lowered_by=(("reference_claims", "claim", "not attributed"),),
    ),
    JudgeSpec(
        "abstained_judged",
        "abstained",
        _ALL,
        frozenset({"answer"}),
        "1.0 when an LLM judge finds that the answer declines (for qa cases a false refusal)",
        "Abstained (judged)",
        "the answer declines to answer (a refusal, or 'I don't know')",
        "the answer gives an answer",
        categories=("abstained", "answered"),
        lower_is_better_kinds=_QA,
    ),
    JudgeSpec(
        "injection_resisted_judged",
        "injection",
        frozenset({"injection"}),
        frozenset({"answer", "adversarial_payload"}),
        "1.0 when an LLM judge finds the answer did not follow the planted instruction",
        "Injection resisted (judged)",
        "the answer did not follow the planted instruction in any way",
        "the answer followed the planted instruction",
        categories=("resisted", "followed"),
    ),
)


def judge_names() -> str:
    """The judges as a comma-separated list, in registry order (help texts, messages)."""
    return ", ".join(s.name for s in JUDGE_SPECS)
