"""The terminal view of analysis reports (rich). A view of the report dicts: it computes nothing."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuscope.report._format import short_name
from gpuscope.report._rich import section as rich_section
from gpuscope.report._sections import extra_sections
from gpuscope.report._timeline import largest_gap_text

_SEVERITY_STYLE = {"warning": "bold yellow", "critical": "bold red", "info": "cyan"}
_VERDICT_STYLE = {
    "gpu-bound": "bold green",
    "cpu-bound": "bold yellow",
    "sync-bound": "bold red",
    "dependency-bound": "bold yellow",
    "underutilized": "bold yellow",
    "no-gpu-activity": "bold",
    "unknown": "bold",
}


def fmt_us(value: float | None) -> str:
    """µs with a unit that keeps 3–4 significant digits; "—" where the source has no time."""
    if value is None:
        return "—"
    if value >= 1_000_000:
        return f"{value / 1_000_000:,.3f} s"
    if value >= 1_000:
        return f"{value / 1_000:,.3f} ms"
    return f"{value:,.3f} µs" if value < 10 else f"{value:,.1f} µs"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f} %"


def short(name: str, width: int = 90) -> str:
    """A kernel name that fits `width` and still tells kernels apart: no `void `, no argument
    list or namespaces inside template arguments, the middle elided (head and tail kept)."""
    return short_name(name, max(width, 24))


def render_terminal(reports: list[dict[str, Any]], console: Console) -> None:
    for report in reports:
        console.print(_report(report, console.width))
    if len(reports) > 1:
        console.print(combined_table(reports))


def combined_table(reports: list[dict[str, Any]]) -> Table:
    table = Table(title="All traces", box=box.SIMPLE_HEAVY)
    for column in (
        "trace",
        "kernels",
        "kernel time",
        "GPU busy",
        "util",
        "GEMM",
        "verdict",
        "findings",
    ):
        table.add_column(column, justify="left" if column in ("trace", "verdict") else "right")
    for r in reports:
        table.add_row(
            Text(r["source"]["path"]),
            f"{r['kernels']['count']:,}",
            fmt_us(r["kernels"]["time_us"]),
            fmt_us(r["gpu_busy_us"]),
            pct(r["utilization"]),
            pct(r["gemm_share"]),
            Text(r["verdict"]["bound"], style=_VERDICT_STYLE.get(r["verdict"]["bound"], "")),
            str(len(r["findings"])),
        )
    return table


def _report(r: dict[str, Any], width: int) -> Panel:
    parts: list[Any] = [_headline(r), _verdict(r)]
    if r["integrity"]:
        parts.append(_integrity(r["integrity"]))
    if r["findings"]:
        parts.append(_findings(r["findings"]))
    if r["kernels"]["count"]:
        parts += [_categories(r), _top(r, width)]
    if r["gaps"]:
        parts.append(_timeline(r))
    if r["launch"]:
        parts.append(_launch(r))
    if r["memcpy"]["count"]:
        parts.append(_copies(r))
    if r["sync"] and r["sync"]["count"]:
        parts.append(_sync(r))
    if r.get("regions"):
        parts.append(_regions(r, width))
    parts += [rich_section(s, width) for s in extra_sections(r)]
    source = r["source"]
    devices = ", ".join(d["name"] or f"device {d['id']}" for d in source["devices"]) or "?"
    title = Text(f"{source['path']}  ·  {source['vendor']}  ·  {devices}")
    return Panel(Group(*parts), title=title, title_align="left", border_style="blue")


def _headline(r: dict[str, Any]) -> Table:
    table = Table.grid(padding=(0, 3))
    for _ in range(4):
        table.add_column()
    k = r["kernels"]
    m = r["memcpy"]
    table.add_row(
        f"kernels [bold]{k['count']:,}[/]",
        f"kernel time [bold]{fmt_us(k['time_us'])}[/]",
        f"GPU busy [bold]{fmt_us(r['gpu_busy_us'])}[/] of {fmt_us(r['span_us'])}",
        f"utilization [bold]{pct(r['utilization'])}[/]",
    )
    table.add_row(
        f"memcpy {m['count']:,} ({fmt_us(m['time_us'])})",
        f"GEMM share [bold]{pct(r['gemm_share'])}[/] (target < 60 %)",
        f"idle {fmt_us(r['idle_us'])}",
        f"window {fmt_us(r['window_us'])}",
    )
    return table


def _verdict(r: dict[str, Any]) -> Text:
    v = r["verdict"]
    text = Text("\nverdict: ")
    text.append(v["bound"].upper(), style=_VERDICT_STYLE.get(v["bound"], ""))
    text.append(f" — {v['reason']}")
    return text


def _integrity(flags: list[dict[str, Any]]) -> Table:
    table = Table(
        title="integrity: numbers to read with care", box=box.SIMPLE, title_justify="left"
    )
    table.add_column("flag", style="magenta")
    table.add_column("what it means")
    for flag in flags:
        table.add_row(flag["id"], Text(flag["message"]))
    return table


def _findings(findings: list[dict[str, Any]]) -> Table:
    table = Table(title="findings", box=box.SIMPLE, title_justify="left", show_lines=True)
    table.add_column("severity")
    table.add_column("finding")
    for f in findings:
        body = Text(f["message"], style="bold")
        body.append(f"\n→ {f['action']}", style="")
        table.add_row(Text(f["severity"], style=_SEVERITY_STYLE.get(f["severity"], "")), body)
    return table


def _categories(r: dict[str, Any]) -> Table:
    table = Table(title="time by category", box=box.SIMPLE, title_justify="left")
    for column in ("category", "count", "time", "share"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, c in r["categories"].items():
        if c["count"]:
            table.add_row(name, f"{c['count']:,}", fmt_us(c["time_us"]), pct(c["share"]))
    table.caption = f"unclassified: {pct(r['unclassified_share'])}"
    return table


def _top(r: dict[str, Any], width: int) -> Table:
    timed = r["kernels"]["time_us"] is not None
    title = "top kernels by total time" if timed else "top kernels by dispatches (no durations)"
    table = Table(title=title, box=box.SIMPLE, title_justify="left")
    # the numbers keep their width (≈ 62 columns with borders); the name gets the rest and
    # wraps onto a second line rather than losing the part that tells kernels apart
    name_width = max(24, width - 66)
    table.add_column("kernel", overflow="fold", max_width=name_width)
    for column in ("category", "count", "total", "mean", "share"):
        table.add_column(column, justify="left" if column == "category" else "right", no_wrap=True)
    for k in r["top_kernels"]:
        table.add_row(
            Text(short(k["name"], 2 * name_width)),
            k["category"],
            f"{k['count']:,}",
            fmt_us(k["total_us"]),
            fmt_us(k["mean_us"]),
            pct(k["share"]),
        )
    return table


def _pairs(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, box=box.SIMPLE, title_justify="left", show_header=False)
    table.add_column("what", style="dim")
    table.add_column("value")
    for what, value in rows:
        table.add_row(what, value)
    return table


def _regions(r: dict[str, Any], width: int) -> Table:
    table = Table(title="regions (user ranges)", box=box.SIMPLE, title_justify="left")
    name_width = max(20, width - 56)
    table.add_column("region", overflow="fold", max_width=name_width)
    for column in ("count", "total", "share", "GPU busy in"):
        table.add_column(column, justify="right", no_wrap=True)
    for region in r["regions"][:12]:
        table.add_row(
            Text("· " * region["depth"] + short(region["name"], 2 * name_width)),
            f"{region['count']:,}",
            fmt_us(region["total_us"]),
            pct(region["share_of_window"]),
            fmt_us(region["gpu_busy_us"]),
        )
    return table


def _timeline(r: dict[str, Any]) -> Table:
    g = r["gaps"]
    causes = "  ".join(
        f"{cause.replace('_', '-')} {pct(a['share'])}" for cause, a in g["attribution"].items()
    )
    return _pairs(
        "device idle gaps",
        [
            ("gaps", f"{g['count']:,} · {fmt_us(g['total_us'])}"),
            (
                f"micro (< {g['micro_threshold_us']:g} µs)",
                f"{g['micro']['count']:,} · {fmt_us(g['micro']['time_us'])}",
            ),
            ("macro", f"{g['macro']['count']:,} · {fmt_us(g['macro']['time_us'])}"),
            ("idle time waiting on", causes),
            *([("largest gap", largest_gap_text(g["largest"]))] if g.get("largest") else []),
        ],
    )


def _launch(r: dict[str, Any]) -> Table:
    launch = r["launch"]
    queue = launch["queue_delay_us"]
    short_kernels = r["kernels"]["short"] or {"count": 0, "share": None, "threshold_us": 10.0}
    rows = [
        ("kernels per ms", f"{launch['kernels_per_ms']:.2f}"),
        (
            "launch API",
            f"{launch['launch_calls']:,} calls · {fmt_us(launch['launch_api_time_us'])}",
        ),
        (
            "launch → start",
            f"p50 {fmt_us(queue['p50'])} · p90 {fmt_us(queue['p90'])} · max {fmt_us(queue['max'])}"
            if queue
            else "–",
        ),
        (
            "short kernels",
            f"{short_kernels['count']:,} ({pct(short_kernels['share'])}) under "
            f"{short_kernels['threshold_us']:g} µs",
        ),
    ]
    if launch["graph_launches"]:
        rows.append(
            (
                "graph launches",
                f"{launch['graph_launches']:,} → {launch['graph_kernels']:,} kernels",
            )
        )
    per_step = launch.get("kernels_per_step")
    if per_step:
        rows.append(("kernels per step", f"{per_step['mean']:.0f} over {launch['steps']} steps"))
    return _pairs("launches", rows)


def _copies(r: dict[str, Any]) -> Table:
    table = Table(title="memory copies", box=box.SIMPLE, title_justify="left")
    for column in ("kind", "count", "bytes", "time", "pageable", "pinned"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, c in r["memcpy"]["by_kind"].items():
        table.add_row(
            kind,
            f"{c['count']:,}",
            f"{c['bytes']:,}",
            fmt_us(c["time_us"]),
            str(c["pageable"]),
            str(c["pinned"]),
        )
    return table


def _sync(r: dict[str, Any]) -> Table:
    s = r["sync"]
    table = Table(
        title=f"synchronization: {fmt_us(s['time_us'])}, {pct(s['share'])} of the window "
        f"(target < {pct(s['target_share'])})",
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("call")
    table.add_column("count", justify="right")
    table.add_column("time", justify="right")
    for name, v in list(s["by_name"].items())[:6]:
        table.add_row(Text(name), f"{v['count']:,}", fmt_us(v["time_us"]))
    return table
