"""The report's own figures in a notebook: the figure blocks of a result's document (what the
HTML page draws as SVG and `--md` writes as PNGs beside it) as matplotlib figures, drawn by
`gpuscope.report.figures` — the same pictures everywhere.

    >>> a = gpuscope.analyze("trace.json.gz")                   # doctest: +SKIP
    >>> figs = a.figures()          # {"01-gpu-time-by-category": Figure, …}
    >>> a.plot.strip()              # the busy / idle strip, the longest gaps numbered
    >>> gpuscope.analyze("run/").figures()["01-gpu-span-per-rank"]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscope.document.model import Document
from gpuscope.errors import InputError


def document_figures(document: Document) -> dict[str, Any]:
    """Every figure of the document by its name (the PNG's file name without `.png`)."""
    from gpuscope.report import figures

    return {name.removesuffix(".png"): figures.figure(f) for name, f in figures.numbered(document)}


def busy_strip(report: Mapping[str, Any]) -> Any:
    """The analysis report's busy / idle strip with its longest gaps (`gaps.strip`)."""
    from gpuscope.analysis.layout import busy_strip as strip_of
    from gpuscope.report import figures
    from gpuscope.text import printable_data

    strip = strip_of(printable_data(report.get("gaps") or {}))
    if strip is None:
        raise InputError("no busy / idle strip: the source has no timeline")
    return figures.figure(strip)
