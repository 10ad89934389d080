"""One analysis dict (schema `gpuscope.analysis/1`) → the document section of that trace.

Only display choices live here: what to show, in which order, with which units. Every number is
read from the dict; nothing is recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from gpuscope.analysis.layout._breakdown import (
    categories_section,
    copies_section,
    families_section,
    top_kernels_section,
)
from gpuscope.analysis.layout._causes import breakdown_section
from gpuscope.analysis.layout._evidence import evidence_blocks
from gpuscope.analysis.layout._timeline import (
    gaps_section,
    launch_section,
    regions_section,
    sync_section,
)
from gpuscope.document import units as fmt
from gpuscope.document.model import (
    Block,
    Cell,
    Facts,
    Level,
    Note,
    Section,
    Table,
    Text,
)

Report = Mapping[str, Any]

VERDICT_LEVEL: dict[str, Level] = {
    "gpu-bound": "ok",
    "cpu-bound": "warning",
    "sync-bound": "warning",
    "dependency-bound": "warning",
    "copy-bound": "warning",
    "underutilized": "warning",
    "startup-bound": "info",
    "no-gpu-activity": "info",
    "unknown": "info",
}
SEVERITY_LEVEL: dict[str, Level] = {"info": "info", "warning": "warning", "error": "critical"}


def trace_title(report: Report, index: int) -> str:
    return f"{index}. {PurePath(str(report['source']['path'])).name}"


def anchor(index: int) -> str:
    return f"trace-{index}"


def trace_section(report: Report, index: int) -> Section:
    """The whole per-trace section: warnings first, then the verdict, then the detail."""
    blocks: list[Block] = [*_warnings(report), _verdict(report["verdict"])]
    blocks += [
        _source(report),
        _headline(report),
        _findings(report["findings"]),
        *([found] if (found := breakdown_section(report)) is not None else []),
        categories_section(report),
        families_section(report),
        top_kernels_section(report["top_kernels"]),
        copies_section(report),
    ]
    if report.get("gaps"):
        blocks.append(gaps_section(report["gaps"]))
    if report.get("launch"):
        blocks.append(launch_section(report["launch"], report["kernels"]))
    if report.get("sync"):
        blocks.append(sync_section(report["sync"]))
    if report.get("regions"):
        blocks.append(regions_section(report["regions"]))
    blocks += extra_sections(report)
    return Section(trace_title(report, index), tuple(blocks), anchor=anchor(index))


def extra_sections(report: Report) -> list[Section]:
    """The sections of the analyses in `analysis.extras` whose part the report holds."""
    from gpuscope.analysis.extras import modules

    return [m.section(report[m.NAME]) for m in modules() if report.get(m.NAME)]


def _warnings(report: Report) -> list[Block]:
    source = report["source"]
    notes: list[Block] = []
    if source.get("truncated"):
        notes.append(Note("critical", "Truncated file", "analyzed up to the last complete event"))
    notes += [Note("warning", "Reader warning", str(w)) for w in source.get("warnings", [])]
    notes += [_integrity_note(flag) for flag in report["integrity"]]
    return notes


def _integrity_note(flag: Mapping[str, Any]) -> Note:
    affects = ", ".join(str(a) for a in flag.get("affects", []))
    text = str(flag["message"]) + (f" — unreliable here: {affects}" if affects else "")
    return Note("warning", f"Integrity: {flag['id']}", text)


def _verdict(verdict: Mapping[str, Any]) -> Note:
    bound = str(verdict["bound"])
    thresholds = "; ".join(
        f"{fmt.label(k)} {fmt.value(k, v)}" for k, v in verdict.get("thresholds", {}).items()
    )
    text = f"{verdict['reason']} (utilization {fmt.percent(verdict['utilization'])}"
    text += f"; thresholds: {thresholds})" if thresholds else ")"
    return Note(VERDICT_LEVEL.get(bound, "info"), f"Verdict: {bound}", text)


def _source(report: Report) -> Section:
    source = report["source"]
    devices = _devices_text(report)
    items = [
        ("path", str(source["path"])),
        ("format", f"{source['format']} ({source.get('schema') or 'unknown'} schema)"),
        ("vendor", str(source["vendor"])),
        ("devices", devices),
    ]
    files = source.get("files") or []
    if len(files) > 1:
        items.append(("files", ", ".join(PurePath(str(f)).name for f in files)))
    if source.get("provides"):
        items.append(("records", ", ".join(str(p) for p in source["provides"])))
    if source.get("rank") is not None:
        items.append(("rank", f"{source['rank']} of {fmt.count(source.get('world_size'))}"))
    events = source.get("event_counts", {})
    if events:
        items.append(("events", ", ".join(f"{k} {fmt.count(v)}" for k, v in events.items())))
    items.append(("report", f"{report['schema']}, gpuscope {report.get('gpuscope_version', '?')}"))
    return Section("Source", (Facts(tuple(items)),))


def _devices_text(report: Report) -> str:
    """The devices that ran work, each name once with a count; the idle ones as a number."""
    listed = report["source"]["devices"]
    if not listed:
        return "none recorded"
    active = {d.get("id") for d in report.get("devices") or [] if d.get("busy_us")}
    working = [d for d in listed if not active or d.get("id") in active]
    names: dict[str, list[str]] = {}
    for device in working:
        names.setdefault(_device(device).split(": ", 1)[-1], []).append(str(device["id"]))
    text = "; ".join(
        f"{name} ×{len(ids)} (ids {', '.join(ids)})" if len(ids) > 1 else f"{ids[0]}: {name}"
        for name, ids in names.items()
    )
    idle = len(listed) - len(working)
    return text + (f"; {idle} more without work in the trace" if idle else "")


def _device(device: Mapping[str, Any]) -> str:
    text = f"{device['id']}: {device['name']}" if device.get("name") else str(device["id"])
    details = [str(device[k]) for k in ("arch",) if device.get(k)]
    if device.get("compute_units"):
        details.append(f"{device['compute_units']} CUs/SMs")
    return f"{text} ({', '.join(details)})" if details else text


def _headline(report: Report) -> Section:
    kernels = report["kernels"]
    items = (
        (
            "kernels",
            f"{fmt.count(kernels['count'])} ({fmt.count(kernels['unique_names'])} unique names)",
        ),
        ("kernel time", _time_mean_median(kernels)),
        ("GPU busy", fmt.duration(report["gpu_busy_us"])),
        ("GPU span", fmt.duration(report["span_us"])),
        ("GPU idle", fmt.duration(report["idle_us"])),
        ("utilization", f"{fmt.percent(report['utilization'])} (busy / span)"),
        ("GEMM share", f"{fmt.percent(report['gemm_share'])} of kernel time"),
        ("profiled window", fmt.duration(report["window_us"])),
        ("CPU op time", _cpu(report.get("cpu"))),
    )
    blocks: list[Block] = [Facts(items)]
    if len(report["devices"]) > 1:
        blocks.append(_devices(report["devices"]))
    return Section("Headline numbers", tuple(blocks))


def _time_mean_median(kernels: Mapping[str, Any]) -> str:
    if kernels["time_us"] is None:
        return "— (the source has no kernel durations)"
    return (
        f"{fmt.duration(kernels['time_us'])} (mean {fmt.duration(kernels['mean_us'])}, "
        f"median {fmt.duration(kernels['median_us'])})"
    )


def _cpu(cpu: Mapping[str, Any] | None) -> str:
    if not cpu:
        return "— (no CPU operators in the source)"
    threads = cpu.get("threads", 0)
    return f"{fmt.duration(cpu.get('op_time_us', 0.0))} on {fmt.count(threads)} thread(s)"


def _devices(devices: list[Mapping[str, Any]]) -> Table:
    rows = tuple(
        (
            Cell(_device(d)),
            Cell(fmt.duration(d["busy_us"])),
            Cell(fmt.duration(d["span_us"])),
            Cell(fmt.duration(d["idle_us"])),
            Cell(fmt.percent(d["utilization"])),
        )
        for d in devices
    )
    headers = ("device", "busy", "span", "idle", "utilization")
    return Table(headers, rows, (False, True, True, True, True), "per device")


def _findings(findings: list[Mapping[str, Any]]) -> Section:
    if not findings:
        return Section("Findings", (Text("No rule fired on this trace."),))
    children = tuple(finding_section(f) for f in findings)
    return Section(f"Findings ({len(findings)})", children)


def finding_section(finding: Mapping[str, Any]) -> Section:
    """One finding: its message, its action, its evidence; the severity as the badge."""
    severity = str(finding["severity"])
    blocks: list[Block] = [Text(str(finding["message"])), Text(str(finding["action"]), "Action")]
    blocks += evidence_blocks(finding.get("evidence", {}))
    level = SEVERITY_LEVEL.get(severity, "info")
    return Section(str(finding["id"]), tuple(blocks), badge=severity, level=level)


def failed_section(failed: list[tuple[str, str]]) -> Section:
    """The inputs that could not be read, each with its error: a report of the others must say
    what it leaves out."""
    rows = tuple((Cell(path, code=True), Cell(error)) for path, error in failed)
    note = Note("critical", f"{len(failed)} inputs not read", "the report covers the others only")
    return Section("Inputs not read", (note, Table(("input", "error"), rows)), anchor="not-read")
