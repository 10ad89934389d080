"""GitHub-flavoured Markdown of any document (what `--md FILE` writes).

    >>> from gpuscope.analysis.layout import analysis_document
    >>> from gpuscope.report import markdown
    >>> text = markdown.render(analysis_document([analysis.to_dict()]))  # doctest: +SKIP

Text from the trace is escaped: `|`, `*`, `<`, `>` in plain text; names go in code spans sized to
hold any backticks they contain. A figure is its PNG where the command wrote one beside the file
(`figures`: figure → path relative to the Markdown file, `report.figures.png_files`); without one,
stacked bars are a table, a trend a sparkline, and the other figures are left out (the tables
beside them hold the same data).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from gpuscope.document.model import (
    Block,
    Cell,
    Document,
    Facts,
    Figure,
    Level,
    LineChart,
    Names,
    Note,
    Section,
    StackedBars,
    Table,
    Text,
)
from gpuscope.report._as_text import line_text, stacked_table

MARK: dict[Level, str] = {"ok": "✓", "info": "ℹ", "warning": "⚠", "critical": "✖"}
_SPECIAL = re.compile(r"([\\`*|\[\]])")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # only such a `<` can open raw HTML in CommonMark
_LINE_START = re.compile(r"^([>#+-])")
_BACKTICKS = re.compile(r"`+")


Figures = Mapping[Figure, str]


def render(document: Document, *, depth: int = 1, figures: Figures | None = None) -> str:
    """The document as Markdown; its title a heading of `depth` (1: `#`), sections one deeper;
    `figures`: the PNG of each figure that has one, as a path relative to the Markdown file."""
    lines = [f"{'#' * depth} {text(document.title)}", ""]
    if document.subtitle:
        lines += [text(document.subtitle), ""]
    for section in document.sections:
        lines += _section(section, depth + 1, figures or {})
    if document.footer:
        lines += [f"<sub>{text(document.footer)}</sub>", ""]
    return "\n".join(lines).rstrip() + "\n"


def _section(section: Section, depth: int, figures: Figures) -> list[str]:
    lines = [f'<a id="{section.anchor}"></a>', ""] if section.anchor else []
    badge = f" `{section.badge}`" if section.badge else ""
    lines += [f"{'#' * min(depth, 6)} {text(section.title)}{badge}", ""]
    for block in section.blocks:
        lines += _block(block, depth + 1, figures)
    return lines


def _block(block: Block, depth: int, figures: Figures) -> list[str]:
    if isinstance(block, Section):
        return _section(block, depth, figures)
    if isinstance(block, Figure):
        return _figure(block, figures.get(block))
    if isinstance(block, Note):
        return [f"> {MARK[block.level]} **{text(block.title)}** — {text(block.text)}", ""]
    if isinstance(block, Text):
        lead = f"**{text(block.label)}:** " if block.label else ""
        return [lead + text(block.text), ""]
    if isinstance(block, Facts):
        return [
            *_caption(block.caption),
            *(f"- **{text(k)}:** {text(v)}" for k, v in block.items),
            "",
        ]
    if isinstance(block, Names):
        names = (f"- {code(c.text, table=False)}" for c in block.items)
        return [*_caption(block.caption), *names, ""]
    return _table(block)


def _figure(figure: Figure, png: str | None) -> list[str]:
    if png:
        caption = getattr(figure, "caption", "")
        return [f"![{text(figure.title)}]({_link(png)})", "", *_caption(caption)]
    if isinstance(figure, StackedBars) and figure.rows:
        return _table(stacked_table(figure))
    if isinstance(figure, LineChart) and figure.points:
        return [text(line_text(figure, 100)), ""]
    return []


def _link(path: str) -> str:
    """A relative path as a link target: spaces and parentheses percent-encoded."""
    return path.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _caption(caption: str) -> list[str]:
    return [f"*{text(caption)}*", ""] if caption else []


def _table(table: Table) -> list[str]:
    align = [("---:" if n else "---") for n in _pad(table.numeric, len(table.headers))]
    lines = [
        *_caption(table.caption),
        _row(text(h) for h in table.headers),
        _row(iter(align)),
        *(_row(_cell(c) for c in row) for row in table.rows),
        "",
    ]
    return lines + _full_names(table)


def _pad(flags: tuple[bool, ...], n: int) -> tuple[bool, ...]:
    return flags + (False,) * (n - len(flags))


def _row(cells: Iterator[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(cell: Cell) -> str:
    shown = code(cell.text) if cell.code else text(cell.text)
    return f"[{shown}](#{cell.link})" if cell.link else shown


def _full_names(table: Table) -> list[str]:
    """Shortened names get their full text below the table, in a collapsed block."""
    full = [
        f"{i}. {' '.join(c.full.split())}"
        for i, row in enumerate(table.rows, 1)
        for c in row
        if c.code and c.full and c.full != c.text
    ]
    if not full:
        return []
    body = "\n".join(full)
    fence = "`" * max(3, _longest_backticks(body) + 1)
    return [
        "<details><summary>full names (by row)</summary>",
        "",
        fence + "text",
        body,
        fence,
        "",
        "</details>",
        "",
    ]


def text(value: str) -> str:
    """Plain text safe in a paragraph or table cell: no markup, no raw HTML, one line."""
    escaped = _SPECIAL.sub(r"\\\1", " ".join(value.split()))
    return _LINE_START.sub(r"\\\1", _TAG_START.sub("&lt;", escaped))


def code(value: str, table: bool = True) -> str:
    """A code span that holds any text: the delimiter outgrows the text's own backtick runs.
    In a table cell `|` must still be escaped (GFM splits cells before reading code spans)."""
    flat = " ".join(value.split())
    flat = flat.replace("|", "\\|") if table else flat
    ticks = "`" * (_longest_backticks(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _longest_backticks(value: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(value)), default=0)
