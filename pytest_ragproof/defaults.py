"""Every default of a run's settings, defined once.

The option table (:mod:`pytest_ragproof.verdict.option_table`, which the pytest
options, ``make_config``, ``evaluate()`` and ``ragproof merge`` read), the judge and
LLM client settings, ``judge-check``, the generation and ingest commands and the
baseline settings read their defaults from here; tests/test_defaults.py finds a figure
written anywhere else. Imports nothing: the option table loads in every pytest run.
"""

from __future__ import annotations

K: tuple[int, ...] = (1, 3, 5, 10)  # retrieval cutoffs (--ragproof-k)
PIPELINE_FIXTURE = "rag_pipeline"
SOURCE_MATCH = "chunk"  # or "document"
INJECTION_DELIVERY = "append"  # or "none"
ABSTAIN_LANGUAGE = "en"
CONCURRENCY = 1
SHARD_OTHERS = "first"  # or "all": where the tests that are not cases run (--ragproof-shard)
COMPONENTS = "on"  # or "off": the component scores table of the summary
REPEAT = 1  # pipeline calls per case (--ragproof-repeat)
MIN_PASS_RATE = 1.0  # share of a case's repeats that must pass (--ragproof-min-pass-rate)
JUDGE_CONCURRENCY = 8  # judge calls in flight per process (--ragproof-judge-concurrency)
# cases scored at once by bring-your-own evaluators, per process
# (--ragproof-evaluator-concurrency)
EVALUATOR_CONCURRENCY = 4
# One judge or generation request: seconds it may take, retries on 429, 5xx and timeouts
# (--ragproof-judge-timeout / --ragproof-judge-retries, judge-check --timeout / --retries).
LLM_TIMEOUT_S = 60.0
LLM_RETRIES = 4
# A corpus file larger than this is skipped (--max-file-bytes of ingest and generate).
MAX_FILE_BYTES = 5_000_000
CHUNK_SIZE = 1000  # characters per chunk (--chunk-size)
CHUNK_OVERLAP = 100  # characters shared by neighbouring chunks (--chunk-overlap)
ITEMS_PER_REQUEST = 2  # cases one generation request asks for (--items-per-request)
MAX_ROUNDS = 3  # generation rounds that top up a shortfall (--max-rounds)
GENERATION_CONCURRENCY = 4  # model calls in flight (ragproof generate --concurrency)
WORST = 5  # worst cases the summary lists
# The HTML report (--ragproof-html, ragproof report -f html) embeds at most this many
# characters of one text field of a case (its question, answer, expected answer, a reference
# context, a judge's claim); a retrieved context's text at most REPORT_CONTEXT_CHARS (a case
# has several). A longer text is cut there, with a note on the page; the results JSON keeps
# every text whole.
REPORT_TEXT_CHARS = 20_000
REPORT_CONTEXT_CHARS = 4_000
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


#: How structured replies may be asked for (``--ragproof-judge-response-format``,
#: ``ragproof generate --response-format``; llm.config and llm.probe say what each does).
RESPONSE_FORMATS = ("auto", "json_schema", "json_object_schema", "json_object", "prompt")
RESPONSE_FORMAT = "auto"
#: Where instructions go: ``system`` messages, or ``user`` (folded into the first user
#: message; ``--ragproof-judge-instructions``).
INSTRUCTION_PLACES = ("system", "user")
JUDGE_INSTRUCTIONS = "system"
