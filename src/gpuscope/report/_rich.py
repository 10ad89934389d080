"""Document sections (report._document) drawn with rich, for the terminal view of the analyses
that describe themselves as sections (see analysis.extras). Charts are left out: the table next
to each holds the same numbers."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table as RichTable
from rich.text import Text as RichText

from gpuscope.report._document import Block, Chart, Facts, Names, Note, Section, Table, Text
from gpuscope.report._format import short_name

_LEVEL_STYLE = {"ok": "green", "info": "cyan", "warning": "yellow", "critical": "bold red"}


def section(part: Section, width: int) -> Group:
    """A section as a title line and its blocks."""
    title = RichText(part.title, style="bold")
    if part.badge:
        title.append(f"  [{part.badge}]", style=_LEVEL_STYLE.get(part.level, ""))
    drawn = [_block(b, width) for b in part.blocks]
    return Group(title, *(d for d in drawn if d is not None))


def _block(block: Block, width: int) -> Any:
    if isinstance(block, Section):
        return section(block, width)
    if isinstance(block, Chart):
        return None
    if isinstance(block, Facts):
        return _facts(block)
    if isinstance(block, Table):
        return _table(block, width)
    if isinstance(block, Names):
        return RichText(
            "\n".join(f"  {short_name(c.full or c.text, width - 4)}" for c in block.items)
        )
    if isinstance(block, Note):
        return RichText(f"{block.title}: {block.text}", style=_LEVEL_STYLE.get(block.level, ""))
    if isinstance(block, Text):
        text = RichText(f"{block.label}: " if block.label else "", style="bold")
        text.append(block.text)
        return text
    return None


def _facts(block: Facts) -> RichTable:
    table = RichTable(box=None, show_header=False, title=block.caption or None)
    table.add_column("what", style="dim")
    table.add_column("value", overflow="fold")
    for label, value in block.items:
        table.add_row(label, RichText(value))
    return table


def _table(block: Table, width: int) -> RichTable:
    numeric = block.numeric or (False,) * len(block.headers)
    shown = _fitting_columns(block, numeric, width)
    dropped = [block.headers[i] for i in range(len(block.headers)) if i not in shown]
    caption = block.caption + (f" (too narrow for: {', '.join(dropped)})" if dropped else "")
    table = RichTable(box=box.SIMPLE, title=caption.strip() or None, title_justify="left")
    for i in shown:
        right = numeric[i] if i < len(numeric) else False
        table.add_column(
            block.headers[i], justify="right" if right else "left", overflow="fold", no_wrap=right
        )
    for row in block.rows:
        table.add_row(*(RichText(row[i].text) for i in shown if i < len(row)))
    return table


TEXT_MIN = 16  # a text column narrower than this is unreadable
NAME_MIN = 36  # nor a column of kernel names narrower than this (they fold into short pieces)


def _fitting_columns(block: Table, numeric: tuple[bool, ...], width: int) -> list[int]:
    """Column indexes to draw: the optional ones are left out, highest rank first, while the table
    cannot fit `width` with its numbers unwrapped and its text columns ≥ TEXT_MIN wide."""
    natural = [
        max(
            [len(h) for h in block.headers[i].split()]
            + [len(r[i].text) for r in block.rows if i < len(r)]
        )
        for i in range(len(block.headers))
    ]
    names = {i for r in block.rows for i, c in enumerate(r) if c.code}
    least = [NAME_MIN if i in names else TEXT_MIN for i in range(len(block.headers))]
    shown = list(range(len(block.headers)))
    optional = sorted(
        (i for i, rank in enumerate(block.optional) if rank > 0), key=lambda i: block.optional[i]
    )

    def needed() -> int:
        cells = sum(
            natural[i] if (i < len(numeric) and numeric[i]) else min(natural[i], least[i])
            for i in shown
        )
        return cells + 3 * len(shown) + 2

    while optional and needed() > width:
        shown.remove(optional.pop())
    return shown
