"""Two stored runs compared (:func:`compare_runs`): the baseline comparison of
``--ragproof-baseline`` over the documents the store rebuilds, plus the cases whose
status, answer or scores differ."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragproof.history.runs import resolve_row
from pytest_ragproof.history.shapes import CaseDiff, RunComparison, summary_of
from pytest_ragproof.regression.comparison import Flags
from pytest_ragproof.textnorm import natural_key

if TYPE_CHECKING:
    import sqlalchemy as sa

    from pytest_ragproof.history.store import Store

__all__ = ["HISTORY_FLAGS", "compare_runs"]


#: The way out each message names, in this command's options (not pytest's).
HISTORY_FLAGS = Flags(
    refresh="compare two runs of the same dataset",
    allow_dataset_change="ragproof history compare --allow-dataset-change",
    fail_on_case_regression="--fail-on-case-regression",
    other_baseline="compare two runs of the same dataset and pipeline",
    alpha_example="--alpha 0.05",
)


def _stored_document(conn: sa.Connection, store: Store, row: Any) -> tuple[dict[str, Any], Any]:
    import sqlalchemy as sa

    from pytest_ragproof.history.rows import document

    r, c = store.t.runs, store.t.case_results
    full = conn.execute(sa.select(r).where(r.c.id == row.id)).one()
    cases = conn.execute(
        sa.select(c).where(c.c.run == row.id).order_by(c.c.pipeline, c.c.case_id)
    ).all()
    return document(full, cases), cases


def _case_diffs(cases_a: Sequence[Any], cases_b: Sequence[Any]) -> list[CaseDiff]:
    by_a = {(x.pipeline, x.case_id): x for x in cases_a}
    by_b = {(x.pipeline, x.case_id): x for x in cases_b}
    out: list[CaseDiff] = []
    for key in sorted(set(by_a) | set(by_b), key=lambda k: (k[0], natural_key(k[1]))):
        x, y = by_a.get(key), by_b.get(key)
        sa_: Mapping[str, float] = json.loads(x.scores) if x is not None else {}
        sb: Mapping[str, float] = json.loads(y.scores) if y is not None else {}
        scores = {
            m: (sa_.get(m), sb.get(m))
            for m in sorted(set(sa_) | set(sb))
            if m != "latency_s" and sa_.get(m) != sb.get(m)
        }
        status_a = None if x is None else str(x.status)
        status_b = None if y is None else str(y.status)
        answer_a = None if x is None else x.answer
        answer_b = None if y is None else y.answer
        if status_a == status_b and answer_a == answer_b and not scores:
            continue
        kind = str(y.kind) if y is not None else str(x.kind) if x is not None else ""
        out.append(CaseDiff(key[0], key[1], kind, status_a, status_b, answer_a, answer_b, scores))
    return out


def compare_runs(
    store: Store,
    ref_a: str,
    ref_b: str,
    *,
    tolerances: Sequence[str] = (),
    alpha: float = 0.05,
    allow_dataset_change: bool = False,
    fail_on_case_regression: bool = False,
) -> RunComparison:
    """Run ``ref_b`` compared with run ``ref_a`` as its baseline: the same comparison,
    gates and verdict lines as ``--ragproof-baseline`` (latency never compared)."""
    from pytest_ragproof.regression.compare import compare
    from pytest_ragproof.verdict.baseline import baseline_document, summary_lines

    with store.reading() as conn:
        row_a = resolve_row(conn, store, ref_a)
        row_b = resolve_row(conn, store, ref_b)
        doc_a, cases_a = _stored_document(conn, store, row_a)
        doc_b, cases_b = _stored_document(conn, store, row_b)
    comparison = compare(
        doc_b,
        baseline_document(doc_a),
        tolerances=tolerances,
        alpha=alpha,
        allow_dataset_change=allow_dataset_change,
        fail_on_case_regression=fail_on_case_regression,
        flags=HISTORY_FLAGS,
    )
    lines = summary_lines(comparison, str(row_a.run_id))
    return RunComparison(
        summary_of(row_a), summary_of(row_b), comparison, lines, _case_diffs(cases_a, cases_b)
    )
