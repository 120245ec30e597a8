"""The HTML report's pictures as SVG: parsed with xml.etree, bars and values counted."""

from __future__ import annotations

import itertools
import math
import re
import string
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_ragproof.reporting.html import render_html
from pytest_ragproof.reporting.html_charts import delta_rows, histogram_bins
from pytest_ragproof.reporting.svg import (
    STACK_W,
    STATUS_COLORS,
    DeltaRow,
    HistogramPanel,
    bar_chart,
    delta_chart,
    histogram,
    stacked_bars,
    text_width,
    wrap,
)
from tests.reporting.conftest import Runs

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
NASTY = "<i>\"a\" & 'b'</i>"


def svg_of(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def charts_in(page: str, section: str) -> list[ET.Element]:
    body = page.split(f'<section id="{section}">')[1].split("</section>")[0]
    return [svg_of(m) for m in re.findall(r"<svg .*?</svg>", body, flags=re.S)]


def text_of(element: ET.Element) -> str:
    return "".join(element.itertext())


def labels(svg: ET.Element) -> list[str]:
    return [text_of(t) for t in svg.iter("text")]


def viewbox(svg: ET.Element) -> tuple[float, float]:
    _, _, w, h = (float(v) for v in svg.attrib["viewBox"].split())
    assert (svg.attrib["width"], svg.attrib["height"]) == (f"{w:g}", f"{h:g}")
    return w, h


def assert_text_inside(svg: ET.Element) -> None:
    """Every text element, by the generous width estimate, lies inside the viewBox."""
    width, height = viewbox(svg)
    for t in svg.iter("text"):
        size = float(t.attrib.get("font-size", 12))
        bold = t.attrib.get("font-weight") == "600"
        spans = list(t.iter("tspan")) or [t]
        for span in spans:
            x = float(span.attrib.get("x", t.attrib.get("x", "0")))
            y = float(span.attrib.get("y", t.attrib.get("y", "0")))
            w = text_width(text_of(span), size, bold=bold)
            anchor = t.attrib.get("text-anchor", "start")
            left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
            assert left >= 0 and left + w <= width + 0.5, (text_of(span), left, w, width)
            assert 0 <= y <= height, (text_of(span), y, height)


# -- measuring text --------------------------------------------------------------------


def advance_widths(font: Path) -> dict[str, float]:
    ttlib = pytest.importorskip("fontTools.ttLib")
    face = ttlib.TTFont(str(font))
    cmap, metrics = face.getBestCmap(), face["hmtx"]
    upm = face["head"].unitsPerEm
    return {ch: metrics[cmap[ord(ch)]][0] / upm for ch in string.printable[:95]}


@pytest.mark.parametrize("font", ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf"])
def test_text_width_is_never_less_than_dejavu_sans_draws(font: str) -> None:
    if not (DEJAVU / font).exists():
        pytest.skip("the DejaVu fonts are not installed (Debian: fonts-dejavu-core)")
    em = advance_widths(DEJAVU / font)
    bold = "Bold" in font
    for size in (10, 11, 12):
        for ch, width in em.items():
            assert text_width(ch, size, bold=bold) >= width * size, (font, ch)
        for text in ("answer_correctness_precision", "WWWWMMMM@@@", "injection:abstained_judged"):
            assert text_width(text, size, bold=bold) >= sum(em[c] for c in text) * size
    # other scripts are measured too: a wide character is at least one em
    assert text_width("検索", 12) >= 24 and text_width("é", 12) >= em["e"] * 12


def test_wrap_keeps_every_character_and_every_line_fits() -> None:
    label = "unanswerable:answer_correctness_precision_of_a_very_long_custom_metric@10"
    lines = wrap(label, 120)
    assert len(lines) > 1 and "".join(lines) == label
    assert all(text_width(line) <= 120 for line in lines)
    assert lines[0].endswith(":") or lines[0].endswith("_")  # broken after a separator
    assert wrap("mrr", 120) == ["mrr"]
    unbroken = "x" * 80
    assert "".join(wrap(unbroken, 100)) == unbroken


# -- histograms ------------------------------------------------------------------------


def test_histogram_draws_a_bar_and_its_count_per_non_empty_bin() -> None:
    bins, ticks, binary = histogram_bins([0.0, 0.25, 0.7, 1.0])
    assert not binary and len(bins) == 10 and bins[-1] == "[0.9, 1]"
    panels = [
        HistogramPanel("rag", [2, 0, 0, 1, 0, 0, 0, 5, 0, 12], "n 20 · mean 0.7", 0),
        HistogramPanel(NASTY, [0] * 9 + [3], "n 3 · mean 1 · 2 without a score", 1),
    ]
    svg = svg_of(histogram("distribution of m", bins, ticks, panels))
    assert svg.attrib["role"] == "img" and svg.attrib["aria-label"] == "distribution of m"
    assert svg.find("title") is not None
    rects = svg.findall("rect")
    assert len(rects) == 5  # one per non-empty bin
    tips = [text_of(r.find("title")) for r in rects]  # type: ignore[arg-type]
    assert tips[0] == "rag: [0, 0.1): 2 case(s)" and tips[-1] == f"{NASTY}: [0.9, 1]: 3 case(s)"
    heights = [float(r.attrib["height"]) for r in rects]
    assert heights[3] == max(heights)  # 12 is the tallest, on the scale both panels share
    assert heights[4] == pytest.approx(heights[3] * 3 / 12)
    texts = labels(svg)
    for count in ("2", "1", "5", "12", "3"):
        assert count in texts
    assert NASTY in texts and "n 3 · mean 1 · 2 without a score" in texts
    assert_text_inside(svg)


def test_a_zero_one_metric_has_two_bins() -> None:
    bins, ticks, binary = histogram_bins([0.0, 1.0, 1.0])
    assert binary and bins == ["0", "1"] and [t for _, t in ticks] == ["0", "1"]


# -- stacked bars ----------------------------------------------------------------------


def test_stacked_bars_split_by_status_with_the_counts_beside() -> None:
    rows = [
        ("qa", "strong", {"passed": 3, "failed": 1}),
        ("qa", "weak", {"passed": 1, "failed": 2, "error": 1}),
        (NASTY, "strong", {"passed": 2}),
    ]
    markup = stacked_bars("status per kind", rows, ["passed", "failed", "error"])
    assert "&lt;i&gt;&quot;a&quot; &amp; &#x27;b&#x27;&lt;/i&gt;" in markup
    svg = svg_of(markup)
    segments = [r for r in svg.findall("rect") if r.find("title") is not None]
    assert len(segments) == 2 + 3 + 1
    widths = [float(r.attrib["width"]) for r in segments]
    assert sum(widths[:2]) == pytest.approx(STACK_W, abs=0.2)
    assert widths[2:5] == pytest.approx([STACK_W / 4, STACK_W / 2, STACK_W / 4], abs=0.1)
    fills = [r.attrib["fill"] for r in segments[2:5]]
    assert fills == [STATUS_COLORS[s] for s in ("passed", "failed", "error")]
    texts = labels(svg)
    assert "3/4 passed (75%) · 1 failed" in texts
    assert "1/4 passed (25%) · 2 failed · 1 error" in texts
    assert texts.count("qa") == 1  # the group is written on its first row
    assert NASTY in texts and "weak" in texts
    assert_text_inside(svg)


def relative_luminance(hex_color: str) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def test_status_colours_stay_apart_in_greyscale() -> None:
    grey = sorted(relative_luminance(c) for c in STATUS_COLORS.values())
    assert all(b - a >= 0.08 for a, b in itertools.pairwise(grey)), grey
    # passed is the darkest and error the lightest: the order does not depend on hue
    assert relative_luminance(STATUS_COLORS["passed"]) == grey[0]
    assert relative_luminance(STATUS_COLORS["error"]) == grey[-1]


# -- the baseline's changes ------------------------------------------------------------


def test_delta_chart_draws_dot_whisker_and_numbers() -> None:
    rows = [
        DeltaRow("qa:hit@5", -0.25, -0.4, -0.1, "-0.25 · regression", "regression"),
        DeltaRow(NASTY, 0.1, -1.6, 1.8, "+0.1 · not significant", "not significant"),
        DeltaRow("mrr", 0.05, None, None, "+0.05 · no interval (1 pair)", "improved"),
    ]
    svg = svg_of(delta_chart("changes", rows))
    assert svg.find("polygon") is not None  # the regression is a diamond
    marks = [e for e in svg.iter() if e.tag in ("polygon", "circle")]
    assert [m.tag for m in marks] == ["polygon", "circle", "circle"]
    assert marks[2].attrib["fill"] != "#fff" and marks[1].attrib["fill"] == "#fff"
    # the axis reaches the largest value, at most 1 for a change of a 0..1 mean
    ticks = [t for t in labels(svg) if re.fullmatch(r"[+-]?[0-9.]+", t)]
    assert ticks == ["-1", "-0.5", "0", "+0.5", "+1"]
    whiskers = [
        line
        for line in svg.findall("line")
        if line.attrib["y1"] == line.attrib["y2"] and line.attrib.get("stroke-width") == "1.5"
    ]
    assert len(whiskers) == 2  # no whisker without an interval
    assert len(svg.findall("polyline")) == 2  # the second interval runs off both ends
    diamond = marks[0].attrib["points"].split()
    centre_x = float(diamond[0].split(",")[0])
    first = whiskers[0]
    x1, x2 = float(first.attrib["x1"]), float(first.attrib["x2"])
    assert x1 < centre_x < x2
    assert (centre_x - x1) / (x2 - x1) == pytest.approx(0.15 / 0.3, abs=0.01)
    assert "+0.05 · no interval (1 pair)" in labels(svg) and NASTY in labels(svg)
    assert_text_inside(svg)


def test_a_long_label_wraps_instead_of_leaving_the_chart() -> None:
    long = "injection:" + "very_long_bring_your_own_metric_name_" * 4 + "x"
    for svg in (
        svg_of(bar_chart("t", [(long, [0.5]), ("mrr", [1.0])], ["p"])),
        svg_of(delta_chart("t", [DeltaRow(long, 0.1, 0.0, 0.2, "+0.1", "improved")])),
        svg_of(stacked_bars("t", [(long, "", {"passed": 1})], ["passed"])),
    ):
        assert_text_inside(svg)
        spans = [text_of(s) for s in svg.iter("tspan")]
        assert len(spans) > 1 and "".join(spans) == long


# -- in the report ---------------------------------------------------------------------


def test_the_report_draws_pass_fail_and_distributions(runs: Runs) -> None:
    results = runs.multi()
    page = render_html(results)
    for sid, title in (("pass-fail", "Pass and fail"), ("distributions", "Score distributions")):
        assert f'<a href="#{sid}">{title}</a>' in page
    by_kind, by_type = charts_in(page, "pass-fail")
    texts = labels(by_kind)
    cases = results["cases"]
    for kind in ("qa", "unanswerable", "injection"):
        for p in ("rag_pipeline", "rival_pipeline"):
            mine = [c for c in cases if c["kind"] == kind and c["pipeline"] == p]
            passed = sum(c["status"] == "passed" for c in mine)
            assert any(t.startswith(f"{passed}/{len(mine)} passed") for t in texts), (kind, p)
    assert "0/1 passed (0%) · 1 error" in texts  # the rival crashed on the unanswerable case
    assert {"complex", "distracting", "out_of_scope"} <= set(labels(by_type))
    for svg in (by_kind, by_type):
        assert_text_inside(svg)

    histograms = {svg.attrib["aria-label"]: svg for svg in charts_in(page, "distributions")}
    hit = histograms["distribution of hit@5, qa cases"]
    for panel in ("rag_pipeline", "rival_pipeline"):
        values = [
            c["metrics"]["hit@5"]
            for c in cases
            if c["kind"] == "qa" and c["pipeline"] == panel and "hit@5" in c["metrics"]
        ]
        bars = [
            text_of(r.find("title"))  # type: ignore[arg-type]
            for r in hit.findall("rect")
            if text_of(r.find("title")).startswith(panel)  # type: ignore[arg-type]
        ]
        expected = [f"{panel}: {b}: {sum(v == float(b) for v in values)} case(s)" for b in "01"]
        assert bars == [e for e in expected if not e.endswith(": 0 case(s)")]
    # the crashed case has no score: counted, never drawn as 0
    abstained = labels(histograms["distribution of abstained, unanswerable cases"])
    assert "no score (1 case(s))" in abstained
    assert "distribution of latency_s, qa cases" not in histograms  # seconds, not 0..1
    for svg in histograms.values():
        assert_text_inside(svg)


def test_the_baseline_section_draws_each_change_with_its_interval(runs: Runs) -> None:
    results = runs.with_baseline()
    page = render_html(results)
    (svg,) = charts_in(page, "baseline")
    compared = [a for a in results["baseline"]["aggregates"] if a["delta"] is not None]
    rows = delta_rows(compared)
    assert len(rows) == len(compared) > 0
    hit = next(a for a in compared if a["metric"] == "hit@5" and a["selector"] == "qa")
    interval = hit["interval"]
    assert interval["method"] == "newcombe-paired"  # hit@5 is 0/1
    assert interval["low"] < hit["delta"] < interval["high"]
    texts = labels(svg)
    assert "qa:hit@5" in texts
    assert any(t.startswith("-0.25 · 95% [") for t in texts)
    # one pair: no interval, and the chart says so
    assert any("no interval (1 pair)" in t for t in texts)
    assert_text_inside(svg)


def test_an_older_results_file_without_intervals_still_draws() -> None:
    change = {
        "pipeline": "p",
        "selector": "qa",
        "metric": "mrr",
        "n": 5,
        "baseline_mean": 0.8,
        "current_mean": 0.7,
        "delta": -0.1,
        "test": {"p_value": 0.2},
        "verdict": "not significant",
    }
    (row,) = delta_rows([change])
    assert (row.low, row.high) == (None, None)
    assert row.text == "-0.1 · no interval in this results file · p 0.2 · not significant"
    unbounded = {**change, "metric": "cost", "baseline_mean": 3.0, "current_mean": 2.5}
    assert delta_rows([unbounded]) == []  # not on the 0..1 scale: in the table only
    assert math.isfinite(row.delta)


# -- a metric over runs ------------------------------------------------------------------


def test_trend_chart_draws_each_run_the_gate_and_the_newest_value() -> None:
    from pytest_ragproof.reporting.svg import TrendMark, trend_chart

    marks = [
        TrendMark(0.9, "run 1 (abc1234): 0.9"),
        TrendMark(0.85, "run 2: 0.85"),
        TrendMark(None, "run 3: no value"),
        TrendMark(0.7, f"run 4 {NASTY}: 0.7", failed=True),
        TrendMark(0.82, "run 5: 0.82"),
    ]
    markup = trend_chart("qa:recall@5 [p]", marks, bound=(">=", 0.8), caption="5 runs")
    svg = svg_of(markup)
    dots = svg.findall("circle")
    (diamond,) = svg.findall("polygon")  # the run whose gate failed
    assert len(dots) == 3
    assert text_of(diamond.find("title")) == f"run 4 {NASTY}: 0.7"  # type: ignore[arg-type]
    # the missing run breaks the line in two
    assert [len(p.attrib["points"].split()) for p in svg.findall("polyline")] == [2, 2]
    (gate,) = [line for line in svg.findall("line") if line.attrib.get("stroke-dasharray")]
    texts = labels(svg)
    assert "gate ≥ 0.8" in texts and "0.82" in texts and "5 runs" in texts
    # the 0..1 scale: the bound's line sits at 0.8 of the plot's height from the bottom
    ys = {t: float(e.attrib["y"]) for e in svg.iter("text") for t in [text_of(e)] if t in "01"}
    assert float(gate.attrib["y1"]) == pytest.approx(ys["1"] + 0.2 * (ys["0"] - ys["1"]), abs=0.2)
    assert_text_inside(svg)


def test_a_trend_beyond_one_gets_its_own_scale() -> None:
    from pytest_ragproof.reporting.svg import TrendMark, trend_chart

    svg = svg_of(trend_chart("latency", [TrendMark(2.0, "a"), TrendMark(4.0, "b")]))
    ticks = [t for t in labels(svg) if re.fullmatch(r"[0-9.]+", t)]
    assert ticks == ["0", "2.2", "4.4", "4"]  # the scale to 1.1 x the largest; the newest value
    assert_text_inside(svg)
