"""The colours of the series of a figure (a stacked bar's segments), the same in every view: the
HTML page's SVG, the PNG beside a Markdown file, the notebook, and the terminal's rich styles."""

from __future__ import annotations

# colour-blind-friendly, distinct in grey scale at neighbouring positions
COLOURS = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#9d755d",
    "#ff9da6", "#bab0ac",
)  # fmt: skip
BAR = "#4c8bf5"  # a one-series bar chart
IDLE = "#e6e9ee"  # the background of a busy / idle strip
MARK = "#cf222e"  # a span marked on a strip (a long gap), the point a check tests


def colour(index: int) -> str:
    """The colour of series `index` (they repeat after ten)."""
    return COLOURS[index % len(COLOURS)]
