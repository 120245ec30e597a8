"""Charts of change: a comparison's deltas with their intervals (:func:`delta_chart`) and
one metric over runs (:func:`trend_chart`), marked the same way, over :mod:`.svg_base`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from pytest_ragproof.reporting.svg_base import (
    LINE_H,
    MAX_LABEL_W,
    PALETTE,
    SMALL,
    label_width,
    svg_open,
    text_lines,
    text_width,
    wrap,
)

__all__ = ["MARKS", "DeltaRow", "TrendMark", "delta_chart", "trend_chart"]

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


def delta_chart(title: str, rows: Sequence[DeltaRow], *, limit: float = 1.0) -> Markup:
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
        out.append(text_lines(label_w - 8, mid, lines, ' text-anchor="end"'))
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
    return Markup("".join([*svg_open(title, width, plot_bottom + 38), *out, "</svg>"]))


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
) -> Markup:
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
    return Markup("".join([*svg_open(title, width, height), *out, "</svg>"]))
