"""The figure blocks (stacked bars, a busy / idle strip, a line, bars) in every view: HTML draws
each as inline SVG for a wide and a narrow screen with its legend; Markdown links the PNG a
command wrote, else draws stacked bars as a table and a line as a sparkline; the terminal draws
them as text; `report.figures` makes the PNGs (no TeX from a name's `$`)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from gpuscope.document.model import (
    Bar,
    Chart,
    Document,
    Lane,
    LineChart,
    Mark,
    Point,
    Section,
    Stack,
    StackedBars,
    Strip,
)
from gpuscope.report import figures, html, markdown, terminal
from tests.unit.report.test_html import assert_self_contained, parse

COLUMNS = ("compute_us", "exposed_comm_us", "copies_us", "launch_us", "host_outside_ops_us",
           "sync_wait_us", "startup_us", "other_us")  # fmt: skip
ROWS = tuple(
    Stack(f"step {i}", (900.0 + i, 120.0, 0.0, 35.5, 410.0, 0.0, 0.0, 12.25), text="1.48 ms")
    for i in range(3)
)
STEPS = StackedBars("Step time by state", COLUMNS, ROWS, "per step; the states do not overlap")
STRIP = Strip(
    "Busy and idle",
    1000.0,
    (Lane("GPU 0", (1.0, 0.5, 0.0, 0.25)), Lane("GPU 1", (0.0, 0.0, 1.0, 1.0))),
    (Mark(500.0, 250.0, 0, "1", "250 µs host-wait gap at 500 µs"),),
    "4 bins of 250 µs",
)
VALUES = (100.0, 101.0, 99.5, 96.0)
POINTS = tuple(Point(f"#{i}", v, highlight=i == 3) for i, v in enumerate(VALUES))
TREND = LineChart("samples_per_second", POINTS, "", "higher")
BARS = Chart("Kernel $time$ <b>", (Bar("a$b$c <script>", "a$b$c <script>", 3.0, "3 µs"),))
DOC = Document("figures", (Section("all of them", (STEPS, STRIP, TREND, BARS)),))


def test_html_draws_each_figure_twice_with_its_legend() -> None:
    page = html.render(DOC)
    assert_self_contained(page, parse(page))
    drawn = page.split("<figure")[1:]
    assert len(drawn) == 4
    for figure in drawn:
        assert figure.count('<svg class="chart wide"') == figure.count('<svg class="chart narrow"')
    steps, strip, trend, bars = drawn
    assert steps.count('class="segment"') == 2 * 3 * 5  # two layouts × rows × non-zero columns
    assert all(f">{name}</li>" in steps for name in COLUMNS), "a legend item per column"
    assert "step 0 · compute_us: 900 µs" in steps
    assert strip.count('class="mark"') == 2 and "250 µs host-wait gap at 500 µs" in strip
    assert trend.count("<circle") == 2 * 4 and "higher is better" in trend
    assert "&lt;script&gt;" in bars and "<script" not in bars


def test_markdown_without_pngs_draws_what_no_table_beside_holds() -> None:
    text = markdown.render(DOC)
    header = "|  | compute_us | exposed_comm_us | launch_us | host_outside_ops_us | other_us |  |"
    assert header in text, "stacked bars: a table of the columns with a value"
    assert "| step 2 | 902 µs | 120 µs | 35.5 µs | 410 µs | 12.2 µs | 1.48 ms |" in text
    assert "samples_per_second: ▇█▆▁ (oldest → newest)" in text
    assert "Busy and idle" not in text and "Kernel" not in text  # nothing to say without a PNG


def test_markdown_links_the_pngs_it_is_given() -> None:
    given = {STEPS: "r_figures/01-step.png", STRIP: "r_figures/02 strip (busy).png"}
    text = markdown.render(DOC, figures=given)
    assert "![Step time by state](r_figures/01-step.png)" in text
    assert "![Busy and idle](r_figures/02%20strip%20%28busy%29.png)" in text
    assert "| step 2 |" not in text, "the picture instead of the table"


def test_terminal_draws_figures_as_text() -> None:
    text = terminal.render(DOC, console=Console(file=io.StringIO(), width=120))
    assert "step 1" in text and "901 µs" in text and "sync_wait_us" not in text
    assert re.search(r"GPU 0 │█▅ ▃│", text) and re.search(r"GPU 1 │  ██│", text)
    assert "1  250 µs host-wait gap at 500 µs" in text
    assert "samples_per_second: ▇█▆▁" in text


def test_pngs_of_every_kind() -> None:
    pytest.importorskip("matplotlib")
    names = [name for name, _ in figures.numbered(DOC)]
    assert names == ["01-step-time-by-state.png", "02-busy-and-idle.png",
                     "03-samples-per-second.png", "04-kernel-time-b.png"]  # fmt: skip
    for _, block in figures.numbered(DOC):
        assert figures.png(block).startswith(b"\x89PNG"), block.title


def test_nothing_to_draw_is_no_figure() -> None:
    empty = Document("empty", (Section("s", (
        StackedBars("none", ("a",), (Stack("row", (0.0,)),)),
        Strip("none", 0.0, ()),
        LineChart("none", ()),
        Chart("none", (Bar("x", "x", 0.0, "0"),)),
    )),))  # fmt: skip
    assert figures.numbered(empty) == []
    assert "<figure" not in html.render(empty)
