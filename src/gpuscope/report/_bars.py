"""A horizontal bar chart (`document.model.Chart`) as inline SVG: bars scaled to the largest
value, the value text right of each bar, the full label as a hover title. Wide: labels in a
column left of the bars; narrow: each label on its own line above its bar."""

from __future__ import annotations

from markupsafe import Markup

from gpuscope.document.model import Bar, Chart
from gpuscope.document.names import fit
from gpuscope.report._svg import NARROW, chars, svg, text

LABEL_WIDTH = 380  # wide layout
VALUE_WIDTH = 170
ROW, BAR = 22, 14
NARROW_ROW = 36


def bar_chart(chart: Chart, width: int) -> Markup:
    """`<svg>` for `chart`; empty markup when there is nothing to draw (no bar above zero)."""
    peak = max((b.value for b in chart.bars), default=0.0)
    if peak <= 0:
        return Markup("")
    narrow = width <= NARROW
    draw = _narrow_row if narrow else _row
    rows = Markup("").join(draw(bar, i, peak, width) for i, bar in enumerate(chart.bars))
    height = (NARROW_ROW if narrow else ROW) * len(chart.bars) + 4
    return svg(width, height, chart.title, rows)


def _row(bar: Bar, index: int, peak: float, width: int) -> Markup:
    y = 2 + index * ROW
    length = (width - LABEL_WIDTH - VALUE_WIDTH) * max(bar.value, 0.0) / peak
    label = text(LABEL_WIDTH - 8, y + ROW // 2 + 4, bar.label, "end", "bar-label")
    return _bar(bar, (LABEL_WIDTH, y + (ROW - BAR) // 2, length, BAR), label, y + ROW // 2 + 4)


def _narrow_row(bar: Bar, index: int, peak: float, width: int) -> Markup:
    y = 2 + index * NARROW_ROW
    length = (width - 140) * max(bar.value, 0.0) / peak
    label = text(0, y + 11, fit(bar.label, chars(width)), "start", "bar-label")
    return _bar(bar, (0, y + 17, length, 12), label, y + 27)


def _bar(bar: Bar, box: tuple[float, float, float, float], label: Markup, text_y: float) -> Markup:
    """One bar: `box` is (x, y, length, height)."""
    x, y, length, height = box
    return Markup(
        '<g><title>{full}: {value}</title>{label}<rect class="bar" x="{x}" y="{y}" '
        'width="{length:.1f}" height="{h}" rx="2"/>{text}</g>'
    ).format(
        full=bar.full or bar.label,
        value=bar.text,
        label=label,
        x=x,
        y=y,
        length=length,
        h=height,
        text=text(x + length + 6, text_y, bar.text, "start", "bar-value"),
    )
