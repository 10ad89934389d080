"""Figures as text, for the views that draw no picture (the terminal; Markdown without its PNG):
stacked bars as a table, a line as a sparkline, a busy / idle strip as a row of block glyphs.
Display only: values are placed and formatted, never derived.

    >>> sparkline([3.0, 1.0, 2.0, 4.0])
    '▅▁▃█'
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, LineChart, StackedBars, Table

BLOCKS = "▁▂▃▄▅▆▇█"


def stacked_table(chart: StackedBars) -> Table:
    """One row per bar, one column per segment (its time), then the bar's text if any row has one;
    columns no row has a value in are left out."""
    used = [i for i in range(len(chart.columns)) if any(_at(r.values, i) > 0 for r in chart.rows)]
    texts = any(r.text for r in chart.rows)
    headers = ("", *(chart.columns[i] for i in used), *(("",) if texts else ()))
    rows = tuple(
        (
            Cell(row.label, full=row.full),
            *(Cell(fmt.duration(_at(row.values, i))) for i in used),
            *((Cell(row.text),) if texts else ()),
        )
        for row in chart.rows
    )
    numeric = (False, *(True for _ in used), *((True,) if texts else ()))
    return Table(headers, rows, numeric, chart.caption or chart.title)


def _at(values: tuple[float, ...], i: int) -> float:
    return values[i] if i < len(values) else 0.0


def sparkline(values: Sequence[float]) -> str:
    """Each value as a block glyph from its lowest (▁) to its highest (█)."""
    if not values:
        return ""
    low, high = min(values), max(values)
    if high == low:
        return BLOCKS[3] * len(values)
    scale = (len(BLOCKS) - 1) / (high - low)
    return "".join(BLOCKS[round((v - low) * scale)] for v in values)


def line_text(chart: LineChart, width: int) -> str:
    """`title: ▁▃█▅ (oldest → newest)`, the last values that fit in `width` characters."""
    values = [p.value for p in chart.points]
    lead = f"{chart.title}: "
    room = max(width - len(lead) - 20, 8)
    shown = values[-room:]
    cut = f", the last {len(shown)} of {len(values)}" if len(shown) < len(values) else ""
    return f"{lead}{sparkline(shown)} (oldest → newest{cut})"


def busy_glyphs(busy: Sequence[float], width: int) -> str:
    """A lane's busy fractions (0–1) in at most `width` glyphs, each the mean of the bins it
    covers: ' ' idle, ▁ to █ busier."""
    if not busy:
        return ""
    per = max(1, -(-len(busy) // max(width, 1)))  # bins per glyph, rounded up
    cells = [busy[i : i + per] for i in range(0, len(busy), per)]
    return "".join(_glyph(sum(c) / len(c)) for c in cells)


def _glyph(fraction: float) -> str:
    if fraction <= 0:
        return " "
    return BLOCKS[min(int(fraction * len(BLOCKS)), len(BLOCKS) - 1)]
