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
    table = RichTable(box=box.SIMPLE, title=block.caption or None, title_justify="left")
    numeric = block.numeric or (False,) * len(block.headers)
    for header, right in zip(block.headers, numeric, strict=False):
        table.add_column(header, justify="right" if right else "left", overflow="fold")
    for row in block.rows:
        table.add_row(*(RichText(c.text) for c in row))
    return table
