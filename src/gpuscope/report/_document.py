"""The format-neutral document every renderer draws: sections of facts, tables, notes and charts.

`_sections.py` turns an analysis dict into these blocks once; `markdown.py` and `html.py` only
decide how each block looks. All text here is plain (unescaped) — escaping is the renderer's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

Level = Literal["ok", "info", "warning", "critical"]


@dataclass(frozen=True)
class Cell:
    """One table cell. `full` is the unshortened text (HTML shows it as a tooltip)."""

    text: str
    full: str = ""
    code: bool = False
    link: str = ""  # in-document anchor, e.g. "trace-1"


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


Block = Union[Table, Facts, Names, Text, Note, Chart, "Section"]


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...] = ()
    anchor: str = ""
    badge: str = ""  # short status shown beside the title, e.g. a finding's severity
    level: Level = "info"  # colour of the badge
