"""The typed model of a results file's ``run.config``: the settings a run decided with.

:func:`pytest_ragproof.verdict.recorded.config_record` writes it and
:func:`~pytest_ragproof.verdict.recorded.config_from_record` reads it back through
:class:`RecordedConfig` (``ragproof merge``, ``ragproof history add``). The section stays
``dict[str, Any]`` in :class:`~pytest_ragproof.results.models.Run` (an open record, read
only where a verdict is rebuilt); a value a run's option parses (a timeout, an alpha, a
pass rate, a budget) is kept as written, and checked by the option's own parser as a
run's would be.
"""

from __future__ import annotations

from typing import Any

from pydantic import StrictBool, StrictInt, StrictStr

from pytest_ragproof.results.models import _Open

__all__ = ["RecordedBaseline", "RecordedConfig", "RecordedJudges"]


class RecordedBaseline(_Open):
    """``--ragproof-baseline`` and its options, the path as the user wrote it."""

    path: StrictStr
    update: StrictBool
    tolerances: list[StrictStr]
    alpha: Any  # as given: parsed like --ragproof-regression-alpha
    allow_dataset_change: StrictBool
    fail_on_case_regression: StrictBool


class RecordedJudges(_Open):
    """The judges' settings (no API base, cache folder or headers: nothing machine-bound)."""

    judges: list[StrictStr]
    model: StrictStr
    concurrency: StrictInt
    budget_usd: Any  # as given: parsed like --ragproof-judge-budget-usd
    max_calls: Any
    dry_run: StrictBool
    response_format: StrictStr
    max_tokens: Any = None  # recorded only when set
    instructions: StrictStr = "system"  # recorded only when not the default


class RecordedConfig(_Open):
    """What a run decided its verdict with (the thresholds spelled out, defaults included)."""

    pipeline_fixture: StrictStr
    k: list[StrictInt]
    source_match: StrictStr
    kinds: list[StrictStr]
    splits: list[StrictStr]
    tags: list[StrictStr]
    xfail_tags: list[StrictStr]
    case_thresholds: list[StrictStr]
    aggregate_thresholds: list[StrictStr]
    timeout: Any  # as given: parsed like --ragproof-timeout
    injection_delivery: StrictStr
    abstain_language: StrictStr
    abstain_patterns: list[StrictStr]
    redact: StrictBool
    worst: StrictInt
    components: StrictBool
    repeat: StrictInt = 1  # absent from the files of earlier versions: one call per case
    min_pass_rate: Any = 1.0  # as given: parsed like --ragproof-min-pass-rate
    baseline: RecordedBaseline | None = None
    judges: RecordedJudges | None = None
