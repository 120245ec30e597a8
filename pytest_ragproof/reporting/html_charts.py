"""The HTML report's pictures, drawn on the server side as inline SVG (:mod:`.svg`).

* **Pass and fail**: per case kind and per question type, one 100% bar per pipeline
  split by case status, with the counts written beside it.
* **Score distributions**: per case kind (the first open, the others folded), one
  histogram per metric on the 0..1 scale with a panel per pipeline (ten bins of 0.1;
  two bars, 0 and 1, for a metric whose every value is 0 or 1). A case without the
  metric (an error, a judge that did not judge it, a metric that does not apply) is
  counted in the caption, never drawn as 0.
* **Baseline changes** (:func:`delta_rows`): the change of each compared mean with
  its 95% interval, for the baseline section.

Everything comes from the results document; every label is escaped by :mod:`.svg`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from pytest_ragproof.metrics.selector import metric_label
from pytest_ragproof.numeric import is_binary
from pytest_ragproof.reporting.html_aggregates import KIND_ORDER, UNCHARTED
from pytest_ragproof.reporting.html_sections import metric_order
from pytest_ragproof.reporting.svg import (
    DeltaRow,
    HistogramPanel,
    delta_chart,
    histogram,
    stacked_bars,
)
from pytest_ragproof.reporting.templating import call_macro

if TYPE_CHECKING:
    from pytest_ragproof.results.models import AggregateChange, Case, Results

__all__ = ["delta_rows", "distributions", "histogram_bins", "pass_fail"]

_CHARTS = "report/charts.html.j2"
STATUS_ORDER = ("passed", "failed", "error", "xfailed", "xpassed")
BINS = 10
BINARY_BINS = ("0", "1")


def _kind_key(kind: str) -> tuple[int, str]:
    return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), kind)


def _cases(doc: Results) -> list[Case]:
    return list(doc.cases)


def _counts(cases: Sequence[Case]) -> dict[str, int]:
    return dict(Counter(c.status for c in cases))


def pass_fail(doc: Results, pipelines: Sequence[str]) -> Markup:
    """Two stacked-bar charts: statuses per kind, then per question type."""
    cases = _cases(doc)
    if not cases:
        return call_macro(_CHARTS, "pass_fail", [])
    present = {c.status for c in cases}
    statuses = [s for s in STATUS_ORDER if s in present]
    statuses += sorted(present - set(statuses))
    several = len(pipelines) > 1
    kinds = sorted({c.kind for c in cases}, key=_kind_key)

    def rows_of(groups: Sequence[tuple[str, str | None, str | None]]) -> list[Any]:
        rows = []
        for label, kind, question_type in groups:
            for p in pipelines:
                mine = [
                    c
                    for c in cases
                    if c.pipeline == p
                    and (kind is None or c.kind == kind)
                    and (question_type is None or _question_type(c) == question_type)
                ]
                if mine:
                    rows.append((label, p if several else "", _counts(mine)))
        return rows

    by_kind = rows_of([(k, k, None) for k in kinds])
    types: dict[str, set[str]] = {}
    for c in cases:
        types.setdefault(_question_type(c), set()).add(c.kind)
    type_groups: list[tuple[str, str | None, str | None]] = []
    for qt in sorted(types, key=lambda t: (min(_kind_key(k) for k in types[t]), t)):
        if len(types[qt]) == 1:
            type_groups.append((qt, None, qt))
        else:  # the same question type under several kinds: one group per kind
            for kind in sorted(types[qt], key=_kind_key):
                type_groups.append((f"{qt} ({kind})", kind, qt))
    by_type = rows_of(type_groups)
    figures = [
        ("per case kind", stacked_bars("case status per kind", by_kind, statuses)),
        ("per question type", stacked_bars("case status per question type", by_type, statuses)),
    ]
    return call_macro(_CHARTS, "pass_fail", figures)


def _question_type(case: Case) -> str:
    return case.question_type or "simple"


def histogram_bins(values: Sequence[float]) -> tuple[list[str], list[tuple[float, str]], bool]:
    """The bins of a 0..1 metric: names, ticks and whether it is a 0/1 metric."""
    if is_binary(values):
        return list(BINARY_BINS), [(0.25, "0"), (0.75, "1")], True
    names = [f"[{i / BINS:g}, {(i + 1) / BINS:g})" for i in range(BINS - 1)]
    names.append(f"[{(BINS - 1) / BINS:g}, 1]")
    return names, [(0.0, "0"), (0.5, "0.5"), (1.0, "1")], False


def _bin(value: float, binary: bool) -> int:
    if binary:
        return int(value)
    # The last bin holds 1; a value a hair below an edge (0.7 from float sums) goes up.
    return min(BINS - 1, math.floor(value * BINS + 1e-9))


def _scores(cases: Sequence[Case], metric: str) -> list[float]:
    out = []
    for c in cases:
        value = c.metrics.get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number):
                out.append(number)
    return out


def distributions(doc: Results, pipelines: Sequence[str]) -> Markup:
    """Per kind, a histogram of each 0..1 metric with one panel per pipeline."""
    cases = _cases(doc)
    kinds = sorted({c.kind for c in cases}, key=_kind_key)
    out: list[tuple[str, list[tuple[str, Markup]]]] = []
    for kind in kinds:
        of_kind = [c for c in cases if c.kind == kind]
        metrics = sorted(
            {m for c in of_kind for m in c.metrics} - UNCHARTED,
            key=metric_order,
        )
        charts = []
        for metric in metrics:
            every = _scores(of_kind, metric)
            if not every or not all(0.0 <= v <= 1.0 for v in every):
                continue  # not on the 0..1 scale (a bring-your-own evaluator's number)
            bins, ticks, binary = histogram_bins(every)
            panels = []
            for i, p in enumerate(pipelines):
                mine = [c for c in of_kind if c.pipeline == p]
                if not mine:
                    continue
                values = _scores(mine, metric)
                counts = [0] * len(bins)
                for v in values:
                    counts[_bin(v, binary)] += 1
                missing = len(mine) - len(values)
                if values:
                    caption = f"n {len(values)} · mean {math.fsum(values) / len(values):.3g}"
                    caption += f" · {missing} without a score" if missing else ""
                else:
                    caption = f"no score ({len(mine)} case(s))"
                panels.append(HistogramPanel(p, counts, caption, i))
            title = f"distribution of {metric}, {kind} cases"
            charts.append((metric, histogram(title, bins, ticks, panels)))
        if charts:  # the first kind drawn is open, the others fold
            out.append((kind, charts))
    return call_macro(_CHARTS, "distributions", out)


def _bounded(a: AggregateChange) -> bool:
    means = (a.baseline_mean, a.current_mean)
    return a.metric not in UNCHARTED and all(m is not None and 0.0 <= m <= 1.0 for m in means)


def delta_rows(changes: Sequence[AggregateChange | Mapping[str, Any]]) -> list[DeltaRow]:
    """The rows of the baseline's change chart: compared metrics on the 0..1 scale
    (``changes``: the baseline's ``aggregates``, parsed or their models)."""
    from pytest_ragproof.results.models import AggregateChange

    typed = [
        a if isinstance(a, AggregateChange) else AggregateChange.model_validate(a) for a in changes
    ]
    drawn = [a for a in typed if a.delta is not None and _bounded(a)]
    several = len({a.pipeline for a in drawn}) > 1
    rows = []
    for a in drawn:
        label = metric_label(a.selector, a.metric)
        if several:
            label += f" [{a.pipeline}]"
        delta = float(a.delta or 0.0)
        interval = a.interval
        low = high = None
        if interval is not None:
            low, high = float(interval.low), float(interval.high)
            spread = f"{100 * float(interval.level):g}% [{_signed(low)}, {_signed(high)}]"
        elif "interval" in a.model_fields_set:
            spread = f"no interval ({a.n} pair)"
        else:
            spread = "no interval in this results file"
        p = None if a.test is None else a.test.p_value
        p_text = "p –" if p is None else f"p {p:.3g}"
        verdict = a.verdict
        text = f"{_signed(delta)} · {spread} · {p_text} · {verdict}"
        rows.append(DeltaRow(label, delta, low, high, text, verdict))
    return rows


def _signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+.3g}"


def baseline_chart(changes: Sequence[AggregateChange | Mapping[str, Any]]) -> Markup:
    rows = delta_rows(changes)
    if not rows:
        return Markup("")
    svg = delta_chart("change of each compared mean against the baseline", rows)
    return call_macro(_CHARTS, "baseline_chart", svg)
