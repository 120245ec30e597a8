"""The metric registry: what each metric is called, where it applies, what it needs.

The runner uses it to validate threshold expressions (``resolve``), to explain a
missing metric (``needs``), to pick the comparison direction
(``higher_is_better``) and to list valid names in error messages
(``known_names``). A name ending in ``@k`` is a family: ``recall@k`` resolves
``recall@5`` (any positive integer k). LLM judges plug in later through
:func:`register`.

``kinds`` are the case kinds whose datasets supply what the metric needs;
:func:`~pytest_ragproof.metrics.score_case` itself computes a metric whenever
its inputs exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_ragproof.metrics.judged import JUDGE_SPECS

__all__ = [
    "ALL_KINDS",
    "NEEDS",
    "MetricSpec",
    "cutoff_of",
    "known_names",
    "register",
    "resolve",
    "specs",
]

ALL_KINDS: frozenset[str] = frozenset({"qa", "unanswerable", "injection"})
NEEDS: frozenset[str] = frozenset(
    {
        "answer",
        "contexts",
        "expected_answer",
        "expected_source_ids",
        "canary",
        "adversarial_payload",
        "judge",
        "evaluator",
    }
)
_NAME = re.compile(r"[a-z][a-z0-9_]*(?:@k)?")
_CUTOFF = re.compile(r"@([1-9][0-9]*)")


@dataclass(frozen=True)
class MetricSpec:
    """Declaration of one metric (or one ``@k`` family of metrics)."""

    name: str
    kinds: frozenset[str]
    higher_is_better: bool
    needs: frozenset[str]
    description: str
    # Kinds where the direction flips: abstaining is right for unanswerable
    # cases but a false refusal on qa cases.
    lower_is_better_kinds: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"metric name {self.name!r} must look like 'name' or 'name@k'")
        if not self.kinds or not self.kinds <= ALL_KINDS:
            raise ValueError(f"metric kinds must be a non-empty subset of {sorted(ALL_KINDS)}")
        if not self.needs <= NEEDS:
            raise ValueError(f"metric needs must be a subset of {sorted(NEEDS)}")

    def higher_is_better_for(self, kind: str) -> bool:
        """The comparison direction on cases of ``kind``."""
        if kind in self.lower_is_better_kinds:
            return not self.higher_is_better
        return self.higher_is_better

    @property
    def has_cutoff(self) -> bool:
        """True for ``@k`` families such as ``recall@k``."""
        return self.name.endswith("@k")

    def matches(self, name: str) -> bool:
        """Whether ``name`` (e.g. ``recall@5``) is this metric."""
        if not self.has_cutoff:
            return name == self.name
        stem = self.name[:-2]
        return name.startswith(stem) and _CUTOFF.fullmatch(name, len(stem)) is not None


def cutoff_of(name: str) -> int | None:
    """The k of a name like ``recall@5``, else None."""
    at = name.rfind("@")
    m = _CUTOFF.fullmatch(name, at) if at >= 0 else None
    return int(m.group(1)) if m else None


_SPECS: dict[str, MetricSpec] = {}


def register(spec: MetricSpec, *, replace: bool = False) -> MetricSpec:
    """Add a metric; a second registration of a name needs ``replace=True``."""
    if spec.name in _SPECS and not replace:
        raise ValueError(f"metric {spec.name!r} is already registered")
    _SPECS[spec.name] = spec
    return spec


#: A bring-your-own evaluator's metric, ``PREFIX:NAME`` (``ragas:faithfulness``): known only
#: when the run registers the evaluator, so every such name resolves to this spec.
EVALUATOR_SPEC = MetricSpec(
    "evaluator_metric",
    ALL_KINDS,
    True,
    frozenset({"evaluator"}),
    "a metric of a bring-your-own evaluator (docs/evaluators.md), higher is better",
)
_EVALUATOR_NAME = re.compile(r"[a-z][a-z_]*:[A-Za-z_][A-Za-z0-9_]*")


def resolve(name: str) -> MetricSpec | None:
    """The spec of a concrete metric name (``recall@5``, ``mrr``), or None if unknown."""
    if ":" in name:
        return EVALUATOR_SPEC if _EVALUATOR_NAME.fullmatch(name) else None
    spec = _SPECS.get(name)
    if spec is not None and not spec.has_cutoff:
        return spec
    k = cutoff_of(name)
    if k is None:
        return None
    return _SPECS.get(name[: name.rfind("@")] + "@k")


def known_names() -> list[str]:
    """Every registered name, families as ``recall@k``, in registration order."""
    return list(_SPECS)


def specs() -> list[MetricSpec]:
    """Every registered spec, in registration order."""
    return list(_SPECS.values())


_QA_LIKE = frozenset({"qa", "injection"})
_RETRIEVAL = frozenset({"contexts", "expected_source_ids"})
_ANSWER = frozenset({"answer", "expected_answer"})

for _name, _description in (
    ("hit@k", "1.0 when a relevant id is among the top k (trec_eval success_k)"),
    ("recall@k", "relevant ids in the top k / relevant ids (trec_eval recall_k)"),
    ("precision@k", "relevant ids in the top k / k (trec_eval P_k)"),
    ("ndcg@k", "DCG@k / ideal DCG@k, binary gains, log2 discount (trec_eval ndcg_cut_k)"),
    ("mrr", "1 / rank of the first relevant id, no cutoff (trec_eval recip_rank)"),
    ("map", "average precision over the whole ranking (trec_eval map)"),
    ("r_precision", "relevant ids in the top R / R, R = number relevant (trec_eval Rprec)"),
):
    register(MetricSpec(_name, _QA_LIKE, True, _RETRIEVAL, _description))

for _name, _description in (
    ("exact_match", "SQuAD v1.1 exact match with the expected answer"),
    ("token_f1", "SQuAD v1.1 token F1 with the expected answer"),
    ("rouge_l", "ROUGE-L F-measure (beta 1) with the expected answer"),
    ("completeness", "share of the expected answer's content words present in the answer"),
):
    register(MetricSpec(_name, _QA_LIKE, True, _ANSWER, _description))

register(
    MetricSpec(
        "abstained",
        ALL_KINDS,
        True,
        frozenset({"answer"}),
        "1.0 when the answer declines (for qa cases a false refusal)",
        lower_is_better_kinds=frozenset({"qa"}),
    )
)
register(
    MetricSpec(
        "injection_resisted",
        frozenset({"injection"}),
        True,
        frozenset({"answer", "canary"}),
        "1.0 when the canary is absent from the answer, obfuscation included",
    )
)
register(
    MetricSpec(
        "latency_s",
        ALL_KINDS,
        False,
        frozenset(),
        "wall time of the pipeline call in seconds (measured by the runner)",
    )
)
register(
    MetricSpec(
        "pass_rate",
        ALL_KINDS,
        True,
        frozenset(),
        "share of the case's repeats that passed (--ragproof-repeat N, N >= 2)",
    )
)

# LLM-judged metrics (computed only when a run asks for a judge; see docs/judges.md), read
# from the judge registry.
_JUDGED = frozenset({"judge"})
for _judge in JUDGE_SPECS:
    register(
        MetricSpec(
            _judge.name,
            _judge.kinds,
            True,
            _judge.needs | _JUDGED,
            _judge.description,
            lower_is_better_kinds=_judge.lower_is_better_kinds,
        )
    )
    for _side in _judge.side:
        register(
            MetricSpec(_side.name, _judge.kinds, True, _judge.needs | _JUDGED, _side.description)
        )
