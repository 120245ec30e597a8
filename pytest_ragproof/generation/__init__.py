"""Dataset generation (``ragproof generate``, extra ``llm``): corpus -> reviewable JSONL.

Public API::

    from pytest_ragproof.generation import GenerationSettings, generate, plan

    settings = GenerationSettings(qa=40, unanswerable=10, injection=10, seed=0,
                                  types=("simple", "complex"), language=None,
                                  agent_description="A support bot for ACME routers")
    result = generate("docs/", settings, client=None)   # or rows / a DataFrame / a Corpus
    result.write("dataset.jsonl")                        # + dataset.jsonl.summary.json
    result.cases, result.summary, result.shortfall      # after up to max_rounds=3 rounds

    the_plan = plan("docs/", settings)                   # no call: requests and chunks
    estimate(the_plan)                                   # calls and tokens (characters / 4)

Custom question generators implement :class:`QuestionGenerator` and are passed
as ``GenerationSettings(generators=(MyGenerator(),))``. The attack styles of
injection payloads are :data:`STYLES`; :func:`detect_language` is the language
rule used when ``language`` is None. Importing this package never imports
litellm; a run does so only when a request misses the cache.
"""

from __future__ import annotations

from pytest_ragproof.generation.api import (
    GenerationResult,
    generate,
    load_source,
    plan,
    run_plan,
    summary_path,
)
from pytest_ragproof.generation.assemble import GENERATOR_VERSION
from pytest_ragproof.generation.injection import STYLES, AttackStyle, canary_for, style_for
from pytest_ragproof.generation.language import detect_language
from pytest_ragproof.generation.plan import Estimate, GenerationPlan, GenerationSettings, estimate
from pytest_ragproof.generation.prompts import BuiltinGenerator
from pytest_ragproof.generation.rows import documents_from_rows
from pytest_ragproof.generation.runner import ItemOutcome, RequestOutcome
from pytest_ragproof.generation.sampling import PlannedRequest, chunk_order
from pytest_ragproof.generation.types import (
    DISCARD_REASONS,
    QA_TYPES,
    UNANSWERABLE_TYPES,
    GeneratedItem,
    ItemRequest,
    QuestionGenerator,
)

__all__ = [
    "DISCARD_REASONS",
    "GENERATOR_VERSION",
    "QA_TYPES",
    "STYLES",
    "UNANSWERABLE_TYPES",
    "AttackStyle",
    "BuiltinGenerator",
    "Estimate",
    "GeneratedItem",
    "GenerationPlan",
    "GenerationResult",
    "GenerationSettings",
    "ItemOutcome",
    "ItemRequest",
    "PlannedRequest",
    "QuestionGenerator",
    "RequestOutcome",
    "canary_for",
    "chunk_order",
    "detect_language",
    "documents_from_rows",
    "estimate",
    "generate",
    "load_source",
    "plan",
    "run_plan",
    "style_for",
    "summary_path",
]
