"""Any document drawn for a terminal with rich: one line per fact where it fits, tables without
frames, kernel names on one line (shortened from the middle to the column they get, unique among
the rows). It lays nothing out itself: the document decides what is shown and in which order.

    >>> print(render(analysis_document([report])), end="")      # doctest: +SKIP

Pictures become text: stacked bars a table, a busy / idle strip a row of block glyphs per
device, a trend a sparkline; bar charts are left out (a table beside each holds its numbers).
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text as RichText

from gpuscope.document.model import (
    Block,
    Document,
    Facts,
    Figure,
    LineChart,
    Names,
    Note,
    Section,
    StackedBars,
    Strip,
    Table,
    Text,
)
from gpuscope.document.names import fit, short_names
from gpuscope.document.units import duration
from gpuscope.report._as_text import busy_glyphs, line_text, stacked_table

LEVEL_STYLE = {"ok": "green", "info": "cyan", "warning": "yellow", "critical": "bold red"}
MARK = {"ok": "✓", "info": "·", "warning": "!", "critical": "✖"}
TEXT_MIN = 16  # a text column narrower than this is unreadable
NAME_MIN = 30  # nor a column of kernel names narrower than this
GAP = 3  # between two columns: padding, rule, padding


def render(document: Document, *, console: Console | None = None) -> str:
    """The document as the terminal shows it: its title and subtitle, then each section. The
    text has the colours, and the width, of `console` (default: standard output's own —
    plain text, 80 columns, where it is no terminal)."""
    console = console or Console(highlight=False)
    with console.capture() as captured:
        head = RichText(document.title, style="bold")
        if document.subtitle:
            head.append(f"  {document.subtitle}", style="dim")
        console.print(head)
        for part in document.sections:
            console.print(section(part, console.width))
        if document.footer:
            console.print(RichText(document.footer, style="dim"))
    return captured.get()


def section(part: Section, width: int, depth: int = 0) -> Group:
    """A section: a rule with its title at the top level, a bold line below it."""
    title = RichText(part.title, style="bold")
    if part.badge:
        title.append(f"  {part.badge}", style=LEVEL_STYLE.get(part.level, ""))
    head: Any = Rule(title, align="left", style="blue") if depth == 0 else title
    drawn = [_block(b, width, depth + 1) for b in part.blocks]
    return Group(head, *(d for d in drawn if d is not None))


def _block(block: Block, width: int, depth: int) -> Any:
    if isinstance(block, Section):
        return section(block, width, depth)
    if isinstance(block, Figure):
        return _figure(block, width)
    if isinstance(block, Facts):
        return _facts(block)
    if isinstance(block, Table):
        return _table(block, width)
    if isinstance(block, Names):
        shown = short_names([c.full or c.text for c in block.items], width - 4)
        return RichText("\n".join(f"  {name}" for name in shown))
    if isinstance(block, Note):
        text = RichText(f"{MARK[block.level]} {block.title}: ", style=LEVEL_STYLE[block.level])
        text.append(block.text)
        return text
    if isinstance(block, Text):
        text = RichText(f"{block.label}: " if block.label else "", style="bold")
        text.append(block.text)
        return text
    return None


def _figure(block: Figure, width: int) -> Any:
    if isinstance(block, StackedBars):
        return _table(stacked_table(block), width)
    if isinstance(block, Strip):
        return _strip(block, width)
    if isinstance(block, LineChart):
        return RichText(line_text(block, width)) if block.points else None
    return None  # a bar chart: the table beside it holds the same numbers


def _strip(block: Strip, width: int) -> RichText:
    """Per lane `label │▁▃█ ▂│`, then the marks (the longest gaps) one per line."""
    label = max((len(lane.label) for lane in block.lanes), default=0)
    text = RichText(f"{block.title} (0 → {duration(block.span_us)}; ▁ to █ busier, blank idle)\n")
    for lane in block.lanes:
        glyphs = busy_glyphs(lane.busy, width - label - 4)
        text.append(f"{lane.label:>{label}} │")
        text.append(glyphs, style="blue")
        text.append("│\n")
    for mark in block.marks:
        text.append(f"{mark.label:>{label}}  {mark.text}\n")
    text.rstrip()
    return text


def _facts(block: Facts) -> RichTable:
    table = RichTable(box=None, show_header=False, title=block.caption or None, pad_edge=False)
    table.title_justify = "left"
    table.add_column("what", style="dim", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in block.items:
        table.add_row(label, RichText(value))
    return table


def _table(block: Table, width: int) -> RichTable:
    numeric = block.numeric + (False,) * (len(block.headers) - len(block.numeric))
    shown = _fitting_columns(block, numeric, width)
    dropped = [block.headers[i] for i in range(len(block.headers)) if i not in shown]
    caption = block.caption + (f" (too narrow for: {', '.join(dropped)})" if dropped else "")
    table = RichTable(
        box=box.SIMPLE_HEAD, title=caption.strip() or None, title_justify="left",
        show_edge=False, pad_edge=False, title_style="italic",
    )  # fmt: skip
    names = _name_columns(block)
    name_width = _name_width(block, numeric, shown, names, width)
    whole = sum(max(len(block.headers[i]), _natural(block, i)) if numeric[i] else
                _natural(block, i) for i in shown) + GAP * (len(shown) - 1)  # fmt: skip
    stacked = whole > width
    for i in shown:
        right = numeric[i]
        # a text column never narrower than its longest word: rich shrinks the wrapping
        # columns to fit, and cut "cpu-bound" into "cpu-boun" / "d" at 80 columns
        least = None if right or i in names else _longest_word(block, i)
        table.add_column(
            _header(block, i, stacked and right), justify="right" if right else "left",
            no_wrap=right or i in names, overflow="fold", min_width=least,
        )  # fmt: skip
    columns = {i: _column_text(block, i, name_width) for i in shown}
    for r in range(len(block.rows)):
        table.add_row(*(RichText(columns[i][r]) for i in shown))
    return table


def _name_columns(block: Table) -> set[int]:
    return {i for row in block.rows for i, c in enumerate(row) if c.code}


def _column_text(block: Table, i: int, name_width: int) -> list[str]:
    """The column's cells; names re-shortened to the width they get, unique among the rows."""
    cells = [row[i] if i < len(row) else None for row in block.rows]
    if not any(c is not None and c.code for c in cells):
        return [c.text if c is not None else "" for c in cells]
    full = [(c.full or c.text) if c is not None else "" for c in cells]
    if any(c is not None and c.name for c in cells):
        return short_names(full, name_width)  # C++ names, shortened where they tell apart
    texts = [fit(c.text, name_width) if c is not None else "" for c in cells]
    owners: dict[str, set[str]] = {}
    for text, whole in zip(texts, full, strict=True):
        owners.setdefault(text, set()).add(whole)
    alike = [i for i, t in enumerate(texts) if len(owners[t]) > 1]
    for i, shown in zip(alike, short_names([full[i] for i in alike], name_width), strict=True):
        texts[i] = shown  # rows that read alike: their full texts, shortened apart
    return texts


def _natural(block: Table, i: int) -> int:
    """The column's width with its header's words stacked where it needs them (`_header`)."""
    words = [len(w) for w in block.headers[i].split()] or [0]
    return max([*words, *(len(r[i].text) for r in block.rows if i < len(r))])


def _header(block: Table, i: int, stacked: bool) -> str:
    """A header as drawn: a number column does not wrap (its cells must not), so where the table
    is short of room its header's words go one per line ("kernel" over "time") instead of
    taking a wrapping text column's width."""
    header = block.headers[i]
    return "\n".join(header.split()) if stacked else header


def _longest_word(block: Table, i: int) -> int:
    """The longest word of a text column's cells: narrower, it is cut mid-word."""
    return max((len(w) for r in block.rows if i < len(r) for w in r[i].text.split()), default=0)


def _name_width(
    block: Table, numeric: tuple[bool, ...], shown: list[int], names: set[int], width: int
) -> int:
    """What a name column gets: the width left by the others (numbers unwrapped), NAME_MIN at
    least while optional columns can give way (`_fitting_columns`); when none is left, less,
    down to TEXT_MIN — wider, it would push the table past `width` and rich would squeeze a
    text column mid-word ("cpu-boun" / "d") or drop it."""
    drawn_names = [i for i in shown if i in names]
    if not drawn_names:
        return width
    others = sum(_natural(block, i) for i in shown if i not in names)
    spare = width - others - GAP * (len(shown) - 1)
    # what is drawn: the text ("1. rank0.json"), or the full name a shortened one stands for
    longest = max(max(len(c.text), len(c.full or "")) for r in block.rows for c in r if c.code)
    return max(TEXT_MIN, min(longest, spare // len(drawn_names)))


def _fitting_columns(block: Table, numeric: tuple[bool, ...], width: int) -> list[int]:
    """Column indexes to draw: the optional ones are left out, highest rank first, while the table
    cannot fit `width` with its numbers unwrapped and its text columns ≥ TEXT_MIN wide."""
    natural = [_natural(block, i) for i in range(len(block.headers))]
    names = _name_columns(block)
    least = [NAME_MIN if i in names else max(TEXT_MIN, _longest_word(block, i))
             for i in range(len(block.headers))]  # fmt: skip
    shown = list(range(len(block.headers)))
    optional = sorted(
        (i for i, rank in enumerate(block.optional) if rank > 0), key=lambda i: block.optional[i]
    )

    def needed() -> int:
        cells = sum(natural[i] if numeric[i] else min(natural[i], least[i]) for i in shown)
        return cells + GAP * (len(shown) - 1)

    while optional and needed() > width:
        shown.remove(optional.pop())
    return shown
