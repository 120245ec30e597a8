"""``Dataset.to_pandas()`` and ``Results.to_pandas()``: one row per case, pandas optional.

pandas is imported only here, when one of those methods runs; without it the
error names ``pip install pandas``. A metric a case does not have is ``<NA>`` in
its column (nullable ``Float64``), never 0 or NaN. This module imports nothing of
the dataset or runner code, so both can call it without a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_ragproof.errors import MissingExtraError, RagproofError


class PandasMissingError(MissingExtraError):
    """pandas is not installed; the message says ``pip install pandas``."""

    def __init__(self, what: str) -> None:
        self.extra = "dev"
        self.module = "pandas"
        RagproofError.__init__(
            self,
            f"{what} needs the 'pandas' package, which is not installed. "
            "Install it with: pip install pandas",
        )


def _pandas(what: str) -> Any:
    try:
        import pandas
    except ImportError:
        raise PandasMissingError(what) from None
    return pandas


def cases_frame(records: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Any:
    """A DataFrame of case records (``Case.model_dump(mode="json")``), one row each."""
    pd = _pandas("Dataset.to_pandas()")
    return pd.DataFrame([dict(r) for r in records], columns=list(columns))


RESULT_COLUMNS = (
    "id",
    "dataset",
    "pipeline",
    "kind",
    "question_type",
    "tags",
    "status",
    "question",
    "expected_answer",
    "answer",
    "expected_source_ids",
    "retrieved_ids",
    "latency_s",
    "error_type",
)


def results_frame(cases: Sequence[Any]) -> Any:
    """A DataFrame of a results document's cases (their typed models,
    :class:`pytest_ragproof.results.models.Case`): one row per case and pipeline, then one
    column per metric (sorted by name) holding ``<NA>`` where the case has no value."""
    pd = _pandas("Results.to_pandas()")
    metrics = sorted({m for c in cases for m in c.metrics} - set(RESULT_COLUMNS))
    rows = []
    for case in cases:
        row = {name: getattr(case, name) for name in RESULT_COLUMNS}
        row["failures"] = [f.expression for f in case.failures]
        values = case.metrics
        row.update({m: values.get(m) for m in metrics})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*RESULT_COLUMNS, "failures", *metrics])
    return frame.astype({m: "Float64" for m in metrics} | {"latency_s": "Float64"})
