"""The colours of the series of a figure (a stacked bar's segments), the same in every view: the
HTML page's SVG, the PNG beside a Markdown file, the notebook, and the terminal's rich styles."""

from __future__ import annotations

# distinct at neighbouring positions (also in grey scale); the fourth a quiet grey, for what a
# short series ends with (idle)
COLOURS = (
    "#4c78a8", "#f58518", "#54a24b", "#bab0ac", "#e45756", "#72b7b2", "#eeca3b", "#b279a2",
    "#9d755d", "#ff9da6",
)  # fmt: skip
BAR = "#4c8bf5"  # a one-series bar chart
IDLE = "#e6e9ee"  # the background of a busy / idle strip
MARK = "#cf222e"  # a span marked on a strip (a long gap), the point a check tests


def colour(index: int) -> str:
    """The colour of series `index` (they repeat after ten)."""
    return COLOURS[index % len(COLOURS)]
