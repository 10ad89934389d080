"""A line chart (`document.model.LineChart`: a metric's trend) as inline SVG: the values in
order left to right, a dot per value with its hover text, the highlighted point (the result a
check tests) in red, the lowest, middle and highest value on the axis, the first and last
point's labels below it."""

from __future__ import annotations

from markupsafe import Markup

from gpuscope.document.model import LineChart
from gpuscope.report._palette import MARK
from gpuscope.report._svg import NARROW, line, svg, text

TOP, BOTTOM, RIGHT = 20, 34, 16


def line_chart(chart: LineChart, width: int) -> Markup:
    """`<svg>` of the line; empty markup without points."""
    if not chart.points:
        return Markup("")
    narrow = width <= NARROW
    left, height = (54, 200) if narrow else (76, 280)
    values = [p.value for p in chart.points]
    low, high = min(values), max(values)
    pad = (high - low) * 0.1 or abs(high) * 0.05 or 1.0
    low, high = low - pad, high + pad
    step = (width - left - RIGHT) / max(len(values) - 1, 1)

    def x(i: int) -> float:
        return left + i * step if len(values) > 1 else (left + width - RIGHT) / 2

    def y(v: float) -> float:
        return height - BOTTOM - (v - low) / (high - low) * (height - TOP - BOTTOM)

    parts = [line(left, TOP, left, height - BOTTOM), line(left, height - BOTTOM, width - RIGHT,
                                                          height - BOTTOM)]  # fmt: skip
    for v in (low + pad, (low + high) / 2, high - pad):
        parts += [line(left - 4, y(v), left, y(v)), text(left - 6, y(v) + 4, f"{v:.4g}", "end")]
    if chart.unit:
        parts.append(text(0, 12, chart.unit))
    path = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    parts.append(Markup('<polyline class="line" points="{}"/>').format(path))
    for i, p in enumerate(chart.points):
        radius, fill = (5, MARK) if p.highlight else (3, "")
        colour = Markup(' fill="{}"').format(fill) if fill else Markup("")
        parts.append(
            Markup(
                '<circle class="dot" cx="{:.1f}" cy="{:.1f}" r="{}"{}><title>{}</title></circle>'
            ).format(x(i), y(p.value), radius, colour, p.full or f"{p.label}: {p.value:.6g}")
        )
    first, last = chart.points[0].label, chart.points[-1].label
    parts.append(text(left, height - BOTTOM + 18, first))
    if len(chart.points) > 1:
        parts.append(text(width - RIGHT, height - BOTTOM + 18, last, "end"))
    return svg(width, height, chart.title, Markup("").join(parts))
