"""The table's judge options: LLM judges, bring-your-own evaluators, the response cache.

Read with the rest as :data:`pytest_ragproof.verdict.option_table.OPTIONS` (see there for
what an entry says).
"""

from __future__ import annotations

from pytest_ragproof import defaults
from pytest_ragproof.metrics.judged import judge_names
from pytest_ragproof.verdict.options import (
    Option,
    flag,
    folder_or_none,
    integer,
    not_negative,
    one_of,
    optional_text,
    strings,
)

__all__ = ["JUDGE_OPTIONS"]

#: The judge options, in --help order.
JUDGE_OPTIONS: tuple[Option, ...] = (
    # LLM judges.
    Option(
        "judges",
        f"LLM judges to run, comma-separated or repeatable: all, {judge_names()} "
        "(a threshold or tolerance naming one also runs it)",
        ini_type="linelist",
        multiple=True,
        metavar="NAME,NAME",
        keyword="judges",
        api="judges",
        field="judges.judges",
        parse=strings,
    ),
    Option(
        "judge_model",
        "litellm model string of the judges (default: $RAGPROOF_JUDGE_MODEL)",
        metavar="MODEL",
        keyword="judge_model",
        api="judge_model",
        field="judges.model",
        parse=optional_text,
    ),
    Option(
        "judge_api_base",
        "API base URL of the judge model's server (e.g. a local vLLM or Ollama)",
        metavar="URL",
        keyword="judge_api_base",
        api="judge_api_base",
        field="judges.api_base",
        parse=optional_text,
    ),
    Option(
        "judge_concurrency",
        f"judge calls in flight at once, per process (default {defaults.JUDGE_CONCURRENCY})",
        default=defaults.JUDGE_CONCURRENCY,
        metavar="N",
        keyword="judge_concurrency",
        api="judge_concurrency",
        field="judges.concurrency",
        parse=integer(1),
    ),
    Option(
        "evaluator_concurrency",
        "cases scored at once by bring-your-own evaluators (rag_evaluators), per process "
        f"(default {defaults.EVALUATOR_CONCURRENCY})",
        default=defaults.EVALUATOR_CONCURRENCY,
        metavar="N",
        keyword="evaluator_concurrency",
        api="evaluator_concurrency",
        parse=integer(1),
    ),
    Option(
        "judge_budget_usd",
        "stop judging once the judges' cost reaches this many US dollars (per run; split "
        "evenly across xdist workers)",
        metavar="USD",
        keyword="judge_budget_usd",
        api="judge_budget_usd",
        field="judges.budget_usd",
        parse=not_negative(),
    ),
    Option(
        "judge_max_calls",
        "stop judging after this many judge calls that miss the cache (per run; split "
        "evenly across xdist workers)",
        metavar="N",
        keyword="judge_max_calls",
        api="judge_max_calls",
        field="judges.max_calls",
        parse=integer(0, optional=True),
    ),
    Option(
        "judge_dry_run",
        "count the judge calls and tokens the run would make, without making them",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="judge_dry_run",
        api="judge_dry_run",
        field="judges.dry_run",
        parse=flag,
    ),
    Option(
        "judge_response_format",
        "how judges ask for JSON: auto (default; a server at the judge API base is asked "
        "once), json_schema, json_object_schema, json_object or prompt",
        default=defaults.RESPONSE_FORMAT,
        metavar="MODE",
        keyword="judge_response_format",
        api="judge_response_format",
        field="judges.response_format",
        parse=one_of(defaults.RESPONSE_FORMATS),
    ),
    Option(
        "judge_max_tokens",
        "completion budget (tokens) of every judge call (default: each step's own, sized "
        "from its input); a reply cut there is an error, never a score",
        metavar="N",
        keyword="judge_max_tokens",
        api="judge_max_tokens",
        field="judges.max_tokens",
        parse=integer(1, optional=True),
    ),
    Option(
        "judge_instructions",
        "where judge instructions go: system (default) or user (the first user message, "
        "for chat templates that drop system messages)",
        default=defaults.JUDGE_INSTRUCTIONS,
        metavar="PLACE",
        keyword="judge_instructions",
        api="judge_instructions",
        field="judges.instructions",
        parse=one_of(defaults.INSTRUCTION_PLACES, listed="system or user"),
    ),
    Option(
        "judge_timeout",
        f"seconds one judge request may take (default {defaults.LLM_TIMEOUT_S:g})",
        metavar="SECONDS",
        keyword="judge_timeout",
        api="judge_timeout",
        field="judges.timeout_s",
        parse=not_negative(unset=defaults.LLM_TIMEOUT_S),
    ),
    Option(
        "judge_retries",
        f"retries of a judge call on 429, 5xx and timeouts (default {defaults.LLM_RETRIES})",
        metavar="N",
        keyword="judge_retries",
        api="judge_retries",
        field="judges.max_retries",
        parse=integer(0, unset=defaults.LLM_RETRIES),
    ),
    Option(
        "cache_dir",
        "LLM response cache folder (default: $RAGPROOF_CACHE_DIR or ./.ragproof_cache)",
        metavar="DIR",
        keyword="cache_dir",
        api="cache_dir",
        field="judges.cache_dir",
        parse=folder_or_none,
        path=True,
    ),
    Option(
        "no_cache",
        "neither read nor write the LLM response cache",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="cache",
        api="cache",
        field="judges.cache",
        parse=flag,
        negated=True,
    ),
)
