"""How the views show the communication part of a report (from the dict alone)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuscope.document import units as fmt
from gpuscope.document.model import Block, Cell, Facts, Section, Table, Text
from gpuscope.document.names import short_name

Part = Mapping[str, Any]


def section(part: Part) -> Section:
    blocks: list[Block] = [_facts(part)]
    shown = part["exposure"]
    if shown is not None and len(shown["by_stream"]) > 1:
        blocks.append(_streams(shown))
    blocks.append(_collectives(part))
    if part["variance"]["top"]:
        blocks.append(_variance(part["variance"]))
    if part["bandwidth"] is not None:
        blocks.append(_bandwidth(part["bandwidth"]))
    notes = [part["compute"], *part["notes"]]
    if part["sizes"]["note"]:
        notes.append(part["sizes"]["note"])
    blocks.append(Text("; ".join(_sentence(n) for n in notes), label="Notes"))
    return Section("Communication", tuple(blocks))


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _facts(part: Part) -> Facts:
    items = [
        (
            "communication kernels",
            f"{fmt.count(part['kernels'])}, {fmt.duration(part['time_us'])} "
            f"({fmt.percent(part['share_of_kernel_time'])} of kernel time)",
        )
    ]
    shown = part["exposure"]
    if shown is None:
        return Facts(tuple(items))
    items += [
        (
            "exposed",
            f"{fmt.duration(shown['exposed_us'])} ({fmt.percent(shown['exposed_share_of_span'])}"
            f" of the GPU span of {fmt.duration(shown['span_us'])})",
        ),
        (
            "overlapped with compute",
            f"{fmt.duration(shown['overlapped_us'])} "
            f"({fmt.percent(shown['overlapped_share'])} of communication time)",
        ),
        ("alone on the GPU (no copy either)", fmt.duration(shown["exposed_vs_all_gpu_work_us"])),
    ]
    steps = shown["steps"]
    if steps:
        items.append(
            (
                "exposed in steps",
                f"{fmt.duration(steps['exposed_us'])} of {fmt.duration(steps['time_us'])} "
                f"({fmt.percent(steps['exposed_share_of_steps'])}, {fmt.count(steps['count'])} "
                "ProfilerStep ranges)",
            )
        )
    return Facts(tuple(items))


def _streams(shown: Part) -> Table:
    rows = tuple(
        (
            Cell(f"{s['device']}:{s['stream']}"),
            Cell(fmt.count(s["kernels"])),
            Cell(fmt.duration(s["communication_us"])),
            Cell(fmt.duration(s["exposed_us"])),
            Cell(fmt.percent(s["exposed_share_of_span"])),
        )
        for s in shown["by_stream"]
    )
    headers = ("device:stream", "kernels", "communication", "exposed", "of span")
    return Table(headers, rows, (False, True, True, True, True), "by stream")


def _collectives(part: Part) -> Table:
    timed = part["exposure"] is not None
    rows = tuple(_collective_row(c, timed) for c in part["collectives"])
    headers = ("collective", "kernel", "count", "total", "p50", "p90", "exposed", "size", "busbw")
    numeric = (False, False, True, True, True, True, True, True, True)
    caption = (
        "per collective; busbw: nccl-tests bus bandwidth over the calls of known size (their "
        "bytes × bus factor / their time)"
    )
    return Table(headers, rows, numeric, caption)


def _collective_row(c: Part, timed: bool) -> tuple[Cell, ...]:
    spec = ", ".join(
        str(v) for v in (c["dtype"], c["algorithm"], c["protocol"], c["reduction"]) if v
    )
    kind = c["kind"].replace("_", "-") + (f" ({spec})" if spec else "")
    busbw = f"{c['busbw_gbps']:,.1f} GB/s" if c["busbw_gbps"] is not None else "—"
    return (
        Cell(kind, full=c["launched_by"] or ""),
        Cell(short_name(c["kernel"]), full=c["kernel"], code=True, name=True),
        Cell(fmt.count(c["count"])),
        Cell(fmt.duration(c["time_us"])),
        Cell(fmt.duration(c["p50_us"])),
        Cell(fmt.duration(c["p90_us"])),
        Cell(fmt.duration(c["exposed_us"]) if timed else "—"),
        Cell(_size_range(c)),
        Cell(busbw),
    )


def _size_range(c: Part) -> str:
    low, high = c["bytes_min"], c["bytes_max"]
    if low is None:
        return "unknown"
    return fmt.nbytes(low) if low == high else f"{fmt.nbytes(low)} – {fmt.nbytes(high)}"


def _variance(variance: Part) -> Table:
    rows = tuple(
        (
            Cell(b["kind"].replace("_", "-")),
            Cell(short_name(b["kernel"]), full=b["kernel"], code=True),
            Cell(
                fmt.nbytes(b["bytes"])
                if b["bytes"] is not None
                else f"call #{b['position_in_step']} of the step"
            ),
            Cell(fmt.count(b["count"])),
            Cell(fmt.duration(b["p50_us"])),
            Cell(fmt.duration(b["max_us"])),
            Cell(fmt.duration(b["excess_us"])),
            Cell(b["slowest_step"] or "—"),
        )
        for b in variance["top"]
    )
    headers = (
        "collective",
        "kernel",
        "identical by",
        "calls",
        "p50",
        "max",
        "above p50",
        "slowest",
    )
    numeric = (False, False, False, True, True, True, True, False)
    caption = (
        f"identical calls whose time varies ({variance['grouping']}; p90 ≥ "
        f"{variance['thresholds']['p90_over_p50']}× or max ≥ "
        f"{variance['thresholds']['max_over_p50']}× the median)"
    )
    return Table(headers, rows, numeric, caption)


def _bandwidth(bandwidth: Part) -> Table:
    rows = tuple(
        (
            Cell(r["kind"].replace("_", "-") + (f" [{r['group']}]" if r["group"] else "")),
            Cell(fmt.count(r["ranks"])),
            Cell(fmt.nbytes(r["bytes"])),
            Cell(fmt.count(r["count"])),
            Cell(fmt.duration(r["p50_us"])),
            Cell(f"{r['busbw_gbps']:,.1f} GB/s"),
            Cell(fmt.duration(r["envelope_us"])),
            Cell("slow" if r["slow"] else ""),
        )
        for r in bandwidth["by_size"]
    )
    headers = ("collective", "ranks", "size", "calls", "p50", "busbw", "envelope", "")
    numeric = (False, True, True, True, True, True, True, False)
    return Table(headers, rows, numeric, "bandwidth by message size: " + bandwidth["assumption"])
