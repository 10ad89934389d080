"""When the GPU waits: gaps between kernels, launch statistics, synchronization."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import (
    Bar,
    Block,
    Cell,
    Chart,
    Facts,
    Lane,
    Mark,
    Section,
    Strip,
    Table,
    Text,
)
from gpuscope.document.names import short_name

Report = Mapping[str, Any]


GAP_CAUSES = {
    "launch": "launch: the host was dispatching the next work",
    "host_work": "host-work: the host ran its own code, no operator or runtime call open",
    "sync": "sync: a blocking synchronize drained the queue (wait, then relaunch)",
    "copy_staging": "copy-staging: the host staged a pageable copy",
    "startup": "start-up: module / code-object loads, library init, allocations, JIT",
    "host_late": "host-late: dispatched after the GPU went idle (no host timeline)",
    "queued": "queued: already launched, waiting on a dependency or the queue",
    "unknown": "unknown: the next kernel has no linked launch and no host calls are recorded",
}


def gaps_section(gaps: Mapping[str, Any]) -> Section:
    threshold = fmt.bound(gaps["micro_threshold_us"])
    items = [
        ("gaps", f"{fmt.count(gaps['count'])}, {fmt.duration(gaps['total_us'])} idle in all"),
        (f"micro (< {threshold})", _count_time(gaps["micro"])),
        (f"macro (≥ {threshold})", _count_time(gaps["macro"])),
    ]
    if gaps.get("largest"):
        items.append(("largest gap", largest_gap_text(gaps["largest"])))
    facts = Facts(tuple(items))
    histogram = gaps["histogram"]
    bars = tuple(Bar(_range(b), _range(b), float(b["count"]), _count_time(b)) for b in histogram)
    rows = tuple(
        (Cell(_range(b)), Cell(fmt.count(b["count"])), Cell(fmt.duration(b["time_us"])))
        for b in histogram
    )
    table = Table(("gap length", "count", "idle time"), rows, (False, True, True), "histogram")
    chart = Chart("Gaps between kernels by length (count)", bars)
    causes = Text(
        "Each gap's time by what the thread that launches the next work was doing: "
        + "; ".join(GAP_CAUSES[c] for c in gaps["attribution"] if c in GAP_CAUSES)
        + "."
    )
    strip = busy_strip(gaps)
    blocks: tuple[Block, ...] = (facts, *((strip,) if strip else ()), chart, table,
                                 _attribution(gaps), causes)  # fmt: skip
    return Section("Gaps between kernels", blocks)


def busy_strip(gaps: Mapping[str, Any]) -> Strip | None:
    """Each device's busy / idle over its span, the longest gaps numbered on it (the report's
    `gaps.strip` and `gaps.longest`); None for a report without them."""
    strip = gaps.get("strip")
    if not strip or not strip["devices"]:
        return None
    devices = [d["device"] for d in strip["devices"]]
    lanes = tuple(Lane(f"GPU {d['device']}", tuple(d["busy"])) for d in strip["devices"])
    bins = max(len(lane.busy) for lane in lanes)
    marks = tuple(
        Mark(
            float(gap["starts_at_us"]),
            float(gap["time_us"]),
            devices.index(gap["device"]) if gap["device"] in devices else 0,
            str(i),
            f"{largest_gap_text(gap)}, at {fmt.duration(gap['starts_at_us'])}",
        )
        for i, gap in enumerate(gaps.get("longest") or [], 1)
    )
    caption = (
        f"{bins} bins of {fmt.duration(strip['bin_us'])}, each as tall as the share of it the "
        "device was busy (blank: idle); the longest gaps numbered"
    )
    title = "Busy and idle over the GPU span"
    return Strip(title, bins * float(strip["bin_us"]), lanes, marks, caption)


def largest_gap_text(gap: Mapping[str, Any]) -> str:
    """`1.45 ms (89% of the span), host-wait, after gemm_kernel, before softmax_kernel`."""
    text = (
        f"{fmt.duration(gap['time_us'])} ({fmt.percent(gap['share_of_span'])} of the span), "
        f"{str(gap['cause']).replace('_', '-')}"
    )
    for key, word in (("before", "after"), ("after", "before")):
        name = str(gap.get(key) or "")
        if name:
            shown = name if name.startswith(("Memcpy", "Memset")) else short_name(name, 40)
            text += f", {word} {shown}"
    return text


def _range(bucket: Mapping[str, Any]) -> str:
    lo, hi = bucket["lo_us"], bucket["hi_us"]
    return f"≥ {fmt.bound(lo)}" if hi is None else f"{fmt.bound(lo)} – {fmt.bound(hi)}"


def _count_time(stats: Mapping[str, Any]) -> str:
    return f"{fmt.count(stats['count'])} · {fmt.duration(stats['time_us'])}"


def _attribution(gaps: Mapping[str, Any]) -> Table:
    rows = tuple(
        (
            Cell(cause.replace("_", "-"), full=GAP_CAUSES.get(cause, "")),
            Cell(fmt.count(a["count"])),
            Cell(fmt.duration(a["time_us"])),
            Cell(fmt.percent(a["share"])),
        )
        for cause, a in gaps["attribution"].items()
    )
    headers = ("cause", "gaps", "idle time", "share")
    return Table(headers, rows, (False, True, True, True), "why the GPU idled")


def launch_section(launch: Mapping[str, Any], kernels: Mapping[str, Any]) -> Section:
    short = kernels["short"] or {
        "count": None,
        "threshold_us": 10.0,
        "share": None,
        "time_us": None,
    }
    items = [
        (
            "kernels",
            f"{fmt.count(launch['kernels'])} ({fmt.count(launch['linked'])} linked "
            f"to a launch call)",
        ),
        ("kernels per ms", fmt.count(launch["kernels_per_ms"])),
        (
            "launch API",
            f"{fmt.count(launch['launch_calls'])} calls, "
            f"{fmt.duration(launch['launch_api_time_us'])} "
            f"(mean {fmt.duration(launch['launch_api_mean_us'])})",
        ),
        (
            "short kernels",
            f"{fmt.count(short['count'])} under {fmt.bound(short['threshold_us'])}"
            f" ({fmt.percent(short['share'])}, {fmt.duration(short['time_us'])})",
        ),
        ("graph launches", _graphs(launch)),
        ("queue delay", _percentiles(launch["queue_delay_us"])),
        ("steps", _steps(launch)),
    ]
    return Section("Launch statistics", (Facts(tuple(items)),))


def _graphs(launch: Mapping[str, Any]) -> str:
    if not launch["graph_launches"]:
        return "none"
    return (
        f"{fmt.count(launch['graph_launches'])} replaying {fmt.count(launch['graph_kernels'])} "
        f"kernels ({fmt.count(launch['kernels_per_graph_launch'])} per launch)"
    )


def _percentiles(delays: Mapping[str, float]) -> str:
    if not delays:
        return "— (no linked launches)"
    return ", ".join(f"{k} {fmt.duration(v)}" for k, v in delays.items())


def _steps(launch: Mapping[str, Any]) -> str:
    per_step = launch.get("kernels_per_step")
    if not per_step:
        return f"{fmt.count(launch['steps'])} (no ProfilerStep markers)"
    return (
        f"{fmt.count(launch['steps'])}; kernels per step mean {fmt.count(per_step['mean'])}, "
        f"min {fmt.count(per_step['min'])}, max {fmt.count(per_step['max'])}"
    )


def sync_section(sync: Mapping[str, Any]) -> Section:
    target = float(sync["target_share"])
    status = "over target" if sync["share"] > target else "within target"
    facts = Facts(
        (
            ("sync calls", fmt.count(sync["count"])),
            ("sync time", fmt.duration(sync["time_us"])),
            (
                "share of window",
                f"{fmt.percent(sync['share'])} (target < {fmt.percent(target)}: {status})",
            ),
        )
    )
    if not sync["by_name"]:
        return Section("Synchronization", (facts,))
    rows = tuple(
        (Cell(name, code=True), Cell(fmt.count(s["count"])), Cell(fmt.duration(s["time_us"])))
        for name, s in sync["by_name"].items()
    )
    table = Table(("call", "count", "time"), rows, (False, True, True), "by name")
    return Section("Synchronization", (facts, table))


def regions_section(regions: list[Mapping[str, Any]]) -> Section:
    """User ranges (record_function, NVTX, ROCTX): time in each and GPU busy time inside it."""
    rows = tuple(
        (
            Cell(("· " * int(r["depth"])) + short_name(r["name"]), full=r["name"], code=True),
            Cell(fmt.count(r["count"])),
            Cell(fmt.duration(r["total_us"])),
            Cell(fmt.duration(r["mean_us"])),
            Cell(fmt.percent(r["share_of_window"])),
            Cell(fmt.duration(r["gpu_busy_us"])),
        )
        for r in regions
    )
    headers = ("region", "count", "total", "mean", "share of window", "GPU busy inside")
    table = Table(headers, rows, (False, True, True, True, True, True))
    note = Text(
        "Regions are user ranges (record_function, NVTX, ROCTX), grouped by name (numbered names "
        "as #N); GPU busy inside = device busy time within the ranges' wall-clock intervals."
    )
    return Section("Regions", (table, note))
