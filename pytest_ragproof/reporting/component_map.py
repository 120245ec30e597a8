"""RAGET's mapping of question types to RAG components, shared by both score bases.

:mod:`.components` scores on the pass rate, :mod:`._correctness` on the judged
``answer_correctness``; both read the mapping and the "not measured" wording here.
"""

from __future__ import annotations

from collections.abc import Mapping

COMPONENTS: tuple[str, ...] = ("generator", "retriever", "rewriter", "router", "knowledge_base")

QUESTION_TYPE_COMPONENTS: dict[str, tuple[str, ...]] = {
    "simple": ("generator", "retriever", "router"),
    "complex": ("generator",),
    "distracting": ("generator", "retriever", "rewriter"),
    "situational": ("generator",),
    "double": ("generator", "rewriter"),
    "conversational": ("rewriter",),
    "out_of_scope": ("router",),
}

NOT_MEASURED = "not measured"
BASIS_PASS_RATE = "pass rate"
BASIS_CORRECTNESS = "answer_correctness"
CORRECTNESS = "answer_correctness"


def targets_of(component: str) -> list[str]:
    """The question types that measure ``component``."""
    if component == "knowledge_base":
        return ["simple"]
    return [qt for qt, comps in QUESTION_TYPE_COMPONENTS.items() if component in comps]


def not_measured(component: str, ran: Mapping[str, set[str]]) -> str:
    """Why a component has no case: the target types absent from the run, never one that ran.

    ``ran`` maps each question type evaluated in the run (for this pipeline) to the
    kinds of its cases.
    """
    targets = targets_of(component)
    absent = [t for t in targets if t not in ran]
    left_out = sorted({k for t in targets for k in ran.get(t, ())})
    if not left_out:
        return f"{NOT_MEASURED} (no {', '.join(absent)} questions)"
    why = {
        "injection": "injection cases are left out",
        "unanswerable": "unanswerable cases count for the router only",
    }
    reasons = "; ".join(why.get(k, f"{k} cases are left out") for k in left_out)
    if absent:
        return f"{NOT_MEASURED} (no {', '.join(absent)} questions; {reasons})"
    return f"{NOT_MEASURED} (no qa case of its question types; {reasons})"
