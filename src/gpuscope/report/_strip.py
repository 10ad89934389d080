"""A busy / idle strip (`document.model.Strip`) as inline SVG: per lane (device), each bin of the
window a bar as tall as its busy fraction over an idle background, the marked spans (the longest
gaps) outlined with their number above, a time axis below. The marks' legend is the page's."""

from __future__ import annotations

from markupsafe import Markup

from gpuscope.document import units as fmt
from gpuscope.document.model import Lane, Mark, Strip
from gpuscope.report._palette import BAR, IDLE, MARK
from gpuscope.report._svg import NARROW, line, rect, svg, text

LANE = 34  # px, the height of a lane's bars
HEAD = 26  # above a lane: its label (narrow) and the marks' numbers
AXIS = 26


def strip(chart: Strip, width: int) -> Markup:
    """`<svg>` of the strip; empty markup without lanes or a window to place them in."""
    if not chart.lanes or chart.span_us <= 0:
        return Markup("")
    narrow = width <= NARROW
    left = 0 if narrow else 70
    area = (left, width - (4 if narrow else 12))
    parts = []
    for i, lane in enumerate(chart.lanes):
        top = HEAD + i * (LANE + HEAD)
        parts.append(_lane(lane, area, top, narrow))
        marks = [m for m in chart.marks if m.lane == i]
        parts.append(_marks(marks, chart.span_us, area, top))
    bottom = len(chart.lanes) * (LANE + HEAD)
    parts.append(_axis(chart.span_us, area, bottom, 3 if narrow else 5))
    return svg(width, bottom + AXIS, chart.title, Markup("").join(parts))


def _lane(lane: Lane, area: tuple[float, float], top: float, narrow: bool) -> Markup:
    x0, x1 = area
    step = (x1 - x0) / max(len(lane.busy), 1)
    parts = [rect(x0, top, x1 - x0, LANE, IDLE, "idle")]
    for i, busy in enumerate(lane.busy):
        if busy > 0:  # a hair wider than the bin, so touching bins leave no seam
            height = LANE * min(busy, 1.0)
            parts.append(rect(x0 + i * step, top + LANE - height, step + 0.4, height, BAR))
    if narrow:  # inside the lane, over its bars, where the marks' numbers above leave it alone
        parts.append(text(x0 + 4, top + 13, lane.label, "start", "lane-label"))
    else:
        parts.append(text(x0 - 8, top + LANE / 2 + 4, lane.label, "end"))
    return Markup("<g><title>{}: busy (bar height) and idle over the window</title>{}</g>").format(
        lane.label, Markup("").join(parts)
    )


def _marks(marks: list[Mark], span: float, area: tuple[float, float], top: float) -> Markup:
    x0, x1 = area
    parts, last = [], -100.0
    for mark in sorted(marks, key=lambda m: m.start_us):
        x = x0 + (x1 - x0) * mark.start_us / span
        w = max((x1 - x0) * mark.length_us / span, 2.0)
        raised = x - last < 16 and last >= 0  # numbers this close are staggered
        last = -100.0 if raised else x
        label_y = top - (16 if raised else 5)
        parts.append(
            Markup(
                '<g class="mark"><title>{tip}</title>{box}<text x="{x:.1f}" y="{y:.1f}" '
                'text-anchor="middle" class="mark-label" fill="{c}">{label}</text></g>'
            ).format(
                tip=mark.text,
                box=rect(x, top - 2, w, LANE + 4, "none", "mark-box"),
                x=x + w / 2,
                y=label_y,
                c=MARK,
                label=mark.label,
            )
        )
    return Markup("").join(parts)


def _axis(span: float, area: tuple[float, float], y: float, ticks: int) -> Markup:
    x0, x1 = area
    parts = [line(x0, y, x1, y)]
    for i in range(ticks):
        x = x0 + (x1 - x0) * i / (ticks - 1)
        anchor = "start" if i == 0 else "end" if i == ticks - 1 else "middle"
        parts += [line(x, y, x, y + 4), text(x, y + 17, fmt.duration(span * i / (ticks - 1)),
                                             anchor)]  # fmt: skip
    return Markup("").join(parts)
