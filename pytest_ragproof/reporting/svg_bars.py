"""Bar charts: values per label (:func:`bar_chart`), histograms (:func:`histogram`) and
stacked bars of case statuses (:func:`stacked_bars`), over :mod:`.svg_base`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from pytest_ragproof.reporting.svg_base import (
    BAR_H,
    GAP,
    GROUP_GAP,
    LINE_H,
    MAX_LABEL_W,
    PLOT_W,
    SMALL,
    VALUE_W,
    color,
    label_width,
    svg_open,
    text_lines,
    text_width,
    wrap,
)

__all__ = ["STACK_W", "STATUS_COLORS", "HistogramPanel", "bar_chart", "histogram", "stacked_bars"]


def bar_chart(
    title: str,
    groups: Sequence[tuple[str, Sequence[float | None]]],
    series: Sequence[str],
    *,
    plot_w: int = PLOT_W,
    max_value: float = 1.0,
) -> Markup:
    """Horizontal grouped bars: one group per label, one bar per series (pipeline).

    ``None`` values draw no bar and read "n/a" (a pipeline without that metric). The
    label column is as wide as the widest label (a label wider than ``MAX_LABEL_W``
    wraps); the plot keeps its width, so bars of different charts compare.
    """
    wrapped = [wrap(label, MAX_LABEL_W) for label, _ in groups]
    label_w = label_width([line for lines in wrapped for line in lines])
    width = label_w + plot_w + VALUE_W
    per_group = len(series) * (BAR_H + GAP) - GAP
    heights = [max(per_group, len(lines) * LINE_H) for lines in wrapped]
    height = sum(h + GROUP_GAP for h in heights) + GROUP_GAP
    out = svg_open(title, width, height)
    out.append(f'<line x1="{label_w}" y1="0" x2="{label_w}" y2="{height}" stroke="#c5ccd6"/>')
    y = float(GROUP_GAP)
    for (label, values), lines, group_h in zip(groups, wrapped, heights, strict=True):
        out.append(text_lines(label_w - 8, y + group_h / 2, lines, ' text-anchor="end"'))
        top = y + (group_h - per_group) / 2
        for i, value in enumerate(values):
            bar_y = top + i * (BAR_H + GAP)
            text_y = bar_y + BAR_H / 2
            if value is None:
                out.append(
                    f'<text x="{label_w + 4}" y="{text_y:.1f}" dominant-baseline="middle" '
                    'fill="#5b6572">n/a</text>'
                )
                continue
            share = max(0.0, min(1.0, value / max_value)) if max_value > 0 else 0.0
            bar_w = share * plot_w
            name = escape(series[i])
            out.append(
                f'<rect x="{label_w}" y="{bar_y:.1f}" width="{bar_w:.1f}" height="{BAR_H}" '
                f'fill="{color(i)}"><title>{name}: {escape(label)} = {value:.4g}</title></rect>'
            )
            out.append(
                f'<text x="{label_w + bar_w + 4:.1f}" y="{text_y:.1f}" '
                f'dominant-baseline="middle">{value:.3g}</text>'
            )
        y += group_h + GROUP_GAP
    out.append("</svg>")
    return Markup("".join(out))


# -- histograms ------------------------------------------------------------------------


@dataclass(frozen=True)
class HistogramPanel:
    """One pipeline's histogram: counts per bin and a caption (n, mean, missing)."""

    name: str
    counts: Sequence[int]
    caption: str
    series: int = 0  # the pipeline's colour


HIST_PLOT_H = 72
HIST_PAD = 14
HIST_GAP = 18


def histogram(
    title: str,
    bins: Sequence[str],
    ticks: Sequence[tuple[float, str]],
    panels: Sequence[HistogramPanel],
) -> Markup:
    """Vertical histograms side by side, one panel per pipeline, on one count scale.

    ``bins`` name each bin (its tooltip: ``[0.3, 0.4)``); ``ticks`` are ``(position,
    label)`` under the plot, the position a fraction of the plot's width. Each bar has
    its count written above it.
    """
    top_count = max((c for p in panels for c in p.counts), default=0)
    bin_w = max(20 if len(bins) > 4 else 40, math.ceil(text_width(str(top_count), SMALL)) + 6)
    plot_w = len(bins) * bin_w
    name_y = 14
    plot_top = name_y + 8 + SMALL + 4  # room for the counts above the tallest bar
    axis_y = plot_top + HIST_PLOT_H
    tick_y = axis_y + 12
    caption_y = tick_y + 16
    height = caption_y + 8
    out: list[str] = []
    x = 0.0
    for panel in panels:
        panel_w = max(
            plot_w + 2 * HIST_PAD,
            text_width(panel.name, bold=True) + 2 * HIST_PAD,
            text_width(panel.caption, 11) + 2 * HIST_PAD,
        )
        left = x + (panel_w - plot_w) / 2
        name = escape(panel.name)
        out.append(
            f'<text x="{x + panel_w / 2:.1f}" y="{name_y}" text-anchor="middle" '
            f'font-weight="600">{name}</text>'
        )
        for i, count in enumerate(panel.counts):
            bar_x = left + i * bin_w + 1
            if count <= 0 or top_count <= 0:
                continue
            bar_h = max(1.0, HIST_PLOT_H * count / top_count)
            out.append(
                f'<rect x="{bar_x:.1f}" y="{axis_y - bar_h:.1f}" width="{bin_w - 2}" '
                f'height="{bar_h:.1f}" fill="{color(panel.series)}">'
                f"<title>{name}: {escape(bins[i])}: {count} case(s)</title></rect>"
            )
            out.append(
                f'<text x="{bar_x + (bin_w - 2) / 2:.1f}" y="{axis_y - bar_h - 3:.1f}" '
                f'text-anchor="middle" font-size="{SMALL}">{count}</text>'
            )
        out.append(
            f'<line x1="{left:.1f}" y1="{axis_y}" x2="{left + plot_w:.1f}" y2="{axis_y}" '
            'stroke="#5b6572"/>'
        )
        for pos, label in ticks:
            tick_x = left + pos * plot_w
            out.append(
                f'<line x1="{tick_x:.1f}" y1="{axis_y}" x2="{tick_x:.1f}" y2="{axis_y + 3}" '
                'stroke="#5b6572"/>'
                f'<text x="{tick_x:.1f}" y="{tick_y}" text-anchor="middle" '
                f'dominant-baseline="middle" font-size="{SMALL}">{escape(label)}</text>'
            )
        out.append(
            f'<text x="{x + panel_w / 2:.1f}" y="{caption_y}" text-anchor="middle" '
            f'dominant-baseline="middle" font-size="11" fill="#5b6572">'
            f"{escape(panel.caption)}</text>"
        )
        x += panel_w + HIST_GAP
    width = max(x - HIST_GAP, 1.0)
    return Markup("".join([*svg_open(title, width, height), *out, "</svg>"]))


# -- stacked bars of case statuses ----------------------------------------------------

# Lightness falls from error to passed, so the segments stay apart in greyscale; each
# segment is outlined in white and its count is written beside the bar as well.
STATUS_COLORS: dict[str, str] = {
    "passed": "#1d5e3a",
    "failed": "#d6604d",
    "xfailed": "#8c96c6",
    "xpassed": "#bcc4de",
    "error": "#f6d55c",
}
STACK_W = 300


def _status_text(counts: Mapping[str, int], order: Sequence[str]) -> str:
    total = sum(counts.get(s, 0) for s in order)
    passed = counts.get("passed", 0)
    share = f" ({100 * passed / total:.0f}%)" if total else ""
    parts = [f"{passed}/{total} passed{share}"]
    parts += [f"{counts[s]} {s}" for s in order if s != "passed" and counts.get(s)]
    return " · ".join(parts)


def stacked_bars(
    title: str,
    rows: Sequence[tuple[str, str, Mapping[str, int]]],
    statuses: Sequence[str],
) -> Markup:
    """One 100% bar per row, its segments the share of each status, counts beside it.

    ``rows`` are ``(group, pipeline, counts)``: the group (a kind, a question type) is
    written on its first row; the pipeline column is left out when every pipeline
    name is empty (a run of one pipeline).
    """
    group_lines = [wrap(group, MAX_LABEL_W, bold=True) for group, _, _ in rows]
    group_w = label_width([line for lines in group_lines for line in lines], bold=True)
    with_pipeline = any(pipeline for _, pipeline, _ in rows)
    pipe_w = label_width([p for _, p, _ in rows]) if with_pipeline else 0
    texts = [_status_text(counts, statuses) for _, _, counts in rows]
    text_w = max((text_width(t) for t in texts), default=0.0)
    bar_x = group_w + pipe_w
    width = bar_x + STACK_W + 8 + text_w + 4
    # The legend: a swatch and a name per status, on one line above the bars.
    legend_items = []
    lx = 0.0
    for status in statuses:
        legend_items.append(
            f'<rect x="{lx:.1f}" y="4" width="12" height="12" fill="{STATUS_COLORS[status]}" '
            f'stroke="#5b6572" stroke-width="0.5"/><text x="{lx + 16:.1f}" y="10" '
            f'dominant-baseline="middle">{escape(status)}</text>'
        )
        lx += 16 + text_width(status) + 14
    width = max(width, lx)
    out: list[str] = []
    y = 26.0
    previous = None
    for (group, pipeline, counts), lines, text in zip(rows, group_lines, texts, strict=True):
        new_group = group != previous
        if new_group and previous is not None:
            y += GROUP_GAP
        row_h = max(BAR_H + 2 * GAP, len(lines) * LINE_H if new_group else 0)
        mid = y + row_h / 2
        if new_group:
            out.append(text_lines(group_w - 8, mid, lines, ' text-anchor="end" font-weight="600"'))
        if with_pipeline:
            out.append(
                f'<text x="{bar_x - 8}" y="{mid:.1f}" text-anchor="end" '
                f'dominant-baseline="middle">{escape(pipeline)}</text>'
            )
        total = sum(counts.get(s, 0) for s in statuses)
        seg_x = float(bar_x)
        for status in statuses:
            n = counts.get(status, 0)
            if not n or not total:
                continue
            seg_w = STACK_W * n / total
            tip = f"{group}{' · ' + pipeline if pipeline else ''}: {n} {status} of {total}"
            out.append(
                f'<rect x="{seg_x:.1f}" y="{mid - BAR_H / 2:.1f}" width="{seg_w:.1f}" '
                f'height="{BAR_H}" fill="{STATUS_COLORS[status]}" stroke="#fff" '
                f'stroke-width="1"><title>{escape(tip)}</title></rect>'
            )
            seg_x += seg_w
        out.append(
            f'<text x="{bar_x + STACK_W + 8}" y="{mid:.1f}" dominant-baseline="middle">'
            f"{escape(text)}</text>"
        )
        y += row_h
        previous = group
    return Markup("".join([*svg_open(title, width, y + GAP), *legend_items, *out, "</svg>"]))
