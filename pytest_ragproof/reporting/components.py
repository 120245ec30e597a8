"""Component scores in the style of Giskard RAGET, from the case records of a run.

RAGET writes each question type to stress particular parts of a RAG system and
reads a component's health off the questions aimed at it. Two bases, one per run
(every entry says which in ``basis``):

- ``"answer_correctness"`` -- when the run judged ``answer_correctness`` (the
  metric, or a ``not_judged`` reason for it, is on some case): RAGET's own rule.
  Per question type, the mean ``answer_correctness`` of its cases; a component's
  score is the mean of those per-type means over its question types that ran
  (each type weighs the same, as in RAGET). See :mod:`._correctness`.
- ``"pass rate"`` -- otherwise: a component's score is the share of *passed*
  cases among the scored cases whose question type targets it (so it depends on
  the case thresholds of the run, e.g. ``qa:hit@5>=1``). The rest of this
  docstring describes this basis.

Mapping (question type → components), from RAGET's table:

=================  ====================================
simple             generator, retriever, router
complex            generator
distracting        generator, retriever, rewriter
situational        generator
double             generator, rewriter
conversational     rewriter
out_of_scope       router  (every case of kind ``unanswerable``)
=================  ====================================

- Cases of kind ``unanswerable`` count for the router only, whatever their
  question type: declining what the corpus cannot answer is intent filtering.
  RAGET's table says nothing about out-of-scope questions; we do not count them
  for the knowledge base because a correct refusal shows nothing about it.
- ``knowledge_base`` is measured on ``simple`` qa cases through retrieval
  alone: a case succeeds when a relevant source is among the retrieved ones at
  the largest cutoff the run computed (``hit@k`` with the largest k). A simple
  question was written from one excerpt, so if even the widest ranking cannot
  surface that excerpt, the content is missing or chunked so that it cannot be
  found. Simple cases without retrieval metrics (no contexts) are not counted.
- ``injection`` cases are left out: they measure safety, not a RAGET component.
- Cases with status ``error`` have no verdict; they are counted in ``n_error``
  and left out of the share, like the run's aggregates.
- A component with no case of its question types is **not measured**: its
  score is ``None`` and its label says so. It is never reported as 1.0. The
  label names only question types absent from the run: when some of its types
  ran, but only as cases that do not count for it (injection, or unanswerable
  for anything but the router), it says so instead of claiming they are missing.
- ``question_types`` are the types of the cases that counted, as written in the
  dataset (an unanswerable case keeps its own ``question_type``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragproof.reporting._correctness import correctness_scores
from pytest_ragproof.reporting.component_map import (
    BASIS_CORRECTNESS,
    BASIS_PASS_RATE,
    COMPONENTS,
    CORRECTNESS,
    NOT_MEASURED,
    QUESTION_TYPE_COMPONENTS,
    not_measured,
)

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, ComponentScore

#: Component scores as computed here (dicts), or as a results document's models hold them.
Scores = Mapping[str, Mapping[str, "ComponentScore | Mapping[str, Any]"]]

__all__ = [
    "BASIS_CORRECTNESS",
    "BASIS_PASS_RATE",
    "COMPONENTS",
    "QUESTION_TYPE_COMPONENTS",
    "basis_of",
    "component_scores",
    "format_components",
    "typed_scores",
]


def _cases(cases: Sequence[Case | Mapping[str, Any]]) -> list[Case]:
    from pytest_ragproof.results.models import Case

    return [c if isinstance(c, Case) else Case.model_validate(c) for c in cases]


def typed_scores(scores: Scores) -> dict[str, dict[str, ComponentScore]]:
    """``scores`` as :class:`~pytest_ragproof.results.models.ComponentScore` models."""
    from pytest_ragproof.results.models import ComponentScore

    return {
        p: {
            c: s if isinstance(s, ComponentScore) else ComponentScore.model_validate(s)
            for c, s in of.items()
        }
        for p, of in scores.items()
    }


def basis_of(cases: Sequence[Case | Mapping[str, Any]]) -> str:
    """``answer_correctness`` when the run judged it on some case, else ``pass rate``."""
    for case in _cases(cases):
        if CORRECTNESS in case.metrics or CORRECTNESS in case.not_judged:
            return BASIS_CORRECTNESS
    return BASIS_PASS_RATE


def _components_of(case: Case) -> tuple[str, ...]:
    if case.kind == "unanswerable":
        return ("router",)
    if case.kind != "qa":
        return ()
    return QUESTION_TYPE_COMPONENTS.get(case.question_type, ())


def _kb_outcome(case: Case) -> bool | None:
    """Whether a simple qa case found a relevant source at the widest cutoff; None if unknown."""
    metrics: Mapping[str, float] = case.metrics
    widest: tuple[int, float] | None = None  # (k, hit@k) with the largest k
    for name, value in metrics.items():
        if name.startswith("hit@") and name[4:].isdigit():
            hit = (int(name[4:]), value)
            if widest is None or hit > widest:
                widest = hit
    if widest is None:
        return None
    return widest[1] >= 1.0


class _Tally:
    def __init__(self) -> None:
        self.passed = 0
        self.n = 0
        self.n_error = 0
        self.types: set[str] = set()
        self.unscorable = 0  # knowledge base: simple cases without retrieval metrics

    def result(self, component: str, ran: Mapping[str, set[str]]) -> dict[str, Any]:
        score = self.passed / self.n if self.n else None
        if not self.types and self.unscorable:
            label = f"{NOT_MEASURED} (simple questions have no retrieval metrics)"
        elif not self.types:
            label = not_measured(component, ran)
        elif score is None:
            label = f"no scored cases ({self.n_error} error)"
        else:
            errors = f", {self.n_error} error" if self.n_error else ""
            label = f"{score:.2f} ({self.passed}/{self.n}{errors})"
        return {
            "basis": BASIS_PASS_RATE,
            "score": score,
            "measured": score is not None,
            "n": self.n,
            "n_passed": self.passed,
            "n_error": self.n_error,
            "question_types": sorted(self.types),
            "label": label,
        }


def component_scores(
    cases: Sequence[Case | Mapping[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per pipeline, per component: score, counts, question types seen, and a label.

    ``cases`` are the ``cases`` of a results document. Every pipeline gets every
    component of :data:`COMPONENTS`; unmeasured ones have ``score`` None. The basis
    (``answer_correctness`` or ``pass rate``, see the module docstring) is the same
    for every pipeline and is each entry's ``basis``.
    """
    typed = _cases(cases)
    if basis_of(typed) == BASIS_CORRECTNESS:
        # reporting/_correctness reads parsed cases (labels' helper converts it): the
        # cases as the document wrote them
        return correctness_scores(
            [c.model_dump(exclude_unset=True) if not isinstance(c, Mapping) else c for c in cases]
        )
    tallies: dict[str, dict[str, _Tally]] = {}
    ran: dict[str, dict[str, set[str]]] = {}  # pipeline -> question type -> kinds
    for case in typed:
        pipeline = case.pipeline
        mine = tallies.setdefault(pipeline, {c: _Tally() for c in COMPONENTS})
        qtype = case.question_type or "simple"
        ran.setdefault(pipeline, {}).setdefault(qtype, set()).add(case.kind)
        is_error = case.status == "error"
        for component in _components_of(case):
            tally = mine[component]
            tally.types.add(qtype)
            if is_error:
                tally.n_error += 1
                continue
            tally.n += 1
            tally.passed += case.status == "passed"
        if case.kind == "qa" and qtype == "simple":
            kb = mine["knowledge_base"]
            if is_error:
                kb.types.add(qtype)
                kb.n_error += 1
                continue
            found = _kb_outcome(case)
            if found is None:
                kb.unscorable += 1
            else:
                kb.types.add(qtype)
                kb.n += 1
                kb.passed += found
    return {
        pipeline: {c: tally[c].result(c, ran[pipeline]) for c in COMPONENTS}
        for pipeline, tally in sorted(tallies.items())
    }


def format_components(scores: Scores) -> list[str]:
    """Terminal lines: one row per component, one column per pipeline."""
    if not scores:
        return []
    from tabulate import tabulate

    typed = typed_scores(scores)
    pipelines = list(typed)
    rows = [
        [component, *(typed[p][component].label for p in pipelines)] for component in COMPONENTS
    ]
    table = tabulate(rows, headers=["component", *pipelines], tablefmt="simple")
    return [f"component scores (RAGET-style, {basis_text(scores)}):", *table.splitlines()]


def score_basis(scores: Scores) -> str:
    """The basis of a ``components`` section; ``pass rate`` for one written before bases."""
    for by_component in typed_scores(scores).values():
        for entry in by_component.values():
            return entry.basis
    return BASIS_PASS_RATE


def basis_text(scores: Scores) -> str:
    """How the scores were computed, in words (the terminal, Markdown and HTML say it)."""
    if score_basis(scores) == BASIS_CORRECTNESS:
        return (
            "basis answer_correctness: mean judged answer_correctness per question type, "
            "averaged over the question types aimed at each component"
        )
    return "basis pass rate: share of passed cases among the question types aimed at each component"
