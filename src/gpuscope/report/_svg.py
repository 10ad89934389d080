"""A horizontal bar chart as inline SVG markup: labels left, bars scaled to the largest value,
the value text right of each bar, the full label as a hover title. Every string is escaped."""

from __future__ import annotations

from markupsafe import Markup

from gpuscope.document.model import Bar, Chart

WIDTH = 960
LABEL_WIDTH = 380
VALUE_WIDTH = 170
ROW = 22
BAR = 14
TOP = 26


def bar_chart(chart: Chart) -> Markup:
    """`<svg>` for `chart`; empty markup when there is nothing to draw (no bar above zero)."""
    peak = max((b.value for b in chart.bars), default=0.0)
    if peak <= 0:
        return Markup("")
    height = TOP + ROW * len(chart.bars) + 6
    rows = Markup("").join(_row(bar, i, peak) for i, bar in enumerate(chart.bars))
    return Markup(
        '<svg class="chart" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{title}">'
        '<text class="chart-title" x="0" y="15">{title}</text>{rows}</svg>'
    ).format(w=WIDTH, h=height, title=chart.title, rows=rows)


def _row(bar: Bar, index: int, peak: float) -> Markup:
    y = TOP + index * ROW
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    length = span * max(bar.value, 0.0) / peak
    return Markup(
        "<g><title>{full}: {text}</title>"
        '<text class="bar-label" x="{lx}" y="{ty}" text-anchor="end">{label}</text>'
        '<rect class="bar" x="{x}" y="{y}" width="{length:.1f}" height="{bar_h}" rx="2"/>'
        '<text class="bar-value" x="{vx:.1f}" y="{ty}">{text}</text></g>'
    ).format(
        full=bar.full or bar.label,
        text=bar.text,
        label=bar.label,
        lx=LABEL_WIDTH - 8,
        x=LABEL_WIDTH,
        y=y + (ROW - BAR) // 2,
        ty=y + ROW // 2 + 4,
        length=length,
        bar_h=BAR,
        vx=LABEL_WIDTH + length + 6,
    )
