"""`render_html`: one well-formed, self-contained page (no scripts, no external loads) with four
SVG figures, each drawn for a wide and a narrow screen, the numbers of the dict, full names as
tooltips, and every trace string escaped."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpuscope.document import units as fmt
from gpuscope.document.names import short_name
from tests.unit.report.reports import SCRIPT, plant, recorded, tiny_trace, zero_gpu_report
from tests.views import render_html

RECORDED = ("llama_decode_h200.json.gz", "patterns_h200.json.gz", "llama_compiled_h200.json.gz")
VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "source"}
SECTIONS = (
    "Source",
    "Headline numbers",
    "Findings",
    "Categories",
    "Top kernels",
    "Memory copies",
    "Gaps between kernels",
    "Launch statistics",
    "Synchronization",
)


class Page(HTMLParser):
    """Parses the page the way a browser tokenizes it; records tags, attributes, text, headings."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.text: list[str] = []
        self.headings: list[str] = []
        self._heading: list[str] | None = None
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        if tag not in VOID:
            self.stack.append(tag)
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def attr(self, name: str) -> list[str]:
        return [v for _, k, v in self.attrs if k == name]


def parse(markup: str) -> Page:
    page = Page(markup)
    assert page.stack == [], f"unclosed tags: {page.stack}"
    return page


def assert_self_contained(markup: str, page: Page) -> None:
    assert "<script" not in markup.lower()
    assert not {"script", "link", "iframe", "object", "embed", "img"} & set(page.tags)
    assert not page.attr("src")
    assert all(h.startswith("#") for h in page.attr("href")), "only in-page links"
    assert "@import" not in markup
    assert "url(" not in markup
    assert not re.search(r"""=\s*["']?(https?:)?//""", markup), "no remote resource"
    assert not [k for _, k, _ in page.attrs if k.startswith("on")], "no event handlers"


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_trace_page_is_well_formed_and_offline(name: str) -> None:
    markup = render_html([recorded(name)])
    assert markup.startswith("<!DOCTYPE html>")
    page = parse(markup)
    assert_self_contained(markup, page)
    assert page.headings[:2] == ["gpuscope analysis", f"1. {name}"]
    plain = [re.sub(r" \(\d+\)$", "", h) for h in page.headings]  # "Findings (3)"
    assert [h for h in plain if h in SECTIONS] == list(SECTIONS)


@pytest.mark.parametrize("name", RECORDED)
def test_five_figures_drawn_from_the_dict(name: str) -> None:
    report = recorded(name)
    markup = render_html([report])
    figures = markup.split("<figure")[1:]
    assert len(figures) == 5
    assert all(f.count('<svg class="chart wide"') == f.count('<svg class="chart narrow"') == 1
               for f in figures)  # fmt: skip
    steps, categories, top, strip, gaps = (f.split('<svg class="chart narrow"')[0]
                                           for f in figures)  # fmt: skip
    rows = report["step_breakdown"]
    parts = report["breakdown"]["parts"]
    assert steps.count('class="segment"') == sum(r[f"{p}_us"] > 0 for r in rows for p in parts)
    used = [c for c in report["categories"].values() if c["count"] or c["time_us"]]
    assert categories.count('class="bar"') == len(used)
    assert top.count('class="bar"') == len(report["top_kernels"])
    assert gaps.count('class="bar"') == len(report["gaps"]["histogram"])
    first = report["top_kernels"][0]
    assert html.escape(f"{first['name']}: {fmt.duration(first['total_us'])}") in top
    widths = [float(w) for w in re.findall(r'class="bar"[^>]*width="([\d.]+)"', top)]
    assert widths == sorted(widths, reverse=True), "bars scale with total time"
    busy = report["gaps"]["strip"]["devices"]
    drawn = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)" '
                       r'fill="#4c8bf5"', strip)  # fmt: skip
    assert len(drawn) == sum(b > 0 for d in busy for b in d["busy"]), "a bar per busy bin"
    assert strip.count('class="mark"') == len(report["gaps"]["longest"]) == 5


@pytest.mark.parametrize("name", RECORDED)
def test_numbers_and_names_from_the_dict(name: str) -> None:
    report = recorded(name)
    page = parse(render_html([report]))
    text = "".join(page.text)
    for shown in (
        fmt.count(report["kernels"]["count"]),
        fmt.duration(report["kernels"]["time_us"]),
        fmt.duration(report["gpu_busy_us"]),
        fmt.percent(report["utilization"]),
        fmt.percent(report["gemm_share"]),
        f"Verdict: {report['verdict']['bound']}",
        report["verdict"]["reason"],
        *(f["message"] for f in report["findings"]),
        *(f["action"] for f in report["findings"]),
        *(f["message"] for f in report["integrity"]),
        *report["memcpy"]["by_kind"],
        *report["sync"]["by_name"],
    ):
        assert shown in text
    titles = page.attr("title")
    for kernel in report["top_kernels"]:
        assert short_name(kernel["name"]) in text
        if short_name(kernel["name"]) != kernel["name"]:
            assert kernel["name"] in titles, "full name as tooltip"


def test_hostile_trace_text_is_escaped_everywhere(tmp_path: Path) -> None:
    report = plant(tiny_trace(tmp_path))
    markup = render_html([report])
    page = parse(markup)
    assert_self_contained(markup, page)
    assert html.escape(SCRIPT) in markup
    text = "".join(page.text)
    # each planted string reads back exactly (escaped once, not twice)
    assert text.count(SCRIPT) >= 10
    assert "&lt;" not in text
    assert any(SCRIPT in t for t in page.attr("title"))


def test_several_reports_get_a_linked_comparison_table(tmp_path: Path) -> None:
    reports = [tiny_trace(tmp_path), zero_gpu_report(), recorded("patterns_h200.json.gz")]
    markup = render_html(reports)
    page = parse(markup)
    assert_self_contained(markup, page)
    assert page.headings[1] == "All 3 traces"
    assert page.attr("href") == ["#trace-1", "#trace-2", "#trace-3"]
    assert {"trace-1", "trace-2", "trace-3"} <= set(page.attr("id"))
    comparison = markup[: markup.index('id="trace-1"')]
    for report in reports:
        assert f">{report['verdict']['bound']}<" in comparison
        assert f">{fmt.duration(report['kernels']['time_us'])}<" in comparison


def test_zero_gpu_events_page_has_no_empty_plots() -> None:
    markup = render_html([zero_gpu_report()])
    page = parse(markup)
    assert "svg" not in page.tags
    text = "".join(page.text)
    assert "No kernels in this trace." in text
    assert "Integrity: no-gpu-events" in text
