"""Settings, the plan of a run, and its cost estimate -- all without calling a model.

A plan is everything deterministic about a run: the chunks, the language, how
many items of each kind and type, which chunk each request sends, and which
generator writes it. ``ragproof generate --dry-run`` prints it with
:func:`estimate`; a real run executes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from pytest_ragproof import defaults
from pytest_ragproof.corpus import Corpus
from pytest_ragproof.corpus.chunking import Chunk, chunk_corpus
from pytest_ragproof.errors import ConfigError
from pytest_ragproof.generation.dedup import DEFAULT_THRESHOLD
from pytest_ragproof.generation.language import detect_language, language_name
from pytest_ragproof.generation.prompts import builtin_generators
from pytest_ragproof.generation.sampling import Need, PlannedRequest, plan_requests, split_evenly
from pytest_ragproof.generation.types import (
    INJECTION_BASE_TYPE,
    QA_TYPES,
    UNANSWERABLE_TYPES,
    GeneratedItem,
    GenKind,
    ItemRequest,
    QuestionGenerator,
)
from pytest_ragproof.generation.verify import (
    QAVerification,
    ScopeVerdict,
    qa_messages,
    scope_messages,
)

#: Rough completion sizes for estimates: tokens per generated item and per verdict.
EST_ITEM_TOKENS = 80
EST_CONVERSATIONAL_ITEM_TOKENS = 160
EST_VERDICT_TOKENS = 30
#: Placeholder item used to size verification prompts before the items exist.
_EST_ITEM = GeneratedItem("q" * 120, "a" * 200)


@dataclass(frozen=True)
class GenerationSettings:
    """What to generate. Counts are cases; ``types`` are qa question types.

    ``items_per_request`` is how many items one request asks for (fewer calls
    per case, less variety). ``max_rounds`` bounds the rounds of a run: the
    first runs the plan, the others top up what was discarded. ``top_k`` is
    how many BM25 chunks an unanswerable question is checked against.
    ``generators`` replace the built-in generator of every (kind, question
    type) they claim.
    """

    qa: int = 0
    unanswerable: int = 0
    injection: int = 0
    seed: int = 0
    types: tuple[str, ...] = QA_TYPES
    unanswerable_types: tuple[str, ...] = UNANSWERABLE_TYPES
    language: str | None = None
    agent_description: str | None = None
    items_per_request: int = defaults.ITEMS_PER_REQUEST
    chunk_size: int = defaults.CHUNK_SIZE
    chunk_overlap: int | None = None
    top_k: int = 3
    dedup_threshold: float = DEFAULT_THRESHOLD
    max_rounds: int = defaults.MAX_ROUNDS
    generators: tuple[QuestionGenerator, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        for name in ("qa", "unanswerable", "injection", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{name} must be a non-negative integer, got {value!r}")
        if self.qa + self.unanswerable + self.injection == 0:
            raise ConfigError("nothing to generate: ask for --qa, --unanswerable or --injection")
        _check_types("types", self.types, QA_TYPES, needed=self.qa > 0)
        _check_types(
            "unanswerable_types",
            self.unanswerable_types,
            UNANSWERABLE_TYPES,
            needed=self.unanswerable > 0,
        )
        if self.items_per_request < 1:
            raise ConfigError("items_per_request must be at least 1")
        rounds = self.max_rounds
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ConfigError(f"max_rounds must be an integer of at least 1, got {rounds!r}")
        if self.top_k < 1:
            raise ConfigError("top_k must be at least 1")
        if not 0.0 < self.dedup_threshold <= 1.0:
            raise ConfigError("dedup_threshold must be in (0, 1]")
        if self.language is not None and not self.language.strip():
            raise ConfigError("language is empty; give a code such as 'en' or leave it out")


def _check_types(name: str, types: Sequence[str], allowed: Sequence[str], *, needed: bool) -> None:
    unknown = [t for t in types if t not in allowed]
    if unknown:
        raise ConfigError(
            f"unknown {name.replace('_', ' ')} {unknown[0]!r}; choose from {', '.join(allowed)}"
        )
    if len(set(types)) != len(types):
        raise ConfigError(f"{name.replace('_', ' ')} lists a type twice")
    if needed and not types:
        raise ConfigError(f"{name.replace('_', ' ')} is empty")


@dataclass(frozen=True)
class GenerationPlan:
    """The deterministic part of a run (module docstring)."""

    settings: GenerationSettings
    corpus: Corpus
    chunks: tuple[Chunk, ...]
    language: str
    language_source: Literal["option", "detected"]
    needs: tuple[Need, ...]
    requests: tuple[PlannedRequest, ...]
    generators: dict[tuple[GenKind, str], QuestionGenerator]

    def item_request(self, request: PlannedRequest) -> ItemRequest:
        """What the generator of ``request`` is given."""
        return ItemRequest(
            kind=request.gen_kind,
            question_type=request.question_type,
            chunk=request.chunk,
            n_items=request.n_items,
            language=self.language,
            language_name=language_name(self.language),
            agent_description=self.settings.agent_description,
            distractor=request.distractor,
        )

    def generator_for(self, request: PlannedRequest) -> QuestionGenerator:
        return self.generators[(request.gen_kind, request.question_type)]


def split_needs(settings: GenerationSettings) -> tuple[Need, ...]:
    """Items per kind and type: counts divided equally, remainder to the first types."""
    needs = [Need("qa", t, n) for t, n in split_evenly(settings.qa, settings.types).items()]
    needs += [
        Need("unanswerable", t, n)
        for t, n in split_evenly(settings.unanswerable, settings.unanswerable_types).items()
    ]
    if settings.injection:
        needs.append(Need("injection", INJECTION_BASE_TYPE, settings.injection))
    return tuple(needs)


def build_plan(corpus: Corpus, settings: GenerationSettings) -> GenerationPlan:
    """Chunk the corpus, pick the language and lay out every request."""
    chunks = tuple(
        chunk_corpus(
            corpus.documents, chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap
        )
    )
    if not chunks:
        raise ConfigError("the corpus holds no text to generate from (see the skipped files)")
    if settings.language is not None:
        language, source = settings.language.strip(), "option"
    else:
        language, source = detect_language(d.text for d in corpus.documents), "detected"
    generators: dict[tuple[GenKind, str], QuestionGenerator] = dict(builtin_generators())
    for gen in settings.generators:
        if not isinstance(gen, QuestionGenerator):
            raise ConfigError(f"{type(gen).__name__} does not implement QuestionGenerator")
        allowed = QA_TYPES if gen.kind == "qa" else UNANSWERABLE_TYPES
        for question_type in gen.question_types:
            if question_type not in allowed:
                raise ConfigError(
                    f"generator {gen.name!r} claims {gen.kind} type {question_type!r}; "
                    f"choose from {', '.join(allowed)}"
                )
            generators[(gen.kind, question_type)] = gen
    needs = split_needs(settings)
    requests = plan_requests(
        chunks,
        [n for n in needs if n.n > 0],
        seed=settings.seed,
        items_per_request=settings.items_per_request,
    )
    return GenerationPlan(
        settings=settings,
        corpus=corpus,
        chunks=chunks,
        language=language,
        language_source="option" if source == "option" else "detected",
        needs=needs,
        requests=tuple(requests),
        generators=generators,
    )


@dataclass(frozen=True)
class Estimate:
    """Calls and tokens a run would need with an empty cache (characters / 4)."""

    generation_calls: int
    verification_calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def calls(self) -> int:
        return self.generation_calls + self.verification_calls


def estimate(plan: GenerationPlan) -> Estimate:
    """Estimate of one uncached run without retries or repairs (docs/generation.md)."""
    from pytest_ragproof.llm.request import estimate_tokens

    gen_calls = verify_calls = prompt = completion = 0
    mean_chunk = sum(len(c.text) for c in plan.chunks) // max(1, len(plan.chunks))
    context = "c" * mean_chunk
    k = min(plan.settings.top_k, len(plan.chunks))
    qa_schema = _schema_tokens(QAVerification)
    scope_schema = _schema_tokens(ScopeVerdict)
    for request in plan.requests:
        generator = plan.generator_for(request)
        item_request = plan.item_request(request)
        n = request.n_items
        gen_calls += 1
        prompt += estimate_tokens(generator.build_messages(item_request))
        prompt += _schema_tokens(generator.schema)
        per_item = (
            EST_CONVERSATIONAL_ITEM_TOKENS
            if request.question_type == "conversational"
            else EST_ITEM_TOKENS
        )
        completion += n * per_item
        if request.gen_kind == "qa":
            verify_calls += 1
            prompt += estimate_tokens(qa_messages(item_request, [_EST_ITEM] * n)) + qa_schema
            completion += n * EST_VERDICT_TOKENS
        else:
            verify_calls += n
            one = estimate_tokens(scope_messages(item_request, _EST_ITEM, [context] * k))
            prompt += n * (one + scope_schema)
            completion += n * EST_VERDICT_TOKENS
    return Estimate(gen_calls, verify_calls, prompt, completion)


def _schema_tokens(schema: type[BaseModel]) -> int:
    # The reply schema is sent too (as response_format or in the system message).
    return len(json.dumps(schema.model_json_schema())) // 4
