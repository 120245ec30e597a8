"""The aggregates section of the HTML report: one folded block per selector, a bar
chart of the means on the 0..1 scale and the tables of every statistic.

A metric whose good direction depends on the case kind (``abstained``: a refusal is
right on an unanswerable case, a false refusal on a qa case) has no meaning averaged
over all cases, so the "all cases" chart draws it once per kind instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup

from pytest_ragproof.metrics import registry
from pytest_ragproof.reporting.html_sections import metric_order, num
from pytest_ragproof.reporting.svg import bar_chart, legend
from pytest_ragproof.reporting.templating import render

if TYPE_CHECKING:
    from pytest_ragproof.results.models import Aggregate, Results

STATS = ("mean", "min", "p50", "p90", "p95", "max")
KIND_ORDER = ("qa", "unanswerable", "injection")
# Seconds are not on the 0..1 scale of the bar charts; they stay in the tables.
UNCHARTED = frozenset({"latency_s"})

Keyed = dict[tuple[str, str], "Aggregate"]


def _selectors(aggregates: Sequence[Aggregate]) -> list[str]:
    seen = list(dict.fromkeys(a.selector for a in aggregates))
    first = [s for s in ("*", *KIND_ORDER) if s in seen]
    return first + [s for s in seen if s not in first]


def _by_metric(rows: Sequence[Aggregate]) -> Keyed:
    return {(a.pipeline, a.metric): a for a in rows}


def direction_by_kind(metric: str) -> bool:
    """Is ``metric``'s good direction different from one case kind to another?"""
    spec = registry.resolve(metric)
    return spec is not None and bool(spec.lower_is_better_kinds)


def _bounded(rows: Sequence[Aggregate], metric: str) -> bool:
    return metric not in UNCHARTED and all(
        0.0 <= v <= 1.0
        for a in rows
        if a.metric == metric
        for v in a.values.values()
        if v is not None
    )


def chart_groups(
    selector: str,
    rows: Sequence[Aggregate],
    items: Sequence[Aggregate],
    pipelines: Sequence[str],
) -> list[tuple[str, list[float | None]]]:
    """The bar groups of one selector's chart: ``(label, mean per pipeline)``.

    On "all cases" a metric whose direction depends on the kind becomes one group per
    kind (``abstained (qa)``, ``abstained (unanswerable)``), from the kinds' own rows.
    """
    by = _by_metric(rows)
    per_kind = {k: _by_metric([a for a in items if a.selector == k]) for k in KIND_ORDER}
    groups: list[tuple[str, list[float | None]]] = []
    for m in sorted({a.metric for a in rows}, key=metric_order):
        if not _bounded(rows, m):
            continue
        if selector == "*" and direction_by_kind(m):
            for kind, kind_by in per_kind.items():
                values = [_stat(kind_by.get((p, m)), "mean") for p in pipelines]
                if any(v is not None for v in values):
                    groups.append((f"{m} ({kind})", values))
            continue
        values = [_stat(by.get((p, m)), "mean") for p in pipelines]
        if any(v is not None for v in values):
            groups.append((m, values))
    return groups


def aggregates(doc: Results, pipelines: Sequence[str]) -> Markup:
    items = doc.aggregates
    blocks = []
    for selector in _selectors(items):
        rows = [a for a in items if a.selector == selector]
        by = _by_metric(rows)
        metrics = sorted({a.metric for a in rows}, key=metric_order)
        title = "all cases" if selector == "*" else f"selector {selector}"
        groups = chart_groups(selector, rows, items, pipelines)
        headers = ["metric"]
        for p in pipelines:
            headers += [f"{p} mean", "min", "max", "n"]
        table_rows = []
        for m in metrics:
            row = [m]
            for p in pipelines:
                a = by.get((p, m))
                row += [num(_stat(a, s)) for s in ("mean", "min", "max")]
                row.append(_n(a))
            table_rows.append(row)
        long_rows = [
            [m, p, _n(by.get((p, m)))] + [num(_stat(by.get((p, m)), s), 4) for s in STATS]
            for m in metrics
            for p in pipelines
            if (p, m) in by
        ]
        blocks.append(
            {
                "title": title,
                # The first selector (all cases) is open; the others fold to keep the page short.
                "open": selector == "*",
                "chart": bar_chart(f"mean per metric, {title}", groups, pipelines)
                if groups
                else None,
                "headers": headers,
                "rows": table_rows,
                "long_headers": ["metric", "pipeline", "n", *STATS],
                "long_rows": long_rows,
            }
        )
    return render("report/aggregates.html.j2", blocks=blocks, legend=legend(pipelines))


def _stat(a: Aggregate | None, name: str) -> float | None:
    """The statistic ``name`` (:data:`STATS`) of an aggregate row; None: no row or no value."""
    return None if a is None else a.values.get(name)


def _n(a: Aggregate | None) -> str:
    if a is None:
        return "–"
    extra = []
    if a.n_error:
        extra.append(f"{a.n_error} error")
    if a.n_missing:
        extra.append(f"{a.n_missing} missing")
    return str(a.n) + (f" ({', '.join(extra)})" if extra else "")
