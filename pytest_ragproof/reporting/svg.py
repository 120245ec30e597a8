"""Inline SVG charts for the HTML report (no library, no external reference).

The ``<svg>`` elements carry no ``xmlns``: HTML5 parsers put inline SVG in the
SVG namespace themselves, and the report must not contain any URL.

Every chart is readable without JavaScript and without colour: it is an image with
a ``<title>`` and an ``aria-label``, each bar or mark has a ``<title>`` of its own,
and the numbers are written next to the bars. Colours differ in lightness as well as
hue (so they stay apart in greyscale), and the marks of a comparison differ in shape.

Text is measured with :func:`text_width`, the advance widths of DejaVu Sans (the
widest common sans-serif, Debian's default) plus a margin, so a label is never cut
at the edge of its chart; a long row label wraps onto more lines (:func:`wrap`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

__all__ = [
    "PALETTE",
    "STATUS_COLORS",
    "DeltaRow",
    "HistogramPanel",
    "TrendMark",
    "bar_chart",
    "color",
    "delta_chart",
    "histogram",
    "label_width",
    "legend",
    "stacked_bars",
    "text_width",
    "trend_chart",
    "wrap",
]

PALETTE = ("#2f5fb3", "#e07b00", "#2a9d8f", "#b5179e", "#6a994e", "#8d6e63", "#5c677d")

# Advance widths of DejaVu Sans in em, rounded up to 0.02 em, by character.
_EM_GROUPS = (
    (0.28, "ijl'"),
    (0.30, "IJ"),
    (0.32, ",. "),
    (0.34, "/:;\\|"),
    (0.36, "f"),
    (0.38, "-"),
    (0.40, "t()[]"),
    (0.42, "r!"),
    (0.46, '"'),
    (0.50, "*_`"),
    (0.54, "sz?"),
    (0.56, "cL"),
    (0.58, "kF"),
    (0.60, "vxy"),
    (0.62, "aeoPTY"),
    (0.64, "0123456789bdghnpquES${}"),
    (0.66, "K"),
    (0.70, "ABCRVXZ"),
    (0.74, "U"),
    (0.76, "HN"),
    (0.78, "DG&"),
    (0.80, "OQ"),
    (0.82, "w"),
    (0.84, "#+<=>^~"),
    (0.88, "M"),
    (0.96, "%"),
    (0.98, "m"),
    (1.00, "W@"),
)
_EM = {ch: em for em, chars in _EM_GROUPS for ch in chars}
_EM_OTHER = 0.8  # any other character (accented letters, symbols, other scripts)
_EM_WIDE = 1.05  # East Asian wide and full-width characters
# Other fonts (Liberation, Noto) stay inside this margin over DejaVu Sans; bold
# DejaVu Sans is up to 1.27 times as wide as regular ("J"), hence its own factor.
_MARGIN = 1.12
_BOLD = 1.15

FONT = 12  # the report's chart font size (report.css: svg.chart)
SMALL = 10
MIN_LABEL_W = 60
LABEL_PAD = 12
# Row labels longer than this wrap onto more lines.
MAX_LABEL_W = 300
PLOT_W = 454
VALUE_W = 56
BAR_H = 13
GAP = 3
GROUP_GAP = 9
LINE_H = 14


def text_width(text: str, size: float = FONT, *, bold: bool = False) -> float:
    """A generous width of ``text`` in pixels at font ``size`` (never less than drawn)."""
    total = 0.0
    for ch in text:
        em = _EM.get(ch)
        if em is None:
            if unicodedata.combining(ch):
                em = 0.0
            elif unicodedata.east_asian_width(ch) in ("W", "F"):
                em = _EM_WIDE
            else:
                em = _EM_OTHER
        total += em
    return total * size * _MARGIN * (_BOLD if bold else 1.0)


def wrap(text: str, max_width: float, size: float = FONT, *, bold: bool = False) -> list[str]:
    """``text`` in lines no wider than ``max_width``: broken after a space, ``_``, ``:``,
    ``-``, ``/``, ``@``, ``.``, ``,`` or ``)`` where it can, else inside a word."""
    if text_width(text, size, bold=bold) <= max_width:
        return [text]
    tokens: list[str] = []
    current = ""
    for ch in text:
        current += ch
        if ch in " _:-/@.,)":
            tokens.append(current)
            current = ""
    if current:
        tokens.append(current)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and text_width(line + token.rstrip(), size, bold=bold) > max_width:
            lines.append(line.rstrip())
            line = ""
        while text_width(token.rstrip(), size, bold=bold) > max_width:  # wider than a line
            cut = 1
            while cut < len(token) and text_width(token[: cut + 1], size, bold=bold) <= max_width:
                cut += 1
            lines.append(token[:cut])
            token = token[cut:]
        line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def legend(series: Sequence[str]) -> str:
    items = "".join(
        f'<span><i style="background:{color(i)}"></i>{escape(name)}</span>'
        for i, name in enumerate(series)
    )
    return f'<div class="legend">{items}</div>'


def label_width(labels: Sequence[str], size: float = FONT, *, bold: bool = False) -> int:
    """The width of a label column: the widest label fits whole."""
    widest = max((text_width(label, size, bold=bold) for label in labels), default=0.0)
    return max(MIN_LABEL_W, math.ceil(widest) + LABEL_PAD)


def _open(title: str, width: float, height: float, cls: str = "chart") -> list[str]:
    w, h = math.ceil(width), math.ceil(height)
    return [
        f'<svg class="{cls}" role="img" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]


def _lines(x: float, y: float, lines: Sequence[str], attrs: str = "") -> str:
    """A multi-line label whose lines are centred on ``y``."""
    if len(lines) == 1:
        return (
            f'<text x="{x:.1f}" y="{y:.1f}"{attrs} dominant-baseline="middle">'
            f"{escape(lines[0])}</text>"
        )
    top = y - (len(lines) - 1) * LINE_H / 2
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{top + i * LINE_H:.1f}">{escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text{attrs} dominant-baseline="middle">{spans}</text>'


def bar_chart(
    title: str,
    groups: Sequence[tuple[str, Sequence[float | None]]],
    series: Sequence[str],
    *,
    plot_w: int = PLOT_W,
    max_value: float = 1.0,
) -> str:
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
    out = _open(title, width, height)
    out.append(f'<line x1="{label_w}" y1="0" x2="{label_w}" y2="{height}" stroke="#c5ccd6"/>')
    y = float(GROUP_GAP)
    for (label, values), lines, group_h in zip(groups, wrapped, heights, strict=True):
        out.append(_lines(label_w - 8, y + group_h / 2, lines, ' text-anchor="end"'))
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
    return "".join(out)


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
) -> str:
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
    return "".join([*_open(title, width, height), *out, "</svg>"])


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
) -> str:
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
            out.append(_lines(group_w - 8, mid, lines, ' text-anchor="end" font-weight="600"'))
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
    return "".join([*_open(title, width, y + GAP), *legend_items, *out, "</svg>"])


# -- a comparison's changes with their intervals -----------------------------------------


@dataclass(frozen=True)
class DeltaRow:
    """One compared metric: the change of its mean and the interval of that change."""

    label: str
    delta: float
    low: float | None  # None: no interval (fewer than two pairs)
    high: float | None
    text: str  # written right of the plot: the numbers, p and the verdict
    mark: str = "unchanged"  # regression | improved | anything else


_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0)
DELTA_PLOT_W = 320
DELTA_ROW_H = 20
# The marks differ in shape as well as colour: a diamond for a regression, a filled
# circle for an improvement, an open circle for anything else.
MARKS = {"regression": "#9b1c1c", "improved": "#1d5e3a"}


def _marker(kind: str, x: float, y: float, tip: str) -> str:
    title = f"<title>{escape(tip)}</title>"
    if kind == "regression":
        r = 6
        points = f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
        return f'<polygon points="{points}" fill="{MARKS[kind]}">{title}</polygon>'
    if kind == "improved":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{MARKS[kind]}">{title}</circle>'
    return (
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="#fff" stroke="#2d3640" '
        f'stroke-width="1.5">{title}</circle>'
    )


def delta_chart(title: str, rows: Sequence[DeltaRow], *, limit: float = 1.0) -> str:
    """A dot-and-whisker chart: per row the change of the mean (dot) and its interval.

    The axis is symmetric around 0 and reaches the largest |value| drawn, rounded up to
    a step, at most ``limit`` (a change of a mean of 0..1 values lies in [-1, 1]); a
    whisker reaching past the axis ends in an arrow. The exact numbers are the row's
    text.
    """
    reach = max(
        (abs(v) for r in rows for v in (r.delta, r.low, r.high) if v is not None), default=0.0
    )
    span = next((s for s in _STEPS if s >= min(reach, limit) * 1.04), limit)
    span = min(span, limit)
    wrapped = [wrap(r.label, MAX_LABEL_W) for r in rows]
    label_w = label_width([line for lines in wrapped for line in lines])
    text_w = max((text_width(r.text) for r in rows), default=0.0)
    plot_x = label_w + 10  # room for the first tick's label, centred on the axis end
    width = plot_x + DELTA_PLOT_W + 14 + text_w + 4
    axis_note = "change of the mean, now − baseline (whisker: 95% interval)"
    width = max(width, plot_x + text_width(axis_note, 11))

    def x_of(value: float) -> float:
        clamped = max(-span, min(span, value))
        return plot_x + (clamped + span) / (2 * span) * DELTA_PLOT_W

    heights = [max(DELTA_ROW_H, len(lines) * LINE_H + 4) for lines in wrapped]
    plot_top = 6.0
    plot_bottom = plot_top + sum(heights)
    out = [
        f'<rect x="{plot_x}" y="{plot_top}" width="{DELTA_PLOT_W}" '
        f'height="{plot_bottom - plot_top:.1f}" fill="#f6f8fa"/>'
    ]
    for i in range(5):
        value = -span + i * span / 2
        tx = x_of(value)
        zero = i == 2
        out.append(
            f'<line x1="{tx:.1f}" y1="{plot_top}" x2="{tx:.1f}" y2="{plot_bottom:.1f}" '
            f'stroke="{"#2d3640" if zero else "#d0d7de"}" '
            f'stroke-width="{1.2 if zero else 1}"/>'
            f'<text x="{tx:.1f}" y="{plot_bottom + 12:.1f}" text-anchor="middle" '
            f'dominant-baseline="middle" font-size="{SMALL}">{"0" if zero else f"{value:+g}"}'
            "</text>"
        )
    y = plot_top
    for row, lines, row_h in zip(rows, wrapped, heights, strict=True):
        mid = y + row_h / 2
        out.append(_lines(label_w - 8, mid, lines, ' text-anchor="end"'))
        tip = f"{row.label}: {row.text}"
        if row.low is not None and row.high is not None:
            x1, x2 = x_of(row.low), x_of(row.high)
            out.append(
                f'<line x1="{x1:.1f}" y1="{mid:.1f}" x2="{x2:.1f}" y2="{mid:.1f}" '
                'stroke="#2d3640" stroke-width="1.5"/>'
            )
            for value, end in ((row.low, x1), (row.high, x2)):
                if abs(value) > span:  # the interval goes on past the axis: an arrow
                    step = -5 if value < 0 else 5
                    out.append(
                        f'<polyline points="{end - step:.1f},{mid - 4:.1f} {end:.1f},{mid:.1f} '
                        f'{end - step:.1f},{mid + 4:.1f}" fill="none" stroke="#2d3640" '
                        'stroke-width="1.5"/>'
                    )
                else:
                    out.append(
                        f'<line x1="{end:.1f}" y1="{mid - 4:.1f}" x2="{end:.1f}" '
                        f'y2="{mid + 4:.1f}" stroke="#2d3640" stroke-width="1.5"/>'
                    )
        out.append(_marker(row.mark, x_of(row.delta), mid, tip))
        out.append(
            f'<text x="{plot_x + DELTA_PLOT_W + 14}" y="{mid:.1f}" dominant-baseline="middle">'
            f"{escape(row.text)}</text>"
        )
        y += row_h
    out.append(
        f'<text x="{plot_x}" y="{plot_bottom + 28:.1f}" '
        f'dominant-baseline="middle" font-size="11" fill="#5b6572">'
        f"{escape(axis_note)}</text>"
    )
    return "".join([*_open(title, width, plot_bottom + 38), *out, "</svg>"])


# -- a metric over runs -------------------------------------------------------------------


@dataclass(frozen=True)
class TrendMark:
    """One run's value in a trend: its tooltip names the run (and its commit)."""

    value: float | None  # None: the run has no value (no case scored it)
    tip: str
    failed: bool = False  # the run's gate on this metric failed


TREND_PLOT_W = 360
TREND_PLOT_H = 110
TREND_AXIS_W = 34


def _bound_text(op: str, value: float) -> str:
    shown = {">=": "≥", "<=": "≤"}.get(op, op)
    return f"gate {shown} {value:g}"


def trend_chart(
    title: str,
    marks: Sequence[TrendMark],
    *,
    bound: tuple[str, float] | None = None,
    caption: str = "",
) -> str:
    """A metric's value over runs, oldest left: a line through a dot per run, the gate's
    bound as a dashed line named beside it, and the newest value written at the end.

    A run whose gate failed is a diamond, the others dots; a run without a value breaks
    the line. The scale is 0..1 when every value (and the bound) is in it, else 0 to the
    largest value.
    """
    values = [m.value for m in marks if m.value is not None]
    top = max([*values, *([bound[1]] if bound else []), 0.0])
    low = min([*values, *([bound[1]] if bound else []), 0.0])
    bounded = low >= 0.0 and top <= 1.0
    y_max = 1.0 if bounded else (top * 1.1 or 1.0)
    y_min = 0.0 if low >= 0.0 else low * 1.1
    newest = next((m for m in reversed(marks) if m.value is not None), None)
    end_text = "" if newest is None or newest.value is None else f"{newest.value:.3g}"
    bound_label = _bound_text(*bound) if bound else ""
    right_w = max(text_width(end_text, bold=True), text_width(bound_label, SMALL)) + 12
    plot_x = TREND_AXIS_W
    width = max(plot_x + TREND_PLOT_W + right_w, plot_x + text_width(caption, 11) + 4)
    plot_top = 8.0
    height = plot_top + TREND_PLOT_H + 34

    def y_of(value: float) -> float:
        share = (value - y_min) / (y_max - y_min) if y_max > y_min else 0.5
        return plot_top + TREND_PLOT_H * (1 - max(0.0, min(1.0, share)))

    def x_of(i: int) -> float:
        if len(marks) <= 1:
            return plot_x + TREND_PLOT_W / 2
        return plot_x + 6 + i * (TREND_PLOT_W - 12) / (len(marks) - 1)

    out = [
        f'<rect x="{plot_x}" y="{plot_top}" width="{TREND_PLOT_W}" height="{TREND_PLOT_H}" '
        'fill="#f6f8fa"/>'
    ]
    for value in (y_min, (y_min + y_max) / 2, y_max):
        ty = y_of(value)
        out.append(
            f'<line x1="{plot_x}" y1="{ty:.1f}" x2="{plot_x + TREND_PLOT_W}" y2="{ty:.1f}" '
            'stroke="#d0d7de"/>'
            f'<text x="{plot_x - 4}" y="{ty:.1f}" text-anchor="end" dominant-baseline="middle" '
            f'font-size="{SMALL}">{value:.3g}</text>'
        )
    if bound is not None:
        by = y_of(bound[1])
        out.append(
            f'<line x1="{plot_x}" y1="{by:.1f}" x2="{plot_x + TREND_PLOT_W}" y2="{by:.1f}" '
            'stroke="#9b1c1c" stroke-width="1.5" stroke-dasharray="6 4">'
            f"<title>{escape(bound_label)}</title></line>"
            f'<text x="{plot_x + TREND_PLOT_W + 6}" y="{by:.1f}" dominant-baseline="middle" '
            f'font-size="{SMALL}" fill="#9b1c1c">{escape(bound_label)}</text>'
        )
    segment: list[str] = []
    lines: list[list[str]] = [segment]
    for i, m in enumerate(marks):
        if m.value is None:
            segment = []
            lines.append(segment)
            continue
        segment.append(f"{x_of(i):.1f},{y_of(m.value):.1f}")
    for points in lines:
        if len(points) > 1:
            out.append(
                f'<polyline points="{" ".join(points)}" fill="none" stroke="{PALETTE[0]}" '
                'stroke-width="1.5"/>'
            )
    radius = 3.0 if len(marks) <= 60 else 1.8
    for i, m in enumerate(marks):
        if m.value is None:
            continue
        x, y = x_of(i), y_of(m.value)
        tip = f"<title>{escape(m.tip)}</title>"
        if m.failed:
            r = radius + 1.5
            corners = (
                f"{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}"
            )
            out.append(f'<polygon points="{corners}" fill="{MARKS["regression"]}">{tip}</polygon>')
        else:
            out.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{PALETTE[0]}">{tip}</circle>'
            )
    if newest is not None and newest.value is not None:
        # beside the plot, at the newest value's height, unless the bound's name is there
        ny = y_of(newest.value)
        if bound is not None and abs(ny - y_of(bound[1])) < 12:
            ny += 12 if ny >= y_of(bound[1]) else -12
        ny = max(6.0, min(height - 6.0, ny))
        out.append(
            f'<text x="{plot_x + TREND_PLOT_W + 6}" y="{ny:.1f}" dominant-baseline="middle" '
            f'font-weight="600">{escape(end_text)}</text>'
        )
    if caption:
        out.append(
            f'<text x="{plot_x}" y="{plot_top + TREND_PLOT_H + 22:.1f}" '
            f'dominant-baseline="middle" font-size="11">{escape(caption)}</text>'
        )
    return "".join([*_open(title, width, height), *out, "</svg>"])
