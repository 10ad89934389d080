"""The format-neutral document every renderer draws: sections of facts, tables, notes and charts.

Analyses (and diff, counters, ranks) lay their results out as these blocks once; the renderers in
`gpuscope.report` (terminal, Markdown, HTML) only decide how each block looks. All text here is
plain (unescaped) — escaping is the renderer's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

Level = Literal["ok", "info", "warning", "critical"]


@dataclass(frozen=True)
class Cell:
    """One table cell. `full` is the unshortened text (HTML shows it as a tooltip); `name`: the
    full text is a kernel / operator name that a renderer may shorten to the width it has
    (`document.names.short_names`), else the text is cut in the middle."""

    text: str
    full: str = ""
    code: bool = False
    link: str = ""  # in-document anchor, e.g. "trace-1"
    name: bool = False


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: tuple[bool, ...] = ()  # per column: right-align
    caption: str = ""
    optional: tuple[
        int, ...
    ] = ()  # per column: > 0 a narrow terminal may leave it out, highest first


@dataclass(frozen=True)
class Facts:
    """Label → value pairs shown as a compact definition list."""

    items: tuple[tuple[str, str], ...]
    caption: str = ""


@dataclass(frozen=True)
class Names:
    """A list of (often long) names; each shown shortened with its full text available."""

    items: tuple[Cell, ...]
    caption: str = ""


@dataclass(frozen=True)
class Text:
    text: str
    label: str = ""  # bold lead-in such as "Action"


@dataclass(frozen=True)
class Note:
    """A call-out box: the verdict, an integrity flag, a reader warning."""

    level: Level
    title: str
    text: str


@dataclass(frozen=True)
class Bar:
    label: str
    full: str
    value: float
    text: str  # the value as shown next to the bar


@dataclass(frozen=True)
class Chart:
    """Horizontal bars: HTML draws inline SVG; Markdown skips them (a table holds the same data)."""

    title: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Roof:
    label: str
    flops: float  # FLOP/s


@dataclass(frozen=True)
class Dot:
    label: str  # short, drawn next to the dot
    full: str  # hover text
    intensity: float  # FLOP/B
    rate: float  # FLOP/s
    bound: str  # "memory", "compute" or ""


@dataclass(frozen=True)
class RooflineChart(Chart):
    """A roofline: its bars are the kernels' fractions of their roof, so a view that draws no
    plot skips it like any chart (the table beside it holds the numbers)."""

    bandwidth: float = 0.0  # B/s
    bandwidth_label: str = ""
    roofs: tuple[Roof, ...] = ()
    dots: tuple[Dot, ...] = ()


Block = Union[Table, Facts, Names, Text, Note, Chart, "Section"]


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...] = ()
    anchor: str = ""
    badge: str = ""  # short status shown beside the title, e.g. a finding's severity
    level: Level = "info"  # colour of the badge


@dataclass(frozen=True)
class Document:
    """What a renderer draws: a title, what it is of (`subtitle`), its sections, and a closing
    line (the schema and version it was made from)."""

    title: str
    sections: tuple[Section, ...]
    subtitle: str = ""
    footer: str = ""
