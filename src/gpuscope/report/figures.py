"""The figures of a document as matplotlib figures: what `--md FILE` writes beside the Markdown
(`report.md` + `report_figures/NN-title.png`) and what a notebook shows. The same blocks the
HTML page draws as SVG, in the same colours; matplotlib (the `plot` extra) is imported on use.

    >>> from gpuscope.report import figures
    >>> for name, block in figures.numbered(document):           # doctest: +SKIP
    ...     Path(name).write_bytes(figures.png(block))
    >>> figures.figure(block)                                     # doctest: +SKIP

Figures are `matplotlib.figure.Figure` objects (no pyplot, no global state, any backend). Text
from a trace is drawn as it is: `$` never starts TeX math.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Iterator
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import (
    Chart,
    Document,
    Figure,
    LineChart,
    RooflineChart,
    Section,
    StackedBars,
    Strip,
)
from gpuscope.errors import InputError
from gpuscope.report._palette import BAR, IDLE, MARK, colour

WIDTH = 9.0  # inches; 100 dpi: 900 px, readable beside the Markdown text
DPI = 100


def available() -> bool:
    """Whether matplotlib can be imported (the `plot` or `notebook` extra)."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        return False
    return True


def numbered(document: Document) -> list[tuple[str, Figure]]:
    """Every figure of the document that has something to draw, in reading order, with a file
    name that orders and tells them apart: `03-gpu-time-by-category.png`."""
    drawn = [f for f in _walk(document.sections) if drawable(f)]
    return [(f"{i:02d}-{_slug(f.title)}.png", f) for i, f in enumerate(drawn, 1)]


def _walk(sections: tuple[Any, ...]) -> Iterator[Figure]:
    for block in sections:
        if isinstance(block, Section):
            yield from _walk(block.blocks)
        elif isinstance(block, Figure):
            yield block


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48].rstrip("-") or "figure"


def drawable(block: Figure) -> bool:
    """Whether the figure has anything to draw (the HTML page leaves the same ones out)."""
    if isinstance(block, RooflineChart):
        return (
            block.bandwidth > 0
            and bool(block.roofs)
            and any(d.intensity > 0 and d.rate > 0 for d in block.dots)
        )
    if isinstance(block, Chart):
        return any(b.value > 0 for b in block.bars)
    if isinstance(block, StackedBars):
        return any(v > 0 for row in block.rows for v in row.values)
    if isinstance(block, Strip):
        return bool(block.lanes) and block.span_us > 0
    if isinstance(block, LineChart):
        return bool(block.points)
    return False


def png(block: Figure) -> bytes:
    """The figure as PNG bytes."""
    drawn = figure(block)
    buffer = io.BytesIO()
    drawn.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def figure(block: Figure) -> Any:
    """The block as a matplotlib `Figure`; InputError naming matplotlib when it is missing."""
    if isinstance(block, RooflineChart):
        return _roofline(block)
    if isinstance(block, Chart):
        return _bars(block)
    if isinstance(block, StackedBars):
        return _stacked(block)
    if isinstance(block, Strip):
        return _strip(block)
    if isinstance(block, LineChart):
        return _line(block)
    raise InputError(f"no drawing for a {type(block).__name__} figure")


def _new(height: float) -> Any:
    try:
        from matplotlib.figure import Figure as MplFigure
    except ImportError:
        raise InputError("figures need matplotlib: pip install 'gpuscope[plot]'") from None
    return MplFigure(figsize=(WIDTH, height), layout="constrained")


def plain(value: str) -> str:
    """Text drawn as it is: matplotlib would read `$…$` as TeX math."""
    return value.replace("$", r"\$")


def _bars(chart: Chart) -> Any:
    fig = _new(0.9 + 0.3 * len(chart.bars))
    ax = fig.add_subplot()
    rows = range(len(chart.bars))
    ax.barh(rows, [b.value for b in chart.bars], color=BAR)
    ax.set_yticks(rows, [plain(b.label) for b in chart.bars], fontsize=8)
    ax.invert_yaxis()
    for i, bar in enumerate(chart.bars):
        ax.annotate(plain(bar.text), (bar.value, i), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8)  # fmt: skip
    ax.margins(x=0.25)
    ax.set_xticks([])
    ax.spines[["top", "right", "bottom"]].set_visible(False)
    ax.set_title(plain(chart.title), loc="left", fontsize=11)
    return fig


def _stacked(chart: StackedBars) -> Any:
    fig = _new(1.4 + 0.32 * len(chart.rows))
    ax = fig.add_subplot()
    rows = range(len(chart.rows))
    left = [0.0] * len(chart.rows)
    for i, column in enumerate(chart.columns):
        values = [max(r.values[i], 0.0) if i < len(r.values) else 0.0 for r in chart.rows]
        ax.barh(rows, values, left=left, color=colour(i), label=plain(column))
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(rows, [plain(r.label) for r in chart.rows], fontsize=8)
    ax.invert_yaxis()
    for i, row in enumerate(chart.rows):
        if row.text:
            ax.annotate(plain(row.text), (left[i], i), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=8)  # fmt: skip
    ax.margins(x=0.12)
    _time_axis(ax.xaxis)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(plain(chart.title), loc="left", fontsize=11)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(chart.rows) > 3 else -0.3),
              ncol=min(len(chart.columns), 4), frameon=False, fontsize=8)  # fmt: skip
    return fig


def _strip(chart: Strip) -> Any:
    fig = _new(0.9 + 0.75 * len(chart.lanes) + 0.2 * min(len(chart.marks), 5))
    axes = fig.subplots(len(chart.lanes), 1, sharex=True, squeeze=False)[:, 0]
    for i, (ax, lane) in enumerate(zip(axes, chart.lanes, strict=True)):
        step = chart.span_us / max(len(lane.busy), 1)
        ax.set_facecolor(IDLE)
        starts = [k * step for k in range(len(lane.busy))]
        ax.bar(starts, list(lane.busy), width=step, align="edge", color=BAR, linewidth=0)
        for mark in (m for m in chart.marks if m.lane == i):
            width = max(mark.length_us, chart.span_us / 400)
            ax.axvspan(mark.start_us, mark.start_us + width, fill=False, edgecolor=MARK, lw=1.2)
            ax.annotate(plain(mark.label), (mark.start_us + width / 2, 1.0), ha="center",
                        va="bottom", color=MARK, fontsize=8, fontweight="bold",
                        annotation_clip=False)  # fmt: skip
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.set_ylabel(plain(lane.label), rotation=0, ha="right", va="center", fontsize=9)
        ax.set_xlim(0, chart.span_us)
    _time_axis(axes[-1].xaxis)
    axes[0].set_title(plain(chart.title), loc="left", fontsize=11, pad=12)
    legend = "\n".join(textwrap.fill(f"{m.label}  {m.text}", 150, subsequent_indent="   ")
                       for m in chart.marks[:5])  # fmt: skip
    if legend:
        axes[-1].set_xlabel(plain(legend), loc="left", fontsize=8, linespacing=1.4)
    return fig


def _line(chart: LineChart) -> Any:
    fig = _new(3.4)
    ax = fig.add_subplot()
    xs = list(range(len(chart.points)))
    ax.plot(xs, [p.value for p in chart.points], marker="o", markersize=3, color=BAR)
    marked = [(x, p.value) for x, p in zip(xs, chart.points, strict=True) if p.highlight]
    if marked:
        ax.plot(*zip(*marked, strict=True), "o", color=MARK, markersize=6)
    shown = sorted({0, len(xs) - 1})
    ax.set_xticks(shown, [plain(chart.points[i].label) for i in shown], fontsize=8)
    if chart.unit:
        ax.set_ylabel(plain(chart.unit))
    better = f" ({chart.better} is better)" if chart.better else ""
    ax.set_title(plain(chart.title + better), loc="left", fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _roofline(chart: RooflineChart) -> Any:
    fig = _new(4.6)
    ax = fig.add_subplot()
    dots = [d for d in chart.dots if d.intensity > 0 and d.rate > 0]
    top = max(r.flops for r in chart.roofs)
    xs = [d.intensity for d in dots] + [top / chart.bandwidth]
    low, high = min(xs) / 4, max(xs) * 4
    for roof in chart.roofs:
        knee = roof.flops / chart.bandwidth
        ax.plot([low, knee, high], [low * chart.bandwidth, roof.flops, roof.flops], color="#333")
        ax.annotate(plain(roof.label), (high, roof.flops), fontsize=8, va="bottom", ha="right")
    for dot in dots:
        tone = {"memory": "#1f77b4", "compute": "#d62728"}.get(dot.bound, "#7f7f7f")
        ax.plot(dot.intensity, dot.rate, "o", color=tone, alpha=0.8)
        ax.annotate(plain(dot.label), (dot.intensity, dot.rate), xytext=(4, 3),
                    textcoords="offset points", fontsize=8)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOP per DRAM byte")
    ax.set_ylabel("FLOP/s")
    ax.set_title(plain(chart.title), loc="left", fontsize=11)
    return fig


def _time_axis(axis: Any) -> None:
    """Ticks of a µs axis in the unit that keeps them short (`fmt.duration`)."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _: fmt.duration(value)))
