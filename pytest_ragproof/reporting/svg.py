"""Inline SVG charts for the HTML report (no library, no external reference).

The ``<svg>`` elements carry no ``xmlns``: HTML5 parsers put inline SVG in the
SVG namespace themselves, and the report must not contain any URL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

PALETTE = ("#2f5fb3", "#e07b00", "#2a9d8f", "#b5179e", "#6a994e", "#8d6e63", "#5c677d")

# Room for a label: a generous width per character of the report's 12px sans-serif
# (wide fonts such as DejaVu Sans draw about 7px), so no label is cut on the left.
CHAR_W = 7.5
LABEL_PAD = 12
MIN_LABEL_W = 60
PLOT_W = 454
VALUE_W = 56
BAR_H = 13
GAP = 3
GROUP_GAP = 9


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def legend(series: Sequence[str]) -> str:
    items = "".join(
        f'<span><i style="background:{color(i)}"></i>{escape(name)}</span>'
        for i, name in enumerate(series)
    )
    return f'<div class="legend">{items}</div>'


def label_width(labels: Sequence[str]) -> int:
    """The width of the label column: the longest label fits whole."""
    longest = max((len(label) for label in labels), default=0)
    return max(MIN_LABEL_W, math.ceil(longest * CHAR_W) + LABEL_PAD)


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
    label column is as wide as the longest label; the plot keeps its width, so bars of
    different charts compare.
    """
    label_w = label_width([label for label, _ in groups])
    width = label_w + plot_w + VALUE_W
    per_group = len(series) * (BAR_H + GAP) - GAP
    height = len(groups) * (per_group + GROUP_GAP) + GROUP_GAP
    out = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{label_w}" y1="0" x2="{label_w}" y2="{height}" stroke="#c5ccd6"/>',
    ]
    y = GROUP_GAP
    for label, values in groups:
        mid = y + per_group / 2
        out.append(
            f'<text x="{label_w - 8}" y="{mid:.1f}" text-anchor="end" '
            f'dominant-baseline="middle">{escape(label)}</text>'
        )
        for i, value in enumerate(values):
            bar_y = y + i * (BAR_H + GAP)
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
                f'<rect x="{label_w}" y="{bar_y}" width="{bar_w:.1f}" height="{BAR_H}" '
                f'fill="{color(i)}"><title>{name}: {escape(label)} = {value:.4g}</title></rect>'
            )
            out.append(
                f'<text x="{label_w + bar_w + 4:.1f}" y="{text_y:.1f}" '
                f'dominant-baseline="middle">{value:.3g}</text>'
            )
        y += per_group + GROUP_GAP
    out.append("</svg>")
    return "".join(out)
