"""Declarations of every ``--ragproof-*`` option and its ``ragproof_*`` ini key.

Cheap to import (only pytest's parser types are touched). Command-line values
replace ini values; list options given on the command line replace the whole
ini list.

Over the 400-line habit on purpose: this module is the declarative option table
(one :class:`Option` per flag and ini key, with its help text), plus the one loop
that registers the table and the one function that reads a value from it. Splitting
the table would only scatter the options' help texts; where a value came from and
the checks that relate options live in :mod:`pytest_ragproof.plugin.usage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pytest

from pytest_ragproof import defaults
from pytest_ragproof.metrics.judged import judge_names

IniType = Literal["string", "linelist", "paths", "bool"]


@dataclass(frozen=True)
class Option:
    name: str  # e.g. "case_threshold" -> --ragproof-case-threshold, ini ragproof_case_threshold
    help: str
    ini_type: IniType = "string"
    multiple: bool = False
    flag: bool = False
    default: Any = None
    metavar: str | None = None

    @property
    def cli(self) -> str:
        return "--ragproof-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "ragproof_" + self.name

    @property
    def dest(self) -> str:
        return "ragproof_" + self.name


OPTIONS: tuple[Option, ...] = (
    Option(
        "dataset",
        "dataset file to evaluate (repeatable): frozen JSON, JSONL, JSON array",
        ini_type="paths",
        multiple=True,
        metavar="PATH",
    ),
    Option(
        "pipeline_fixture",
        "name of the fixture that returns the pipeline callable (default: rag_pipeline)",
        default=defaults.PIPELINE_FIXTURE,
        metavar="NAME",
    ),
    Option(
        "k",
        "retrieval cutoffs, comma-separated (default: 1,3,5,10)",
        default=defaults.k_text(),
        metavar="K,K",
    ),
    Option(
        "source_match",
        "match retrieved contexts to expected_source_ids by 'chunk' id "
        "(default) or by 'document' (metadata.document_id)",
        default=defaults.SOURCE_MATCH,
        metavar="chunk|document",
    ),
    Option(
        "kind",
        "evaluate only cases of this kind (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="KIND",
    ),
    Option(
        "split",
        "evaluate only cases of this split (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="SPLIT",
    ),
    Option(
        "tag",
        "evaluate only cases carrying this tag (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="TAG",
    ),
    Option(
        "xfail_tag",
        "mark cases carrying this tag as expected to fail (pytest xfail; repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="TAG",
    ),
    Option(
        "case_threshold",
        "per-case threshold '[SELECTOR:]METRIC OP NUMBER' (repeatable; 'none' clears the defaults)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
    ),
    Option(
        "aggregate_threshold",
        "aggregate threshold '[SELECTOR:]METRIC[.AGG] OP NUMBER' (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
    ),
    Option(
        "timeout",
        "seconds a pipeline call may take before the case errors (default: none)",
        metavar="SECONDS",
    ),
    Option(
        "injection_delivery",
        "how injection payloads reach the pipeline: 'append' to the question (default) or 'none'",
        default=defaults.INJECTION_DELIVERY,
        metavar="append|none",
    ),
    Option(
        "abstain_language",
        "language of the abstention patterns (default: en)",
        default=defaults.ABSTAIN_LANGUAGE,
        metavar="LANG",
    ),
    Option(
        "abstain_pattern",
        "extra regular expression that counts as abstaining (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="REGEX",
    ),
    Option("report", "write the results JSON (ragproof.results/1) to this path", metavar="PATH"),
    Option(
        "shard",
        "run shard K of N of the cases (a stable hash of dataset path and case id); "
        "ragproof merge gates the shards' reports together",
        metavar="K/N",
    ),
    Option(
        "shard_others",
        "with --ragproof-shard K/N: run the tests that are not dataset cases in shard 1 "
        "only ('first', default) or in every shard ('all')",
        default="first",
        metavar="first|all",
    ),
    Option(
        "concurrency",
        "run the pipeline for up to N upcoming cases ahead of time "
        "(session- or module-scoped pipelines; default 1)",
        default=str(defaults.CONCURRENCY),
        metavar="N",
    ),
    Option(
        "repeat",
        "call the pipeline N times per case; metrics are the repeats' means and the case "
        "passes when its pass rate meets --ragproof-min-pass-rate (default 1)",
        default=str(defaults.REPEAT),
        metavar="N",
    ),
    Option(
        "min_pass_rate",
        "with --ragproof-repeat: the share of a case's repeats that must pass, "
        "above 0 and at most 1 (default 1.0)",
        default=str(defaults.MIN_PASS_RATE),
        metavar="R",
    ),
    Option(
        "redact",
        "keep questions, answers and context text out of every output",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    Option(
        "worst",
        "how many worst cases the summary lists (default 5)",
        default=str(defaults.WORST),
        metavar="N",
    ),
    Option(
        "components",
        "print the RAGET-style component scores in the summary: 'on' (default) or 'off'",
        default="on",
        metavar="on|off",
    ),
    # LLM judges.
    Option(
        "judges",
        f"LLM judges to run, comma-separated or repeatable: all, {judge_names()} "
        "(a threshold or tolerance naming one also runs it)",
        ini_type="linelist",
        multiple=True,
        metavar="NAME,NAME",
    ),
    Option(
        "judge_model",
        "litellm model string of the judges (default: $RAGPROOF_JUDGE_MODEL)",
        metavar="MODEL",
    ),
    Option(
        "judge_api_base",
        "API base URL of the judge model's server (e.g. a local vLLM or Ollama)",
        metavar="URL",
    ),
    Option(
        "judge_concurrency",
        f"judge calls in flight at once, per process (default {defaults.JUDGE_CONCURRENCY})",
        default=str(defaults.JUDGE_CONCURRENCY),
        metavar="N",
    ),
    Option(
        "evaluator_concurrency",
        "cases scored at once by bring-your-own evaluators (rag_evaluators), per process "
        f"(default {defaults.EVALUATOR_CONCURRENCY})",
        default=str(defaults.EVALUATOR_CONCURRENCY),
        metavar="N",
    ),
    Option(
        "judge_budget_usd",
        "stop judging once the judges' cost reaches this many US dollars (per run; split "
        "evenly across xdist workers)",
        metavar="USD",
    ),
    Option(
        "judge_max_calls",
        "stop judging after this many judge calls that miss the cache (per run; split "
        "evenly across xdist workers)",
        metavar="N",
    ),
    Option(
        "judge_dry_run",
        "count the judge calls and tokens the run would make, without making them",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    Option(
        "judge_response_format",
        "how judges ask for JSON: auto (default; a server at the judge API base is asked "
        "once), json_schema, json_object_schema, json_object or prompt",
        default="auto",
        metavar="MODE",
    ),
    Option(
        "judge_max_tokens",
        "completion budget (tokens) of every judge call (default: each step's own, sized "
        "from its input); a reply cut there is an error, never a score",
        metavar="N",
    ),
    Option(
        "judge_instructions",
        "where judge instructions go: system (default) or user (the first user message, "
        "for chat templates that drop system messages)",
        default="system",
        metavar="PLACE",
    ),
    Option(
        "judge_timeout",
        f"seconds one judge request may take (default {defaults.LLM_TIMEOUT_S:g})",
        metavar="SECONDS",
    ),
    Option(
        "judge_retries",
        f"retries of a judge call on 429, 5xx and timeouts (default {defaults.LLM_RETRIES})",
        metavar="N",
    ),
    Option(
        "cache_dir",
        "LLM response cache folder (default: $RAGPROOF_CACHE_DIR or ./.ragproof_cache)",
        metavar="DIR",
    ),
    Option(
        "no_cache",
        "neither read nor write the LLM response cache",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    # A deployed service instead of a pipeline fixture (docs/pipelines.md).
    Option(
        "endpoint",
        "test this HTTP service instead of a pipeline fixture: one JSON POST per case",
        metavar="URL",
    ),
    Option(
        "endpoint_body",
        "JSON body template of the POST; {question} and {history} are filled in JSON-escaped",
        default=defaults.ENDPOINT_BODY,
        metavar="JSON",
    ),
    Option(
        "endpoint_header",
        "request header 'Name: value', ${VAR} taken from the environment; values are never "
        "shown or written (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="HEADER",
    ),
    Option(
        "endpoint_answer",
        "JSON path of the answer in the endpoint's response",
        default=defaults.ENDPOINT_ANSWER,
        metavar="JSONPATH",
    ),
    Option(
        "endpoint_contexts",
        "JSON path of the list of retrieved contexts in the response (default: none, so no "
        "retrieval metrics)",
        metavar="JSONPATH",
    ),
    Option(
        "endpoint_context_id",
        "JSON path of the id inside each context, e.g. $.doc_id",
        metavar="JSONPATH",
    ),
    Option(
        "endpoint_context_text",
        "JSON path of the text inside each context, e.g. $.text",
        metavar="JSONPATH",
    ),
    Option(
        "endpoint_timeout",
        "seconds one request may wait to connect and for each read of the response",
        default=f"{defaults.ENDPOINT_TIMEOUT:g}",
        metavar="SECONDS",
    ),
    Option(
        "endpoint_retries",
        "retries of a request answered 429 (after its Retry-After) or 5xx",
        default=str(defaults.ENDPOINT_RETRIES),
        metavar="N",
    ),
    Option(
        "endpoint_max_bytes",
        "largest response body read, in bytes or with KB/MB (1024-based); a larger one is "
        "that case's error, read no further",
        default=defaults.ENDPOINT_MAX_BYTES,
        metavar="SIZE",
    ),
    # Exports (reporting).
    Option(
        "markdown",
        "write a Markdown summary to this path (e.g. $GITHUB_STEP_SUMMARY; appended to when "
        "the file exists)",
        metavar="PATH",
    ),
    Option("html", "write a self-contained HTML report to this path", metavar="PATH"),
    Option(
        "inspectorraget",
        "write an InspectorRAGet JSON export to this path (several case kinds: one file per "
        "kind, e.g. run.json -> run.qa.json, run.unanswerable.json, run.injection.json)",
        metavar="PATH",
    ),
    Option(
        "inspectorraget_labels",
        "a labels file of ragproof review: the InspectorRAGet export shows each reviewer as an "
        "annotator (worker human:<reviewer>) beside the judge; stale labels are left out",
        metavar="PATH",
    ),
    # Run history (docs/history.md).
    Option(
        "history",
        "record the run in this history store: a SQLite file path, a database URL "
        "(postgresql://user@host/db) or 'default' for .ragproof/history.sqlite in the "
        "project's root folder",
        metavar="STORE",
    ),
    # Regression baselines.
    Option("baseline", "compare the run with this committed results file", metavar="PATH"),
    Option(
        "baseline_update",
        "write the run's results to the --ragproof-baseline path",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    Option(
        "baseline_allow_dataset_change",
        "compare with a baseline made from another dataset hash, on the case ids both share",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    Option(
        "regression_tolerance",
        "allowed drop '[SELECTOR:]METRIC=DELTA' before a regression gates (repeatable; default 0)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
    ),
    Option(
        "regression_alpha",
        "significance level of the paired tests (default 0.05)",
        default=str(defaults.REGRESSION_ALPHA),
        metavar="ALPHA",
    ),
    Option(
        "fail_on_case_regression",
        "fail the run when any case regressed against the baseline",
        ini_type="bool",
        flag=True,
        default=False,
    ),
    # CI (docs/ci.md).
    Option(
        "strict",
        "make it a usage error (exit 4), not a warning line, when ragproof options are given "
        "on the command line but no ragproof dataset is configured or collected",
        ini_type="bool",
        flag=True,
        default=False,
    ),
)
BY_NAME = {o.name: o for o in OPTIONS}


def register(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragproof", "RAG regression tests (pytest-ragproof)")
    for opt in OPTIONS:
        kwargs: dict[str, Any] = {"default": None, "dest": opt.dest, "help": opt.help}
        if opt.flag:
            kwargs["action"] = "store_true"
        else:
            kwargs["action"] = "append" if opt.multiple else "store"
            kwargs["metavar"] = opt.metavar
        group.addoption(opt.cli, **kwargs)
        ini_default: Any = [] if opt.multiple else opt.default
        if opt.ini_type == "bool":
            ini_default = bool(opt.default)
        parser.addini(opt.ini, opt.help, type=opt.ini_type, default=ini_default)


def get(config: pytest.Config, name: str) -> Any:
    """The effective value: command line if given, else ini, else the default."""
    opt = BY_NAME[name]
    value = config.getoption(opt.dest, default=None)
    if value is not None:
        return list(value) if opt.multiple else value
    ini = config.getini(opt.ini)
    if opt.multiple:
        return [str(v) for v in ini]
    if opt.ini_type == "bool":
        return bool(ini)
    return ini if ini not in ("", None) else opt.default


def datasets_configured(config: pytest.Config) -> bool:
    """Is any dataset given? Cheap: decides whether the runner loads at all."""
    return bool(
        config.getoption("ragproof_dataset", default=None) or config.getini("ragproof_dataset")
    )
