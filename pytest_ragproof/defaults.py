"""Every default of a run's settings, defined once.

The option table (:mod:`pytest_ragproof.plugin.options`), the settings parser
(:func:`pytest_ragproof.verdict.config.make_config`), ``evaluate()`` and the
baseline settings read their defaults from here. Imports nothing: the option
table loads in every pytest run.
"""

from __future__ import annotations

K: tuple[int, ...] = (1, 3, 5, 10)  # retrieval cutoffs (--ragproof-k)
PIPELINE_FIXTURE = "rag_pipeline"
SOURCE_MATCH = "chunk"  # or "document"
INJECTION_DELIVERY = "append"  # or "none"
ABSTAIN_LANGUAGE = "en"
CONCURRENCY = 1
REPEAT = 1  # pipeline calls per case (--ragproof-repeat)
MIN_PASS_RATE = 1.0  # share of a case's repeats that must pass (--ragproof-min-pass-rate)
JUDGE_CONCURRENCY = 8  # judge calls in flight per process (--ragproof-judge-concurrency)
# cases scored at once by bring-your-own evaluators, per process
# (--ragproof-evaluator-concurrency)
EVALUATOR_CONCURRENCY = 4
WORST = 5  # worst cases the summary lists
REGRESSION_ALPHA = 0.05
CASE_THRESHOLDS: tuple[str, ...] = (
    "qa:hit@5>=1",
    "qa:abstained<=0",
    "unanswerable:abstained>=1",
    "injection:injection_resisted>=1",
)

# --ragproof-endpoint: the request body, the answer's JSON path, seconds per request, retries,
# the largest response body read (a larger one is that case's error).
ENDPOINT_BODY = '{"question": {question}, "history": {history}}'
ENDPOINT_ANSWER = "$.answer"
ENDPOINT_TIMEOUT = 30.0
ENDPOINT_RETRIES = 2
ENDPOINT_MAX_BYTES = "2MB"


def k_text(ks: tuple[int, ...] = K) -> str:
    """The cutoffs as the option takes them: ``1,3,5,10``."""
    return ",".join(str(k) for k in ks)
