"""Stacked bars (`document.model.StackedBars`) as inline SVG: one bar per row, one coloured
segment per column (its column, value and row as the hover text), the row's text after the bar.
The legend is the page's (HTML, so it wraps on a phone). Wide: labels in a column left of the
bars; narrow: each label above its bar."""

from __future__ import annotations

from markupsafe import Markup

from gpuscope.document import units as fmt
from gpuscope.document.model import Stack, StackedBars
from gpuscope.document.names import fit
from gpuscope.report._palette import colour
from gpuscope.report._svg import NARROW, chars, rect, svg, text

LABEL_WIDTH, TEXT_WIDTH = 220, 110  # wide layout
ROW, BAR = 24, 16
NARROW_ROW = 38


def stacked_bars(chart: StackedBars, width: int) -> Markup:
    """`<svg>` of the bars; empty markup when no row has a value above zero."""
    lengths = [sum(max(v, 0.0) for v in row.values) for row in chart.rows]
    peak = max(lengths, default=0.0)
    if peak <= 0:
        return Markup("")
    narrow = width <= NARROW
    span = (width - 100) if narrow else (width - LABEL_WIDTH - TEXT_WIDTH)
    drawn = []
    for i, row in enumerate(chart.rows):
        if narrow:
            y = 2 + i * NARROW_ROW
            label = text(0, y + 11, fit(row.label, chars(width)), "start", "bar-label")
            drawn.append(_bar(chart, row, (0.0, y + 17.0, 12.0), span / peak, label))
        else:
            y = 2 + i * ROW
            label = text(LABEL_WIDTH - 8, y + ROW / 2 + 4, row.label, "end", "bar-label")
            box = (float(LABEL_WIDTH), y + (ROW - BAR) / 2, float(BAR))
            drawn.append(_bar(chart, row, box, span / peak, label))
    height = (NARROW_ROW if narrow else ROW) * len(chart.rows) + 4
    return svg(width, height, chart.title, Markup("").join(drawn))


def _bar(
    chart: StackedBars, row: Stack, box: tuple[float, float, float], scale: float, label: Markup
) -> Markup:
    """One row: its segments left to right from `box` (x, y, height), `scale` px per µs."""
    x, y, height = box
    parts = [label]
    for i, (column, value) in enumerate(zip(chart.columns, row.values, strict=False)):
        if value <= 0:
            continue
        tip = f"{row.full or row.label} · {column}: {fmt.duration(value)}"
        parts.append(rect(x, y, value * scale, height, colour(i), "segment", tip))
        x += value * scale
    if row.text:
        parts.append(text(x + 6, y + height - 2, row.text, "start", "bar-value"))
    return Markup("<g>{}</g>").format(Markup("").join(parts))
