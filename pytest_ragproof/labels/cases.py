"""What a person labels on a case of a results document (``ragproof.results/1``).

- :func:`case_digest`: ``sha256:`` + hex of the canonical JSON of exactly what the
  judges read for the case: the question, the answer, the retrieved contexts (ids
  and texts, in rank order), the reference answer and, on an injection case, the
  planted payload. A label carries the digest of the case it was given on; when the
  results shown later hold a different answer or contexts, the label is stale.
- :func:`judged_metrics`: the judged metrics present on a case, which a reviewer
  can label, and whether a verdict is yes/no (``binary``) or a 0–1 grade.
- :func:`judged_claims`: the claims a judge listed (faithfulness), numbered from 1,
  which a label's ``claims`` may overrule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pytest_ragproof.errors import LabelError
from pytest_ragproof.labels.model import (
    CLAIM_METRICS,
    LABELLED_METRICS,
    ClaimVerdict,
    Label,
    now,
)
from pytest_ragproof.metrics.judged import JUDGE_SPECS

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Case, Results

__all__ = [
    "BINARY_METRICS",
    "JudgedClaim",
    "as_case",
    "as_results",
    "case_dataset_sha256",
    "case_digest",
    "find_case",
    "judged_claims",
    "judged_metrics",
    "label_for",
]

#: Judged metrics whose judge gives a yes/no verdict (0 or 1); the others are fractions
#: (the judge registry's categorical judges, pytest_ragproof.metrics.judged).
BINARY_METRICS = frozenset(s.name for s in JUDGE_SPECS if s.categories is not None)

MetricKind = Literal["binary", "graded"]


def as_case(case: Case | Mapping[str, Any]) -> Case:
    """``case`` as the typed :class:`~pytest_ragproof.results.models.Case` (a parsed case
    entry, as the review app and tests hold it, is read through the model; one that does
    not fit it is a ConfigError naming the case and field, as a document's would be)."""
    from pytest_ragproof.results.models import Case
    from pytest_ragproof.results.schema import results_model

    if isinstance(case, Case):
        return case
    return results_model({"cases": [case]}, "the case entry").cases[0]


def as_results(results: Results | Mapping[str, Any]) -> Results:
    """``results`` as the typed :class:`~pytest_ragproof.results.models.Results`."""
    from pytest_ragproof.results.schema import as_model

    return as_model(results)


def _judged_content(case: Case) -> dict[str, Any]:
    content: dict[str, Any] = {
        "question": case.question,
        "answer": case.answer,
        "contexts": None
        if case.contexts is None
        else [{"id": c.id, "text": c.text} for c in case.contexts],
        "reference": case.expected_answer,
    }
    if case.kind == "injection" and case.adversarial_payload is not None:
        content["payload"] = case.adversarial_payload
    return content


def case_digest(case_record: Case | Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of what the judges read for this case (see the module's text)."""
    text = json.dumps(
        _judged_content(as_case(case_record)),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def judged_metrics(case_record: Case | Mapping[str, Any]) -> list[tuple[str, MetricKind]]:
    """The judged metrics with a score on this case, in the judges' order, with their kind."""
    metrics = as_case(case_record).metrics
    return [
        (name, "binary" if name in BINARY_METRICS else "graded")
        for name in LABELLED_METRICS
        if name in metrics
    ]


@dataclass(frozen=True)
class JudgedClaim:
    """One claim a judge listed: its 1-based ``index``, text, verdict and cited context."""

    index: int
    claim: str
    verdict: str
    context: int | None  # the 1-based rank of the context the judge said supports it


def judged_claims(case_record: Case | Mapping[str, Any], metric: str) -> list[JudgedClaim]:
    """The claims the judge of ``metric`` listed on this case (empty when it lists none)."""
    key = CLAIM_METRICS.get(metric)
    judgement = (as_case(case_record).judgements or {}).get(metric)
    if key is None or not isinstance(judgement, Mapping):
        return []
    out: list[JudgedClaim] = []
    for index, entry in enumerate(judgement.get(key) or [], 1):
        if isinstance(entry, Mapping):
            context = entry.get("context")
            out.append(
                JudgedClaim(
                    index=index,
                    claim=str(entry.get("claim") or ""),
                    verdict=str(entry.get("verdict") or ""),
                    context=context if isinstance(context, int) else None,
                )
            )
    return out


def case_dataset_sha256(
    results: Results | Mapping[str, Any], case_record: Case | Mapping[str, Any]
) -> str | None:
    """The sha256 of the dataset the case came from (``datasets[]`` by path), else None."""
    dataset = as_case(case_record).dataset
    for entry in as_results(results).datasets:
        if entry.path == dataset:
            return entry.sha256 if "sha256" in entry.model_fields_set else None
    return None


def find_case(results: Results | Mapping[str, Any], case_id: str, pipeline: str) -> Case | None:
    """The case entry of ``case_id`` under ``pipeline`` in a results document, else None."""
    for case in as_results(results).cases:
        if case.id == case_id and case.pipeline == pipeline:
            return case
    return None


def label_for(
    results: Results | Mapping[str, Any],
    case_record: Case | Mapping[str, Any],
    metric: str,
    verdict: float | None,
    reviewer: str,
    *,
    claims: Sequence[ClaimVerdict] | None = None,
    note: str | None = None,
    time: str | None = None,
) -> Label:
    """A new label of ``metric`` on a case shown from ``results``: its dataset's sha256,
    the case's digest and the current time (or ``time``) filled in. A claim verdict
    overrules a claim the judge listed on this case, so its index must name one."""
    case = as_case(case_record)
    if claims:
        listed = len(judged_claims(case, metric))
        for c in claims:
            if not 1 <= c.index <= listed:
                raise LabelError(
                    f"claim {c.index} is not a claim the judge of {metric} listed on case "
                    f"{case.id} (it listed {listed})",
                    hint=f"give verdicts of claims 1 to {listed}" if listed else "leave claims out",
                )
    return Label(
        dataset_sha256=case_dataset_sha256(results, case),
        case_id=case.id,
        pipeline=case.pipeline,
        digest=case_digest(case),
        metric=metric,
        verdict=verdict,
        reviewer=reviewer,
        time=time or now(),
        claims=None if claims is None else tuple(claims),
        note=note,
    )
