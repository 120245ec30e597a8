"""The typed models of a results document (``ragproof.results/1``): its read API.

Every reader of a run's results (renderers, the history rows, merge, baselines,
labels, the review app, exports) reads these models instead of string keys of the
parsed JSON: :func:`pytest_ragproof.results.schema.load_results` (checked as merges and
baselines need) or :func:`pytest_ragproof.results.schema.results_model` (the schema only,
for a renderer of any document) turns a parsed document into a :class:`Results`.

A part a reader needs but a document lacks is its default here, so a renderer draws a
partial document (hand-built, or of an older release) as before; :func:`load_results`
checks what merges and baselines need through the ``Checked*`` subclasses
(:mod:`pytest_ragproof.results.checked`), which make
those fields required (and the kinds and statuses literal) with the messages
``check_results`` always gave.

The format is open (``extra="allow"``): a key a later release adds, or one only a
bring-your-own tool writes, is kept and ignored. A field the writer leaves out
(older releases, a run without judges or repeats) is its default here, ``None`` when
its absence means "not measured" or "not recorded": never an invented 0 or 1.
The models only read: a results file is written from the dicts the run built
(:func:`pytest_ragproof.results.document.write_results`), so its bytes never depend on
this module. Imported only where a document is read (pydantic is not loaded by a plain
pytest run).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

__all__ = [
    "Aggregate",
    "AggregateChange",
    "Baseline",
    "Case",
    "CaseFlip",
    "ChangeInterval",
    "ComponentScore",
    "Context",
    "Dataset",
    "Digest",
    "DryRunEstimate",
    "Failure",
    "Git",
    "JudgeError",
    "JudgeTotals",
    "Message",
    "PairedTest",
    "QuestionTypeScore",
    "Repeats",
    "Results",
    "Run",
    "Settings",
    "Shard",
    "ThresholdRow",
]

Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Count = Annotated[StrictInt, Field(ge=0)]
Status = Literal["passed", "failed", "error", "xfailed", "xpassed"]
Kind = Literal["qa", "unanswerable", "injection"]


class _Open(BaseModel):
    """A part of the document: read-only for its readers, open to keys it does not name."""

    model_config = ConfigDict(extra="allow", frozen=True)


class Failure(_Open):
    """A case threshold the case missed (``observed`` None: the metric was not measured)."""

    expression: StrictStr = ""
    metric: StrictStr = ""
    observed: Number | None = None
    bound: StrictStr = ""
    reason: StrictStr = ""


class Context(_Open):
    """One context the pipeline retrieved (``text`` None in a redacted run)."""

    id: StrictStr | None = None
    document_id: StrictStr | None = None
    text: StrictStr | None = None


class Message(_Open):
    """One turn of a case's conversation history."""

    role: StrictStr | None = None
    content: StrictStr | None = None


class JudgeError(_Open):
    """A judge step that failed on a case: which, the error's type, HTTP status, attempts
    (types and numbers only, never a provider's message)."""

    step: StrictStr | None = None
    type: StrictStr | None = None
    cause: StrictStr | None = None
    status: StrictInt | None = None
    attempts: StrictInt | None = None


class Repeats(_Open):
    """``--ragproof-repeat N``: the repeats of one case (the case's metrics are the means)."""

    n: Count
    passed: Count
    pass_rate: Number
    statuses: list[StrictStr] = []
    min: dict[StrictStr, Number] = {}
    max: dict[StrictStr, Number] = {}
    error_types: list[StrictStr] = []

    @property
    def flaky(self) -> bool:
        """Did some but not all repeats pass?"""
        return 0 < self.pass_rate < 1


class Case(_Open):
    """One case entry: a case of the dataset as one pipeline answered it, and its verdict."""

    id: StrictStr = ""
    pipeline: StrictStr = ""
    dataset: StrictStr = ""
    nodeid: StrictStr = ""
    kind: StrictStr = ""  # qa | unanswerable | injection (checked: Kind)
    status: StrictStr = "error"  # passed | failed | error | xfailed | xpassed (checked: Status)
    metrics: dict[StrictStr, Number] = {}
    failures: list[Failure] = []
    tags: list[StrictStr] = []
    latency_s: Number | None = None
    # Read by renderers, history, labels and exports; absent in older or redacted files.
    question_type: StrictStr = "simple"
    question: StrictStr | None = None
    expected_answer: StrictStr | None = None
    expected_source_ids: list[StrictStr] = []
    reference_contexts: list[StrictStr] = []
    conversation_history: list[Message] = []
    adversarial_payload: StrictStr | None = None
    canary: StrictStr | None = None
    answer: StrictStr | None = None
    retrieved_ids: list[StrictStr] | None = None
    contexts: list[Context] | None = None
    error_type: StrictStr | None = None
    # LLM judges: why a judged metric is absent, each judge's reasons, usage, a failed step.
    not_judged: dict[StrictStr, StrictStr] = {}
    judgements: dict[StrictStr, Any] | None = None
    judge_usage: dict[StrictStr, Any] | None = None
    judge_error: JudgeError | None = None
    judge_estimate: dict[StrictStr, Any] | None = None
    evaluator_error: dict[StrictStr, Any] | None = None
    repeats: Repeats | None = None
    xfail_reason: StrictStr | None = None

    @property
    def flaky(self) -> bool:
        """Did some but not all repeats of the case pass?"""
        return self.repeats is not None and self.repeats.flaky


class Dataset(_Open):
    """One dataset of the run: its file, content digest and size."""

    path: StrictStr = ""
    sha256: StrictStr = ""
    frozen: StrictBool = False
    cases: Count | None = None
    evaluated: Count | None = None  # None: a file from before it was written


class Shard(_Open):
    k: Annotated[StrictInt, Field(ge=1)]
    n: Annotated[StrictInt, Field(ge=1)]


class Git(_Open):
    commit: StrictStr | None = None
    branch: StrictStr | None = None


class Run(_Open):
    """The run's facts that ``ragproof merge`` rebuilds a verdict from."""

    shard: Shard | None = None
    population: Count | None = None
    datasets: dict[StrictStr, Count] = {}
    deselected: list[StrictStr] = []
    skipped: list[StrictStr] = []
    missing: list[StrictStr] = []
    stopped: StrictBool = False
    not_selected: list[StrictStr] = []
    notes: list[StrictStr] = []
    config: dict[StrictStr, Any] = {}
    git: Git | None = None
    skip_reasons: dict[StrictStr, StrictStr] | None = None  # written when a case was skipped
    expected: Count | None = None
    selected: Count | None = None


class Digest(_Open):
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
    covers: list[StrictStr]


class ThresholdRow(_Open):
    """One threshold's verdict (``scope`` "case": ``observed`` is the lowest case value)."""

    expression: StrictStr | None = None
    scope: StrictStr | None = None
    pipeline: StrictStr | None = None
    selector: StrictStr | None = None
    metric: StrictStr | None = None
    aggregator: StrictStr | None = None
    bound: StrictStr | None = None
    observed: Number | None = None
    n: Count | None = None
    verdict: StrictStr | None = None
    gated: StrictBool = True
    worst: list[tuple[StrictStr, Number]] = []  # a failed aggregate's lowest cases
    n_error: Count | None = None  # None: a file from before the rows carried it


class Aggregate(_Open):
    """A metric's statistics over one (pipeline, selector)."""

    pipeline: StrictStr
    selector: StrictStr
    metric: StrictStr
    n: Count
    n_error: Count = 0
    n_missing: Count = 0
    values: dict[StrictStr, Number | None] = {}  # mean, min, max, p50, p90, p95


class QuestionTypeScore(_Open):
    """A question type's mean ``answer_correctness`` and case count (basis answer_correctness)."""

    score: Number | None = None
    n: Count = 0


class ComponentScore(_Open):
    """One RAGET-style component of one pipeline (``score`` None: not measured)."""

    basis: StrictStr = "pass rate"  # a file written before bases: pass rate
    score: Number | None = None
    measured: StrictBool = False
    n: Count = 0
    n_passed: Count | None = None
    n_error: Count = 0
    question_types: list[StrictStr] = []
    label: StrictStr | None = None
    by_question_type: dict[StrictStr, QuestionTypeScore] = {}  # basis answer_correctness only


class DryRunEstimate(_Open):
    """``--ragproof-judge-dry-run``: the calls and tokens (characters / 4) a run would use."""

    calls: Count | None = None
    cached: Count | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None


class JudgeTotals(_Open):
    """The ``judges`` section: the judges' settings, calls, tokens and cost of the run."""

    judge_model: StrictStr | None = None
    judges: list[StrictStr] = []
    judge_response_format: StrictStr | None = None
    judge_concurrency: Count | None = None
    calls: Count | None = None
    cached: Count | None = None
    requests: Count | None = None  # HTTP requests sent (calls less the cache, plus retries)
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    cost_usd: Number | None = None  # None: no price known for the model
    cases: Count | None = None
    errors: Count | None = None
    not_judged: dict[StrictStr, Count] = {}
    max_calls: Count | None = None
    budget_usd: Number | None = None
    dry_run_estimate: DryRunEstimate | None = None


class CaseFlip(_Open):
    pipeline: StrictStr
    id: StrictStr
    change: StrictStr  # improved | regressed | new | removed
    before: StrictStr | None = None
    now: StrictStr | None = None


class PairedTest(_Open):
    method: StrictStr | None = None  # None: a hand-written or older file without it
    statistic: Number | None = None
    p_value: Number | None = None
    n: Count | None = None


class ChangeInterval(_Open):
    """The interval of a mean's change (charts only): Newcombe's or the paired t."""

    method: StrictStr | None = None
    level: Number = 0.95
    low: Number
    high: Number


class AggregateChange(_Open):
    """One (pipeline, selector, metric) compared with the baseline over the paired cases."""

    pipeline: StrictStr
    selector: StrictStr
    metric: StrictStr
    n: Count = 0
    n_unpaired: Count = 0
    baseline_mean: Number | None = None
    current_mean: Number | None = None
    delta: Number | None = None
    worse_by: Number | None = None
    tolerance: Number | None = None
    test: PairedTest | None = None
    verdict: StrictStr = ""
    failed: StrictBool = False
    note: StrictStr | None = None
    worst: list[dict[StrictStr, Any]] = []
    interval: ChangeInterval | None = None  # None: one pair (absent: an older file)


class Baseline(_Open):
    """The ``baseline`` section: the comparison with a baseline, or its update."""

    path: StrictStr | None = None
    updated: StrictStr | None = None  # written by an update (None: not written, see not_updated)
    not_updated: StrictStr | None = None
    passed: StrictBool | None = None
    alpha: Number | None = None
    tolerances: list[StrictStr] = []
    fail_on_case_regression: StrictBool = False
    baseline_datasets: list[dict[StrictStr, Any]] = []
    current_datasets: list[dict[StrictStr, Any]] = []
    dataset_changed: StrictBool = False
    refused: StrictStr | None = None
    counts: dict[StrictStr, Count] = {}
    flips: list[CaseFlip] = []
    aggregates: list[AggregateChange] = []
    gate_failures: list[StrictStr] = []
    notes: list[StrictStr] = []

    @property
    def is_update(self) -> bool:
        """Was this the run that wrote (or declined to write) the baseline?"""
        return "updated" in self.model_fields_set


class Settings(_Open):
    """The scoring settings of the run (the judges' too, when it judged)."""

    k: list[StrictInt] = []
    source_match: StrictStr | None = None
    injection_delivery: StrictStr = "append"
    abstain_language: StrictStr | None = None
    kinds: list[StrictStr] = []
    splits: list[StrictStr] = []
    tags: list[StrictStr] = []
    judge_model: StrictStr | None = None
    repeat: StrictInt | None = None  # written by a repeating run only
    min_pass_rate: Number | None = None


class Results(_Open):
    """A results document: the run's verdict, its cases and what was decided over them."""

    format: StrictStr = "ragproof.results/1"
    passed: StrictBool = False
    datasets: list[Dataset] = []
    settings: Settings = Settings()
    pipelines: list[StrictStr] = []
    cases: list[Case] = []
    thresholds: list[ThresholdRow] = []
    notes: list[StrictStr] = []
    run: Run | None = None
    run_id: StrictStr | None = None
    digest: Digest | None = None
    # Read by renderers and the history; absent in files of earlier releases.
    redacted: StrictBool = False
    versions: dict[StrictStr, StrictStr] = {}
    aggregates: list[Aggregate] = []
    components: dict[StrictStr, dict[StrictStr, ComponentScore]] = {}
    judges: JudgeTotals | None = None
    evaluators: dict[StrictStr, Any] | None = None
    baseline: Baseline | None = None
