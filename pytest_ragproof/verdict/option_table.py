"""The table of every ``--ragproof-*`` option and ``ragproof_*`` ini key, one entry each.

Each :class:`~pytest_ragproof.verdict.options.Option` carries the flag, ini key and type,
the default (from :mod:`pytest_ragproof.defaults`), the help, the parser, and where the
value goes: ``make_config``'s keyword, ``evaluate()``'s keyword and the RunConfig field
(docs/configuration.md lists the table; tests/test_docs_options.py checks it). Adding an
option is one entry here: the pytest plugin registers it, ``make_config`` parses it
into its field (``RunConfig.extra`` for a field RunConfig does not spell out) and
``evaluate()`` accepts its keyword.

The judge options are in :mod:`~pytest_ragproof.verdict.option_table_judges`, the
endpoint, export, history, baseline and CI ones in
:mod:`~pytest_ragproof.verdict.option_table_io`. Cheap to import: no pytest, no pydantic
(the plugin loads it in every run).
"""

from __future__ import annotations

from pytest_ragproof import defaults
from pytest_ragproof.verdict.option_table_io import OUTPUT_OPTIONS
from pytest_ragproof.verdict.option_table_judges import JUDGE_OPTIONS
from pytest_ragproof.verdict.options import (
    Option,
    aggregate_thresholds,
    case_thresholds,
    cutoffs,
    either,
    flag,
    integer,
    names_of,
    on_off,
    path_or_none,
    paths,
    patterns,
    seconds,
    share,
    text,
    words,
)
from pytest_ragproof.vocabulary import KINDS, SPLITS

__all__ = ["OPTIONS", "by_name", "options_of"]

OPTIONS: tuple[Option, ...] = (
    Option(
        "dataset",
        "dataset file to evaluate (repeatable): frozen JSON, JSONL, JSON array",
        ini_type="paths",
        multiple=True,
        metavar="PATH",
        keyword="datasets",
        parse=paths,
    ),
    Option(
        "pipeline_fixture",
        "name of the fixture that returns the pipeline callable (default: rag_pipeline)",
        default=defaults.PIPELINE_FIXTURE,
        metavar="NAME",
        keyword="pipeline_fixture",
        parse=text,
    ),
    Option(
        "k",
        "retrieval cutoffs, comma-separated (default: 1,3,5,10)",
        default=defaults.k_text(),
        metavar="K,K",
        keyword="k",
        api="k",
        field="ks",
        parse=cutoffs,
    ),
    Option(
        "source_match",
        "match retrieved contexts to expected_source_ids by 'chunk' id "
        "(default) or by 'document' (metadata.document_id)",
        default=defaults.SOURCE_MATCH,
        metavar="chunk|document",
        keyword="source_match",
        api="source_match",
        parse=either("chunk", "document"),
    ),
    Option(
        "kind",
        "evaluate only cases of this kind (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="KIND",
        keyword="kinds",
        api="kinds",
        parse=names_of(KINDS),
    ),
    Option(
        "split",
        "evaluate only cases of this split (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="SPLIT",
        keyword="splits",
        api="splits",
        parse=names_of(SPLITS),
    ),
    Option(
        "tag",
        "evaluate only cases carrying this tag (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="TAG",
        keyword="tags",
        api="tags",
        parse=words,
    ),
    Option(
        "xfail_tag",
        "mark cases carrying this tag as expected to fail (pytest xfail; repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="TAG",
        keyword="xfail_tags",
        parse=words,
    ),
    Option(
        "case_threshold",
        "per-case threshold '[SELECTOR:]METRIC OP NUMBER' (repeatable; 'none' clears the defaults)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
        keyword="case_thresholds",
        api="case_thresholds",
        parse=case_thresholds,
    ),
    Option(
        "aggregate_threshold",
        "aggregate threshold '[SELECTOR:]METRIC[.AGG] OP NUMBER' (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
        keyword="aggregate_thresholds",
        api="thresholds",
        parse=aggregate_thresholds,
    ),
    Option(
        "timeout",
        "seconds a pipeline call may take before the case errors (default: none)",
        metavar="SECONDS",
        keyword="timeout",
        api="timeout",
        parse=seconds,
    ),
    Option(
        "injection_delivery",
        "how injection payloads reach the pipeline: 'append' to the question (default) or 'none'",
        default=defaults.INJECTION_DELIVERY,
        metavar="append|none",
        keyword="injection_delivery",
        api="injection_delivery",
        parse=either("append", "none"),
    ),
    Option(
        "abstain_language",
        "language of the abstention patterns (default: en)",
        default=defaults.ABSTAIN_LANGUAGE,
        metavar="LANG",
        keyword="abstain_language",
        api="abstain_language",
        parse=text,
    ),
    Option(
        "abstain_pattern",
        "extra regular expression that counts as abstaining (repeatable)",
        ini_type="linelist",
        multiple=True,
        metavar="REGEX",
        keyword="abstain_patterns",
        api="abstain_patterns",
        parse=patterns,
    ),
    Option(
        "report",
        "write the results JSON (ragproof.results/1) to this path",
        metavar="PATH",
        keyword="report",
        parse=path_or_none,
        path=True,
    ),
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
        default=defaults.SHARD_OTHERS,
        metavar="first|all",
    ),
    Option(
        "concurrency",
        "run the pipeline for up to N upcoming cases ahead of time "
        "(session- or module-scoped pipelines; default 1)",
        default=defaults.CONCURRENCY,
        metavar="N",
        keyword="concurrency",
        api="concurrency",
        parse=integer(1),
    ),
    Option(
        "repeat",
        "call the pipeline N times per case; metrics are the repeats' means and the case "
        "passes when its pass rate meets --ragproof-min-pass-rate (default 1)",
        default=defaults.REPEAT,
        metavar="N",
        keyword="repeat",
        api="repeat",
        parse=integer(1),
    ),
    Option(
        "min_pass_rate",
        "with --ragproof-repeat: the share of a case's repeats that must pass, "
        "above 0 and at most 1 (default 1.0)",
        default=defaults.MIN_PASS_RATE,
        metavar="R",
        keyword="min_pass_rate",
        api="min_pass_rate",
        parse=share,
    ),
    Option(
        "redact",
        "keep questions, answers and context text out of every output",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="redact",
        api="redact",
        parse=flag,
    ),
    Option(
        "worst",
        "how many worst cases the summary lists (default 5)",
        default=defaults.WORST,
        metavar="N",
        keyword="worst",
        parse=integer(0),
    ),
    Option(
        "components",
        "print the RAGET-style component scores in the summary: 'on' (default) or 'off'",
        default=defaults.COMPONENTS,
        metavar="on|off",
        keyword="components",
        parse=on_off,
    ),
    *JUDGE_OPTIONS,
    *OUTPUT_OPTIONS,
)


def by_name() -> dict[str, Option]:
    """The options by name (read at call time: a test may add one to :data:`OPTIONS`)."""
    return {o.name: o for o in OPTIONS}


def options_of(*groups: str) -> tuple[Option, ...]:
    """The options ``make_config`` takes (``run``, ``judges``) or the baseline's, in order."""
    return tuple(o for o in OPTIONS if o.keyword is not None and o.group in groups)
