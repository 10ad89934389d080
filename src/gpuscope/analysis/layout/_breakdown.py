"""Where the GPU time goes: categories, kernel families, top kernels, memory copies (sections of a
trace)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import Bar, Cell, Chart, Facts, Section, Table, Text
from gpuscope.document.names import short_name

Report = Mapping[str, Any]


def categories_section(report: Report) -> Section:
    used = [(k, v) for k, v in report["categories"].items() if v["count"] or v["time_us"]]
    unclassified = fmt.percent(report["unclassified_share"])
    note = Text(f"Unclassified (other): {unclassified} of GPU time. Empty categories not listed.")
    if not used:
        return Section("Categories", (Text("No GPU activity to classify."),))
    timed = [(k, v) for k, v in used if v["time_us"] is not None]
    chart = Chart("GPU time by category", tuple(_category_bar(k, v) for k, v in timed))
    rows = tuple(
        (
            Cell(k),
            Cell(fmt.count(v["count"])),
            Cell(fmt.duration(v["time_us"])),
            Cell(fmt.percent(v["share"])),
        )
        for k, v in used
    )
    table = Table(("category", "count", "time", "share"), rows, (False, True, True, True))
    return Section("Categories", (chart, table, note) if timed else (table, note))


def _category_bar(name: str, cat: Mapping[str, Any]) -> Bar:
    text = f"{fmt.duration(cat['time_us'])} · {fmt.percent(cat['share'])}"
    return Bar(name, name, float(cat["time_us"]), text)


def families_section(report: Report) -> Section:
    """Kernel time by the library or compiler that named the kernels (ggml, Tensile, XLA …), with
    each family's kernel of most time: "ggml · mul_mat_q · 90 %"."""
    families = report.get("families") or {}
    if not families:
        return Section("Kernel families", (Text("No kernels in this trace."),))
    rows = tuple(
        (
            Cell(name),
            Cell(short_name(str(f["top"])), full=str(f["top"]), code=True, name=True),
            Cell(fmt.count(f["count"])),
            Cell(fmt.duration(f["time_us"])),
            Cell(fmt.percent(f["share"])),
        )
        for name, f in families.items()
    )
    table = Table(("family", "top kernel", "count", "time", "share"), rows,
                  (False, False, True, True, True))  # fmt: skip
    note = Text(
        "Share of kernel time. generic: named after an operation, library unknown; other: no "
        "rule names the library (docs/analyze.md lists the families)."
    )
    return Section("Kernel families", (table, note))


def families_line(report: Report, count: int = 3) -> str:
    """The largest families in one line: "ggml 90.3% (mul_mat_q) · Tensile 1.1% (Cijk_…)"."""
    families = list((report.get("families") or {}).items())[:count]
    return " · ".join(
        f"{name} {fmt.percent(f['share'])} ({short_name(str(f['top']), 36)})"
        for name, f in families
    )


def top_kernels_section(top: list[Mapping[str, Any]]) -> Section:
    if not top:
        return Section("Top kernels", (Text("No kernels in this trace."),))
    bars = tuple(
        Bar(short_name(k["name"], 48), k["name"], float(k["total_us"]), _share_text(k))
        for k in top
        if k["total_us"] is not None
    )
    rows = tuple(_kernel_row(i, k) for i, k in enumerate(top, 1))
    headers = ("#", "kernel", "category", "count", "total", "mean", "min", "max", "share")
    table = Table(headers, rows, (True, False, False, True, True, True, True, True, True))
    if not bars:
        return Section("Top kernels (by dispatch count: the source has no durations)", (table,))
    return Section("Top kernels", (Chart("Total time of the top kernels", bars), table))


def _share_text(kernel: Mapping[str, Any]) -> str:
    return f"{fmt.duration(kernel['total_us'])} · {fmt.percent(kernel['share'])}"


def _kernel_row(index: int, k: Mapping[str, Any]) -> tuple[Cell, ...]:
    times = (fmt.duration(k[key]) for key in ("total_us", "mean_us", "min_us", "max_us"))
    return (
        Cell(str(index)),
        Cell(short_name(k["name"]), full=k["name"], code=True, name=True),
        Cell(str(k["category"])),
        Cell(fmt.count(k["count"])),
        *(Cell(t) for t in times),
        Cell(fmt.percent(k["share"])),
    )


def copies_section(report: Report) -> Section:
    memcpy, memset = report["memcpy"], report["memset"]
    totals = Facts(
        (
            ("memcpy", _count_bytes_time(memcpy)),
            ("memset", _count_bytes_time(memset)),
        )
    )
    if not memcpy["by_kind"]:
        return Section("Memory copies", (totals,))
    rows = tuple(
        (
            Cell(kind),
            Cell(fmt.count(c["count"])),
            Cell(fmt.nbytes(c["bytes"])),
            Cell(fmt.duration(c["time_us"])),
            Cell(fmt.count(c["pageable"])),
            Cell(fmt.count(c["pinned"])),
        )
        for kind, c in memcpy["by_kind"].items()
    )
    headers = ("kind", "count", "bytes", "time", "pageable", "pinned")
    table = Table(headers, rows, (False, True, True, True, True, True), "memcpy by kind")
    return Section("Memory copies", (totals, table))


def _count_bytes_time(stats: Mapping[str, Any]) -> str:
    return (
        f"{fmt.count(stats['count'])} ops, {fmt.nbytes(stats['bytes'])}, "
        f"{fmt.duration(stats['time_us'])}"
    )
