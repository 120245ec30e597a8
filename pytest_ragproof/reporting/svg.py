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

This module is the import path of every chart: the primitives are in
:mod:`.svg_base`, bars, histograms and status stacks in :mod:`.svg_bars`, a
comparison's deltas and the trends over runs in :mod:`.svg_changes`.
"""

from __future__ import annotations

from pytest_ragproof.reporting.svg_bars import (
    STACK_W,
    STATUS_COLORS,
    HistogramPanel,
    bar_chart,
    histogram,
    stacked_bars,
)
from pytest_ragproof.reporting.svg_base import PALETTE, color, label_width, legend, text_width, wrap
from pytest_ragproof.reporting.svg_changes import DeltaRow, TrendMark, delta_chart, trend_chart

__all__ = [
    "PALETTE",
    "STACK_W",
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
