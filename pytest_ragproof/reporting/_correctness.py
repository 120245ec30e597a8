"""Component scores on RAGET's own basis: the judged ``answer_correctness``.

RAGET scores each question type by the mean correctness of its questions and a
component by the mean of the per-type scores over the types aimed at it (each
question type weighs the same, however many cases it has). We do the same with
the ``answer_correctness`` metric (F1 of the answer's claims against the
expected answer's), per pipeline, with the mapping of :mod:`.components`:

- qa cases count with their ``answer_correctness``. A qa case that has none (not
  judged: no claims, abstained, no reference, budget...) is counted in
  ``n_missing`` with its reason and left out of the mean, never scored 0 or 1.
- Unanswerable cases count for the router only, under the question type
  ``out_of_scope`` whatever their own: they have no reference answer, and RAGET
  scores an out-of-scope question as correct when the agent declines it, so their
  correctness is their verdict (1.0 passed, 0.0 failed; the default case
  threshold there is ``unanswerable:abstained>=1``).
- The knowledge base is scored on ``simple`` qa cases (a simple question is
  written from one excerpt, so a wrong answer to it points first at that
  excerpt's content or chunking).
- Injection cases are left out; cases with status ``error`` are ``n_error``.
- A component without any scored case is not measured (``score`` None) and its
  label says why.

``by_question_type`` gives each type's mean and case count, so the averaging can
be checked by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragproof.reporting.component_map import (
    BASIS_CORRECTNESS,
    COMPONENTS,
    CORRECTNESS,
    NOT_MEASURED,
    QUESTION_TYPE_COMPONENTS,
    not_measured,
)

OUT_OF_SCOPE = "out_of_scope"


class _Tally:
    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}  # scoring question type -> values
        self.missing: Counter[str] = Counter()  # not_judged reason -> cases
        self.n_error = 0
        self.types: set[str] = set()  # as written in the dataset

    def add(self, qtype: str, scored_as: str, case: Mapping[str, Any]) -> None:
        self.types.add(qtype)
        if case.get("status") == "error":
            self.n_error += 1
            return
        if case.get("kind") == "unanswerable":
            value: float | None = 1.0 if case.get("status") == "passed" else 0.0
        else:
            value = (case.get("metrics") or {}).get(CORRECTNESS)
        if value is None:
            reason = (case.get("not_judged") or {}).get(CORRECTNESS, "no reason recorded")
            self.missing[str(reason)] += 1
            return
        self.values.setdefault(scored_as, []).append(float(value))

    def result(self, component: str, ran: Mapping[str, set[str]]) -> dict[str, Any]:
        by_type = {
            qt: {"score": sum(v) / len(v), "n": len(v)} for qt, v in sorted(self.values.items())
        }
        n = sum(t["n"] for t in by_type.values())
        score = sum(t["score"] for t in by_type.values()) / len(by_type) if by_type else None
        n_missing = sum(self.missing.values())
        extra = []
        if n_missing:
            why = ", ".join(f"{k} {r}" for r, k in sorted(self.missing.items()))
            extra.append(f"not judged: {why}")
        if self.n_error:
            extra.append(f"{self.n_error} error")
        if not self.types:
            label = not_measured(component, ran)
        elif score is None:
            label = f"{NOT_MEASURED} ({'; '.join(extra)})"
        else:
            types = f"{len(by_type)} question type{'s' if len(by_type) > 1 else ''}"
            label = f"{score:.2f} ({types}, {n} case(s){''.join('; ' + e for e in extra)})"
        return {
            "basis": BASIS_CORRECTNESS,
            "score": score,
            "measured": score is not None,
            "n": n,
            "n_passed": None,
            "n_missing": n_missing,
            "not_judged": dict(sorted(self.missing.items())),
            "n_error": self.n_error,
            "question_types": sorted(self.types),
            "by_question_type": by_type,
            "label": label,
        }


def correctness_scores(
    cases: Sequence[Mapping[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per pipeline, per component: the RAGET score from ``answer_correctness``."""
    tallies: dict[str, dict[str, _Tally]] = {}
    ran: dict[str, dict[str, set[str]]] = {}  # pipeline -> question type -> kinds
    for case in cases:
        pipeline = str(case.get("pipeline", ""))
        mine = tallies.setdefault(pipeline, {c: _Tally() for c in COMPONENTS})
        qtype = str(case.get("question_type") or "simple")
        kind = case.get("kind")
        ran.setdefault(pipeline, {}).setdefault(qtype, set()).add(str(kind))
        if kind == "unanswerable":
            mine["router"].add(qtype, OUT_OF_SCOPE, case)
        elif kind == "qa":
            for component in QUESTION_TYPE_COMPONENTS.get(qtype, ()):
                mine[component].add(qtype, qtype, case)
            if qtype == "simple":
                mine["knowledge_base"].add(qtype, qtype, case)
    return {
        pipeline: {c: tally[c].result(c, ran[pipeline]) for c in COMPONENTS}
        for pipeline, tally in sorted(tallies.items())
    }
