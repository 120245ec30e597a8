"""What every SVG chart draws with: measured text, wrapped labels, the palette, the frame.

Text is measured with :func:`text_width`, the advance widths of DejaVu Sans (the
widest common sans-serif, Debian's default) plus a margin, so a label is never cut
at the edge of its chart; a long row label wraps onto more lines (:func:`wrap`) and
is drawn centred on its row (:func:`text_lines`). :func:`svg_open` starts a chart
with its ``<title>`` and ``aria-label``. The chart kinds are in :mod:`.svg_bars` and
:mod:`.svg_changes`; :mod:`.svg` is the import path for all of them.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from html import escape

from markupsafe import Markup

__all__ = [
    "BAR_H",
    "FONT",
    "GAP",
    "GROUP_GAP",
    "LABEL_PAD",
    "LINE_H",
    "MAX_LABEL_W",
    "MIN_LABEL_W",
    "PALETTE",
    "PLOT_W",
    "SMALL",
    "VALUE_W",
    "color",
    "label_width",
    "legend",
    "svg_open",
    "text_lines",
    "text_width",
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


def legend(series: Sequence[str]) -> Markup:
    items = "".join(
        f'<span><i style="background:{color(i)}"></i>{escape(name)}</span>'
        for i, name in enumerate(series)
    )
    return Markup(f'<div class="legend">{items}</div>')


def label_width(labels: Sequence[str], size: float = FONT, *, bold: bool = False) -> int:
    """The width of a label column: the widest label fits whole."""
    widest = max((text_width(label, size, bold=bold) for label in labels), default=0.0)
    return max(MIN_LABEL_W, math.ceil(widest) + LABEL_PAD)


def svg_open(title: str, width: float, height: float, cls: str = "chart") -> list[str]:
    w, h = math.ceil(width), math.ceil(height)
    return [
        f'<svg class="{cls}" role="img" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]


def text_lines(x: float, y: float, lines: Sequence[str], attrs: str = "") -> str:
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
