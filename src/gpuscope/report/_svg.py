"""SVG primitives of the HTML page's figures, every string escaped by MarkupSafe, and the two
widths each figure is laid out at: `WIDE` for a desktop page, `NARROW` for a phone (the page's
stylesheet shows the one that fits; text stays 12 px either way instead of a wide drawing
shrunk to a third)."""

from __future__ import annotations

from markupsafe import Markup

WIDE, NARROW = 960, 360
CHAR = 7.3  # px per character of the 12 px monospace font, to lay text out by its length


def svg(width: float, height: float, label: str, body: Markup) -> Markup:
    """An `<svg>` that scales to its container's width; `wide` or `narrow` by its layout."""
    kind = "narrow" if width <= NARROW else "wide"
    return Markup(
        '<svg class="chart {kind}" viewBox="0 0 {w} {h:.0f}" width="100%" role="img" '
        'aria-label="{label}">{body}</svg>'
    ).format(kind=kind, w=width, h=height, label=label, body=body)


def rect(
    x: float, y: float, width: float, height: float, fill: str = "", cls: str = "", tip: str = ""
) -> Markup:
    """A rectangle; `tip`: its hover text (an SVG `<title>`)."""
    attrs = Markup("").join(
        Markup(' {}="{}"').format(k, v) for k, v in (("class", cls), ("fill", fill)) if v
    )
    tail = Markup("><title>{}</title></rect>").format(tip) if tip else Markup("/>")
    return Markup('<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"{}{}').format(
        x, y, max(width, 0.0), max(height, 0.0), attrs, tail
    )


def text(x: float, y: float, content: str, anchor: str = "start", cls: str = "") -> Markup:
    attr = Markup(' class="{}"').format(cls) if cls else Markup("")
    return Markup('<text x="{:.1f}" y="{:.1f}" text-anchor="{}"{}>{}</text>').format(
        x, y, anchor, attr, content
    )


def line(x1: float, y1: float, x2: float, y2: float, cls: str = "axis") -> Markup:
    return Markup('<line class="{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>').format(
        cls, x1, y1, x2, y2
    )


def chars(width: float) -> int:
    """How many characters of the chart font fit in `width` px."""
    return max(int(width / CHAR), 4)
