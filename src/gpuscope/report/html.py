"""One self-contained HTML page of any document (what `--html FILE` writes).

    >>> from gpuscope.analysis.layout import analysis_document
    >>> from gpuscope.report import html
    >>> page = html.render(analysis_document([analysis.to_dict()]))  # doctest: +SKIP

No scripts and no external resources: styles are inline, figures are inline SVG, each drawn twice
— for a desktop page and for a phone — and the stylesheet shows the one that fits. Markup is built
with `markupsafe.Markup`, so every string from the trace is escaped unless it is markup we made.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from gpuscope.document.model import (
    Block,
    Cell,
    Chart,
    Document,
    Facts,
    Figure,
    LineChart,
    Names,
    Note,
    RooflineChart,
    Section,
    StackedBars,
    Strip,
    Table,
    Text,
)
from gpuscope.document.names import NAME_WIDTH, short_name
from gpuscope.report._bars import bar_chart
from gpuscope.report._line import line_chart
from gpuscope.report._palette import colour
from gpuscope.report._roofline import roofline_svg
from gpuscope.report._stacked import stacked_bars
from gpuscope.report._strip import strip
from gpuscope.report._style import CSS
from gpuscope.report._svg import NARROW, WIDE

PAGE = Markup(
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    "<title>{title}</title>\n<style>{css}</style>\n</head>\n<body>\n"
    "<header><h1>{heading}</h1><p>{subtitle}</p></header>\n"
    "<main>\n{body}\n</main>\n{footer}</body>\n</html>\n"
)


def render(doc: Document) -> str:
    """The document as one self-contained page (inline styles and SVG, no scripts)."""
    body = Markup("\n").join(_section(s, depth=2) for s in doc.sections)
    footer = _el("footer", doc.footer) + Markup("\n") if doc.footer else Markup("")
    title = f"{doc.title} — {doc.subtitle}" if doc.subtitle else doc.title
    page = PAGE.format(
        title=title, css=Markup(CSS), heading=doc.title, subtitle=doc.subtitle, body=body,
        footer=footer,
    )  # fmt: skip
    return str(page)


def fragment(doc: Document, scope: str = "gpuscope-report") -> str:
    """The document as one `<div class=scope>` to embed in another page (a Jupyter cell):
    the same markup and inline SVG as `render`, its styles confined to that div."""
    body = Markup("\n").join(_section(s, depth=2) for s in doc.sections)
    header = _el("header", _el("h1", doc.title) + (_el("p", doc.subtitle) if doc.subtitle else ""))
    footer = _el("footer", doc.footer) if doc.footer else Markup("")
    style = Markup("<style>{}</style>").format(Markup(scoped_css(f".{scope}")))
    return str(_el("div", style + header + _el("main", body) + footer, cls=scope))


def scoped_css(scope: str) -> str:
    """The stylesheet with every rule confined to `scope` (`:root` and `body` become it)."""
    import re

    def rule(match: re.Match[str]) -> str:
        selectors = []
        for selector in match[1].split(","):
            selector = selector.strip()
            if selector in (":root", "body"):
                selectors.append(scope)
            else:
                selectors.append(f"{scope} {selector}")
        return f"\n{', '.join(selectors)} {{{match[2]}}}"

    return re.sub(r"([^{}]+?)\s*\{([^{}]*)\}", rule, CSS)


def _el(tag: str, content: Any = "", cls: str = "", **attrs: str) -> Markup:
    """`<tag class=… attr=…>content</tag>`; `content` and attribute values are escaped."""
    pairs = {"class": cls, **attrs}
    attr = Markup("").join(Markup(' {}="{}"').format(k, v) for k, v in pairs.items() if v)
    return Markup("<{0}{1}>{2}</{0}>").format(Markup(tag), attr, content)


def _section(section: Section, depth: int) -> Markup:
    badge = _el("span", section.badge, cls=f"badge {section.level}") if section.badge else ""
    heading = _el(f"h{min(depth, 6)}", Markup("{}{}").format(badge, section.title))
    body = Markup("").join(_block(b, depth + 1) for b in section.blocks)
    cls = "top" if depth == 2 else ("finding " + section.level if section.badge else "sub")
    return _el("section", heading + body, cls=cls, id=section.anchor)


def _block(block: Block, depth: int) -> Markup:
    if isinstance(block, Section):
        return _section(block, depth)
    if isinstance(block, Figure):
        return _figure(block)
    if isinstance(block, Note):
        return _el("div", _el("strong", block.title) + block.text, cls=f"note {block.level}")
    if isinstance(block, Text):
        lead = _el("strong", f"{block.label}:") + " " if block.label else Markup("")
        return _el("p", lead + block.text)
    if isinstance(block, Facts):
        return _caption(block.caption) + _facts(block)
    if isinstance(block, Names):
        items = Markup("").join(_el("li", _cell_content(c)) for c in block.items)
        return _caption(block.caption) + _el("ul", items, cls="names")
    return _table(block)


def _figure(figure: Figure) -> Markup:
    """`<figure>`: the title, the drawing at both widths, the legend, the caption; nothing
    when there is nothing to draw."""
    wide, narrow = svg_of(figure, WIDE), svg_of(figure, NARROW)
    if not wide:
        return Markup("")
    title = _el("figcaption", figure.title)
    caption = _caption(getattr(figure, "caption", ""))
    return _el("figure", title + wide + narrow + _legend(figure) + caption, cls="figure")


def svg_of(figure: Figure, width: int) -> Markup:
    """The figure's `<svg>` laid out for `width` px (empty markup when it has nothing to draw)."""
    if isinstance(figure, RooflineChart):
        return roofline_svg(figure, width)
    if isinstance(figure, Chart):
        return bar_chart(figure, width)
    if isinstance(figure, StackedBars):
        return stacked_bars(figure, width)
    if isinstance(figure, Strip):
        return strip(figure, width)
    if isinstance(figure, LineChart):
        return line_chart(figure, width)
    return Markup("")


def _legend(figure: Figure) -> Markup:
    """What the colours or marks of a figure mean, as a list that wraps at any width."""
    if isinstance(figure, StackedBars):
        items = Markup("").join(
            _el("li", _el("span", "", cls="swatch", style=f"background:{colour(i)}") + name)
            for i, name in enumerate(figure.columns)
        )
        return _el("ul", items, cls="legend")
    if isinstance(figure, Strip) and figure.marks:
        marks = Markup("").join(
            _el("li", _el("span", m.label, cls="mark-number") + m.text) for m in figure.marks
        )
        return _el("ul", marks, cls="marks")
    if isinstance(figure, LineChart) and figure.better:
        return _el("p", f"{figure.better} is better; oldest left, newest right", cls="caption")
    return Markup("")


def _caption(caption: str) -> Markup:
    return _el("p", caption, cls="caption") if caption else Markup("")


def _facts(facts: Facts) -> Markup:
    pairs = Markup("").join(_el("dt", k) + _el("dd", v) for k, v in facts.items)
    return _el("dl", pairs, cls="facts")


def _table(table: Table) -> Markup:
    numeric = table.numeric + (False,) * (len(table.headers) - len(table.numeric))
    head = Markup("").join(
        _el("th", h, cls="num" if n else "") for h, n in zip(table.headers, numeric, strict=True)
    )
    rows = Markup("").join(
        _el(
            "tr",
            Markup("").join(
                _el("td", _cell_content(c), cls="num" if n else "")
                for c, n in zip(row, numeric, strict=True)
            ),
        )
        for row in table.rows
    )
    caption = _el("caption", table.caption) if table.caption else Markup("")
    drawn = _el("table", caption + _el("thead", _el("tr", head)) + _el("tbody", rows))
    return _el("div", drawn, cls="scroll")  # a wide table scrolls in its box, not the page


def _cell_content(cell: Cell) -> Markup:
    shown = cell.text
    if cell.name and len(shown) > NAME_WIDTH:  # a name of 900 characters: its telling parts, in
        # a table's cell as wide as the layouts' own (`short_name`); in full on hover
        shown = short_name(cell.full or cell.text, NAME_WIDTH)
    full = cell.full or cell.text
    title = full if full != shown else ""
    if cell.code:
        inner = _el("code", shown, title=title)
    elif title:
        inner = _el("span", shown, title=title)
    else:
        inner = Markup("{}").format(shown)
    return _el("a", inner, href=f"#{cell.link}") if cell.link else inner
