"""The diff's views: Markdown (short, for a PR comment), self-contained HTML, terminal.

Each view is checked against the dict it draws: the verdict text, one table row per top mover
shown, every string escaped; the HTML holds no script and no external resource.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from gpuscope.diff.layout import BRIEF_MOVERS, diff_document
from gpuscope.errors import InputError
from tests.unit.diff.test_diff_reference import BERT, report_of
from tests.views import render_diff_html, render_diff_markdown, render_diff_terminal


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return report_of(BERT)


def test_markdown_is_short_with_a_movers_table(report: dict[str, Any]) -> None:
    text = render_diff_markdown(report)
    movers = [c for c in report["kernels"]["changes"] if c["mover"]][:BRIEF_MOVERS]
    rows = [line for line in text.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) == len(movers)
    for row, mover in zip(rows, movers, strict=True):
        assert f"{abs(mover['ratio']):.2f}×" in row
    assert "Verdict" in text and "cross-vendor" in text
    assert "<details>" not in text  # no full-name block: a PR comment stays short
    assert len(text.splitlines()) < 40


def test_html_is_self_contained_and_escaped(report: dict[str, Any]) -> None:
    page = render_diff_html(report)
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "src=" not in page and "@import" not in page
    assert "<svg" in page  # the movers chart
    assert "cutlass::Kernel2&lt;" in page and "cutlass::Kernel2<" not in page
    for change in report["kernels"]["changes"]:
        assert change["category"] in page


def test_terminal_shows_every_section(report: dict[str, Any]) -> None:
    text = render_diff_terminal(report, 160)
    for section in diff_document(report).sections:
        assert section.title in text
    assert "aten::addmm (30522, 141×512" in text  # names on one line: the head of the label


def test_a_dict_of_another_schema_is_refused() -> None:
    with pytest.raises(InputError, match=re.escape("gpuscope.diff/1")):
        render_diff_markdown({"schema": "gpuscope.analysis/1"})
