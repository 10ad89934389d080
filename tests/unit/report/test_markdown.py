"""`render_markdown`: every section of the brief, numbers from the dict, well-formed GFM tables,
hostile trace text escaped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpuscope.document import units as fmt
from gpuscope.document.names import short_name
from gpuscope.errors import InputError
from gpuscope.report.markdown import code
from tests.unit.report.reports import plant, recorded, tiny_trace, zero_gpu_report
from tests.views import render_markdown

RECORDED = ("llama_decode_h200.json.gz", "patterns_h200.json.gz", "llama_compiled_h200.json.gz")
SECTIONS = (
    "### Source",
    "### Headline numbers",
    "### Findings",
    "### Categories",
    "### Top kernels",
    "### Memory copies",
    "### Gaps between kernels",
    "### Launch statistics",
    "### Synchronization",
)
FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
CELL_SPLIT = re.compile(r"(?<!\\)\|")


def outside_code(md: str) -> str:
    """The text a Markdown renderer would parse as markup (fenced blocks and code spans removed)."""
    return CODE_SPAN.sub("", FENCE.sub("", md))


def tables(md: str) -> list[list[str]]:
    """Consecutive lines starting with `|` (outside fenced blocks), one list per table."""
    found: list[list[str]] = []
    current: list[str] = []
    for line in [*FENCE.sub("", md).splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    return found


def assert_tables_well_formed(md: str) -> None:
    for table in tables(md):
        widths = {len(CELL_SPLIT.split(row)) for row in table}
        assert len(widths) == 1, "ragged table:\n" + "\n".join(table)
        assert re.fullmatch(r"\|( -{3}:? \|)+", table[1]), table[1]


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_trace_has_every_section(name: str) -> None:
    md = render_markdown([recorded(name)])
    assert md.startswith("# gpuscope analysis\n")
    assert f"## 1. {name}" in md
    positions = [md.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert "## All " not in md
    assert_tables_well_formed(md)


@pytest.mark.parametrize("name", RECORDED)
def test_numbers_from_the_dict_appear_formatted(name: str) -> None:
    report = recorded(name)
    md = render_markdown([report])
    expected = [
        f"**kernels:** {fmt.count(report['kernels']['count'])} (",
        f"**kernel time:** {fmt.duration(report['kernels']['time_us'])} (",
        f"**GPU busy:** {fmt.duration(report['gpu_busy_us'])}",
        f"**GPU span:** {fmt.duration(report['span_us'])}",
        f"**GPU idle:** {fmt.duration(report['idle_us'])}",
        f"**utilization:** {fmt.percent(report['utilization'])}",
        f"**GEMM share:** {fmt.percent(report['gemm_share'])}",
        f"**profiled window:** {fmt.duration(report['window_us'])}",
        f"Unclassified (other): {fmt.percent(report['unclassified_share'])}",
        f"**Verdict: {report['verdict']['bound']}**",
        f"**sync time:** {fmt.duration(report['sync']['time_us'])}",
    ]
    missing = [e for e in expected if e not in md]
    assert not missing


@pytest.mark.parametrize("name", RECORDED)
def test_top_kernels_rows_follow_the_dict(name: str) -> None:
    report = recorded(name)
    md = render_markdown([report])
    for i, k in enumerate(report["top_kernels"], 1):
        row = (
            f"| {i} | {code(short_name(k['name']))} | {k['category']} | "
            f"{fmt.count(k['count'])} | {fmt.duration(k['total_us'])} | "
            f"{fmt.duration(k['mean_us'])} |"
        )
        assert row in md
        if short_name(k["name"]) != k["name"]:
            assert f"\n{i}. {k['name']}\n" in md, "full name listed under the table"


@pytest.mark.parametrize("name", RECORDED)
def test_findings_integrity_copies_gaps_and_sync_are_shown(name: str) -> None:
    report = recorded(name)
    md = render_markdown([report])
    for finding in report["findings"]:
        assert f"#### {finding['id']} `{finding['severity']}`" in md
    for flag in report["integrity"]:
        assert f"**Integrity: {flag['id']}**" in md
    for kind, c in report["memcpy"]["by_kind"].items():
        assert f"| {kind} | {fmt.count(c['count'])} | {fmt.nbytes(c['bytes'])} |" in md
    for bucket in report["gaps"]["histogram"]:
        assert f" | {fmt.count(bucket['count'])} | {fmt.duration(bucket['time_us'])} |" in md
    for cause in ("launch", "host-work", "sync", "queued", "unknown"):
        assert f"| {cause} |" in md
    for call, s in report["sync"]["by_name"].items():
        assert f"| `{call}` | {fmt.count(s['count'])} | {fmt.duration(s['time_us'])} |" in md
    for key, v in report["launch"]["queue_delay_us"].items():
        assert f"{key} {fmt.duration(v)}" in md


def test_finding_evidence_becomes_facts_and_tables() -> None:
    report = recorded("patterns_h200.json.gz")
    md = render_markdown([report])
    attention = next(f for f in report["findings"] if f["id"] == "manual-attention")
    for op, stats in attention["evidence"]["ops"].items():
        assert f"| `{op}` | {fmt.count(stats['count'])} |" in md
    assert "*ops*" in md


def test_several_reports_get_a_comparison_table_first(tmp_path: Path) -> None:
    reports = [tiny_trace(tmp_path), zero_gpu_report(), tiny_trace(tmp_path)]
    md = render_markdown(reports)
    comparison = md.index("## All ")
    headings = [md.index(f"## {i}. ") for i in (1, 2, 3)]
    assert comparison < headings[0] < headings[1] < headings[2]
    rows = [r for r in tables(md)[0][2:]]
    assert len(rows) == 3
    for i, (row, report) in enumerate(zip(rows, reports, strict=True), 1):
        assert f"](#trace-{i})" in row
        assert f'<a id="trace-{i}"></a>' in md
        assert f"| {fmt.count(report['kernels']['count'])} |" in row
        assert f"| {report['verdict']['bound']} |" in row
        assert f"| {fmt.percent(report['gemm_share'])} |" in row
    assert_tables_well_formed(md)


def test_zero_gpu_events_report_says_so() -> None:
    md = render_markdown([zero_gpu_report()])
    assert "No kernels in this trace." in md
    assert "No GPU activity to classify." in md
    assert "No rule fired on this trace." in md
    assert "**Integrity: no-gpu-events**" in md
    assert "**Verdict: no-gpu-activity**" in md
    assert "— (no linked launches)" in md
    assert_tables_well_formed(md)


def test_hostile_trace_text_cannot_become_markup(tmp_path: Path) -> None:
    report = plant(tiny_trace(tmp_path))
    md = render_markdown([report])
    markup = outside_code(md)
    assert "<script" not in markup
    assert "<img" not in markup
    assert "&lt;script>alert(1)&lt;/script>" in markup
    assert_tables_well_formed(md)
    # full kernel names survive verbatim inside the fenced block
    assert f"1. {report['top_kernels'][0]['name']}" in md


def test_code_spans_hold_backticks_and_pipes() -> None:
    assert code("plain") == "`plain`"
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert code("a|b") == "`a\\|b`"
    assert code("a|b", table=False) == "`a|b`"


def test_unknown_input_is_refused() -> None:
    with pytest.raises(InputError, match="at least one"):
        render_markdown([])
    bad: dict[str, Any] = {"schema": "something/2"}
    with pytest.raises(InputError, match=r"gpuscope\.analysis/1"):
        render_markdown([bad])
