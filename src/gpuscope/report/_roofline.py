"""A roofline chart (`document.model.RooflineChart`) as inline SVG: log-log FLOP/s over
arithmetic intensity, the bandwidth roof rising to each compute roof, one numbered dot per kernel
(hover: its name and numbers)."""

from __future__ import annotations

import math

from markupsafe import Markup

from gpuscope.document.model import Dot, RooflineChart
from gpuscope.report._svg import NARROW, svg

TOP, BOTTOM = 30, 46
COLOURS = {"memory": "#1f77b4", "compute": "#d62728"}
OTHER = "#7f7f7f"


def roofline_svg(chart: RooflineChart, width: int) -> Markup:
    """`<svg>` of the chart; empty markup when there is no roof or no dot to place."""
    dots = [d for d in chart.dots if d.intensity > 0 and d.rate > 0]
    if chart.bandwidth <= 0 or not chart.roofs or not dots:
        return Markup("")
    axes = _Axes(chart, dots, width)
    parts = [axes.grid(), axes.roofs(chart), *(axes.dot(d) for d in dots)]
    return svg(width, axes.height, chart.title, Markup("").join(parts))


class _Axes:
    """Decade-aligned log scales that hold every dot and every ridge point."""

    def __init__(self, chart: RooflineChart, dots: list[Dot], width: int) -> None:
        narrow = width <= NARROW
        self.width, self.height = width, (300 if narrow else 410)
        self.left, self.right = (58, 86) if narrow else (78, 150)
        top = max(r.flops for r in chart.roofs)
        ridges = [r.flops / chart.bandwidth for r in chart.roofs]
        xs = [d.intensity for d in dots] + ridges
        ys = [d.rate for d in dots] + [r.flops for r in chart.roofs]
        self.x0 = math.floor(math.log10(min(xs) / 4))
        self.x1 = math.ceil(math.log10(max(xs) * 4))
        self.y0 = math.floor(math.log10(min(min(ys), top / 1e4) / 2))
        self.y1 = math.ceil(math.log10(top * 2))
        self.bandwidth = chart.bandwidth

    def x(self, value: float) -> float:
        span = self.width - self.left - self.right
        return self.left + span * (math.log10(value) - self.x0) / (self.x1 - self.x0)

    def y(self, value: float) -> float:
        span = self.height - TOP - BOTTOM
        return self.height - BOTTOM - span * (math.log10(value) - self.y0) / (self.y1 - self.y0)

    def grid(self) -> Markup:
        lines = []
        for e in range(self.x0, self.x1 + 1):
            x = self.x(10.0**e)
            lines.append(_line(x, TOP, x, self.height - BOTTOM, "#e5e5e5"))
            lines.append(_text(x, self.height - BOTTOM + 16, f"{10.0**e:g}", "middle"))
        for e in range(self.y0, self.y1 + 1):
            y = self.y(10.0**e)
            lines.append(_line(self.left, y, self.width - self.right, y, "#e5e5e5"))
            lines.append(_text(self.left - 6, y + 4, _flops(10.0**e), "end"))
        middle = (self.left + self.width - self.right) / 2
        lines.append(_text(middle, self.height - 8, "FLOP per DRAM byte", "middle"))
        lines.append(_text(self.left - 6, TOP - 10, "FLOP/s", "end"))
        return Markup("").join(lines)

    def roofs(self, chart: RooflineChart) -> Markup:
        parts = []
        x_min, x_max = 10.0**self.x0, 10.0**self.x1
        top = max(r.flops for r in chart.roofs)
        ridge = top / self.bandwidth
        start = max(x_min, 10.0**self.y0 / self.bandwidth)
        parts.append(_line(self.x(start), self.y(start * self.bandwidth), self.x(ridge),
                           self.y(top), "#333", 2))  # fmt: skip
        parts.append(_text(self.x(start) + 14, self.y(start * self.bandwidth) + 4,
                           chart.bandwidth_label, "start"))  # fmt: skip
        for roof in sorted(chart.roofs, key=lambda r: -r.flops):
            knee = max(roof.flops / self.bandwidth, x_min)
            y = self.y(roof.flops)
            parts.append(_line(self.x(knee), y, self.x(x_max), y, "#333", 2))
            parts.append(_text(self.x(x_max) + 4, y + 4, roof.label, "start"))
        return Markup("").join(parts)

    def dot(self, dot: Dot) -> Markup:
        colour = COLOURS.get(dot.bound, OTHER)
        x, y = self.x(dot.intensity), self.y(dot.rate)
        return Markup(
            '<g><title>{full}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{c}" '
            'fill-opacity="0.8"/><text x="{tx:.1f}" y="{ty:.1f}" font-size="11">{label}</text>'
            "</g>"
        ).format(full=dot.full, x=x, y=y, c=colour, tx=x + 7, ty=y - 5, label=dot.label)


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, width: float = 1) -> Markup:
    return Markup(
        '<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{}"/>'
    ).format(x1, y1, x2, y2, colour, width)


def _text(x: float, y: float, text: str, anchor: str) -> Markup:
    return Markup('<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="{}">{}</text>').format(
        x, y, anchor, text
    )


def _flops(value: float) -> str:
    for scale, unit in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g}"
