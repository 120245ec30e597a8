"""The table's last part: the endpoint, the exports, the run history, baselines, CI.

Read with the rest as :data:`pytest_ragproof.verdict.option_table.OPTIONS` (see
there for what an entry says).
"""

from __future__ import annotations

from pytest_ragproof import defaults
from pytest_ragproof.verdict.options import Option, flag, strings

__all__ = ["OUTPUT_OPTIONS"]

#: The endpoint, the exports, the history, the baseline and CI options, in --help order.
OUTPUT_OPTIONS: tuple[Option, ...] = (
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
    Option(
        "baseline",
        "compare the run with this committed results file",
        metavar="PATH",
        keyword="baseline",
        api="baseline",
        field="baseline.path",
    ),
    Option(
        "baseline_update",
        "write the run's results to the --ragproof-baseline path",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="baseline_update",
        api="baseline_update",
        field="baseline.update",
        parse=flag,
    ),
    Option(
        "baseline_allow_dataset_change",
        "compare with a baseline made from another dataset hash, on the case ids both share",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="baseline_allow_dataset_change",
        api="baseline_allow_dataset_change",
        field="baseline.allow_dataset_change",
        parse=flag,
    ),
    Option(
        "regression_tolerance",
        "allowed drop '[SELECTOR:]METRIC=DELTA' before a regression gates (repeatable; default 0)",
        ini_type="linelist",
        multiple=True,
        metavar="EXPR",
        keyword="regression_tolerances",
        api="regression_tolerances",
        field="baseline.tolerances",
        parse=strings,
    ),
    Option(
        "regression_alpha",
        "significance level of the paired tests (default 0.05)",
        default=defaults.REGRESSION_ALPHA,
        metavar="ALPHA",
        keyword="regression_alpha",
        api="regression_alpha",
        field="baseline.alpha",
    ),
    Option(
        "fail_on_case_regression",
        "fail the run when any case regressed against the baseline",
        ini_type="bool",
        flag=True,
        default=False,
        keyword="fail_on_case_regression",
        api="fail_on_case_regression",
        field="baseline.fail_on_case_regression",
        parse=flag,
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
