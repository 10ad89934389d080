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
class Figure:
    """What every picture block shares: a title. HTML draws each kind as inline SVG; Markdown
    links its PNG where the command wrote one beside the file (`report.figures`), else leaves it
    out — or, for a kind whose numbers no table beside it holds, draws the table itself."""

    title: str


@dataclass(frozen=True)
class Bar:
    label: str
    full: str
    value: float
    text: str  # the value as shown next to the bar


@dataclass(frozen=True)
class Chart(Figure):
    """Horizontal bars: HTML draws inline SVG; the terminal and Markdown (without its PNG) skip
    them (a table beside them holds the same data)."""

    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Stack:
    """One bar of a `StackedBars`: a value in µs per column (0 where the column has none)."""

    label: str
    values: tuple[float, ...]
    full: str = ""  # hover text: what the row is, in full
    text: str = ""  # shown after the bar, e.g. the row's total


@dataclass(frozen=True)
class StackedBars(Figure):
    """One bar per row, one segment per column, a legend; values in µs. The segments of a bar
    must not overlap in time (the layout that fills it says so in `caption`): a bar's length is
    their sum. No table need sit beside it: a view that draws no picture draws it as a table
    (Markdown, without its PNG) or as text bars (the terminal)."""

    columns: tuple[str, ...]
    rows: tuple[Stack, ...]
    caption: str = ""


@dataclass(frozen=True)
class Lane:
    """One row of a `Strip`: the busy fraction (0 to 1) of each equal bin of the window."""

    label: str
    busy: tuple[float, ...]


@dataclass(frozen=True)
class Mark:
    """A span marked on a `Strip` (a long gap): where it starts (µs from the strip's start),
    how long it is, the lane it is on, a short label drawn on it and a longer text for the
    legend."""

    start_us: float
    length_us: float
    lane: int
    label: str
    text: str


@dataclass(frozen=True)
class Strip(Figure):
    """A device's busy / idle time over the profiled window: one lane per device, each bin shaded
    by how busy it was, the marks (the longest gaps) drawn over it. `span_us`: the window the bins
    cover, from 0."""

    span_us: float
    lanes: tuple[Lane, ...]
    marks: tuple[Mark, ...] = ()
    caption: str = ""


@dataclass(frozen=True)
class Point:
    """One value of a `LineChart`: its x label (a result, a date), value and hover text."""

    label: str
    value: float
    full: str = ""
    highlight: bool = False  # drawn apart (the result a check tests)


@dataclass(frozen=True)
class LineChart(Figure):
    """Values in order, oldest first (a metric's trend): a line with a dot per point. `unit`:
    the values' unit as shown on the axis; `better`: "lower" or "higher" (said in the legend)."""

    points: tuple[Point, ...]
    unit: str = ""
    better: str = ""
    caption: str = ""


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


Block = Union[Table, Facts, Names, Text, Note, Figure, "Section"]


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
