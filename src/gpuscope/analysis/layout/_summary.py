"""One trace on one screen: the verdict with its qualifier, the few findings that could save the
most time (one action per cause), the top kernels and the categories. What `gpuscope analyze`
prints by default; `--full` (and every file output) adds every other section.

Kept to about 100 lines at 80 columns: a performance engineer reads it top to bottom.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from gpuscope.analysis.layout._breakdown import families_line
from gpuscope.analysis.layout._build import footer
from gpuscope.analysis.layout._causes import breakdown_line
from gpuscope.analysis.layout._sections import SEVERITY_LEVEL, VERDICT_LEVEL
from gpuscope.document import units as fmt
from gpuscope.document.model import Block, Cell, Document, Note, Section, Table, Text
from gpuscope.document.names import short_name

Report = Mapping[str, Any]
FINDINGS = 5  # at most, ranked by the time at stake
KERNELS = 10
SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}
ABOUT_THE_PROFILE = ("profiler",)  # causes that are not the program's


def summary_document(report: Report) -> Document:
    sections = [_glance(report), _findings(report["findings"])]
    if report["kernels"]["count"]:
        sections += [_top_kernels(report), _categories(report)]
    tail = "--full prints every section (gaps, launches, syncs, steps, host operators, …)"
    return Document(
        f"gpuscope · {PurePath(str(report['source']['path'])).name}",
        tuple(sections),
        _subtitle(report),
        f"{tail} · {footer([report])}",
    )


def _subtitle(report: Report) -> str:
    source = report["source"]
    program = report.get("program") or {}
    parts = (program.get("label"), source["format"], _devices(report) or source["vendor"])
    return " · ".join(str(p) for p in parts if p)


def _devices(report: Report) -> str:
    """The devices that ran work, once each with a count: `NVIDIA H200 ×2`."""
    active = {d.get("id") for d in report.get("devices") or [] if d.get("busy_us")}
    names: dict[str, int] = {}
    for device in report["source"]["devices"]:
        if active and device.get("id") not in active:
            continue
        name = str(device.get("name") or f"device {device.get('id')}")
        names[name] = names.get(name, 0) + 1
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in names.items())


# -- at a glance -------------------------------------------------------------------------------


def _glance(report: Report) -> Section:
    verdict = report["verdict"]
    bound = str(verdict["bound"])
    level = VERDICT_LEVEL.get(bound, "info")
    blocks: list[Block] = [Note(level, verdict_title(report), str(verdict["reason"]))]
    line = breakdown_line(report)
    if line:
        blocks.append(Text(line, "Breakdown"))
    blocks.append(Text(_headline(report)))
    for flag in report["integrity"]:
        blocks.append(Note("warning", f"integrity: {flag['id']}", str(flag["message"])))
    if report["source"].get("truncated"):
        blocks.append(Note("critical", "truncated file", "read up to the last complete event"))
    return Section("At a glance", tuple(blocks))


def verdict_title(report: Report) -> str:
    """The verdict with the qualifier it needs: `gpu-bound outside one 463 ms gap` — never a bare
    `gpu-bound` beside a utilization of 2 %."""
    verdict = report["verdict"]
    bound = str(verdict["bound"])
    outside = verdict.get("utilization_outside_largest_gap")
    largest = (report.get("gaps") or {}).get("largest")
    if verdict.get("steady_from_us") is not None:
        return f"{bound} after a {fmt.duration(verdict['steady_from_us'])} start"
    if outside is not None and largest:
        cause = str(largest.get("cause") or "").replace("_", "-")
        return f"{bound} outside one {fmt.duration(largest['time_us'])} {cause} gap"
    return bound


def _headline(report: Report) -> str:
    kernels, copies = report["kernels"], report["memcpy"]
    parts = [f"{fmt.count(kernels['count'])} kernels"]
    if kernels["time_us"] is not None:
        parts[0] += f" in {fmt.duration(kernels['time_us'])}"
    if report["gpu_busy_us"] is not None:
        devices = report.get("devices") or []
        span = sum(d["span_us"] for d in devices) if len(devices) > 1 else report["span_us"]
        over = f" ({len(devices)} devices' spans summed)" if len(devices) > 1 else ""
        parts.append(
            f"GPU busy {fmt.duration(report['gpu_busy_us'])} of {fmt.duration(span)}{over}"
            f" ({fmt.percent(report['utilization'])})"
        )
    if copies["count"]:
        parts.append(
            f"{fmt.count(copies['count'])} copy operations, {fmt.duration(copies['time_us'])}"
        )
    if report.get("gemm_share") is not None and kernels["count"]:
        parts.append(f"GEMMs {fmt.percent(report['gemm_share'])} of kernel time")
    return " · ".join(parts)


# -- findings: the few that could save the most time, one action per cause ---------------------


def ranked(findings: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Findings by the time at stake (largest first; those without an estimate after, by
    severity; the profiler's own overhead, which is no cost of the program, last), keeping the
    order the analyses gave among equals."""

    def key(item: tuple[int, Mapping[str, Any]]) -> tuple[int, float, int, int]:
        index, f = item
        impact = f.get("impact_us")
        severity = SEVERITY_RANK.get(str(f.get("severity")), 3)
        if f.get("cause") in ABOUT_THE_PROFILE:
            return (2, 0.0, severity, index)
        if impact is None:
            return (1, 0.0, severity, index)
        return (0, -float(impact), severity, index)

    return [f for _, f in sorted(enumerate(findings), key=key)]


def _findings(findings: Sequence[Mapping[str, Any]]) -> Section:
    if not findings:
        return Section("Findings", (Text("No rule fired on this trace."),))
    groups = _by_cause(ranked(findings))
    shown = groups[:FINDINGS]
    blocks: list[Block] = []
    for group in shown:
        blocks += _group_blocks(group)
    rest = sum(len(g) for g in groups[FINDINGS:])
    if rest:
        blocks.append(Text(f"{rest} more findings of less time at stake: --full"))
    title = f"Findings ({len(findings)}, by the time at stake)"
    return Section(title, tuple(blocks))


def _by_cause(findings: list[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Findings grouped by their cause, in the order of each group's first finding."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for f in findings:
        groups.setdefault(str(f.get("cause") or f["id"]), []).append(f)
    return list(groups.values())


def _group_blocks(group: list[Mapping[str, Any]]) -> list[Block]:
    lead = group[0]
    level = SEVERITY_LEVEL.get(str(lead["severity"]), "info")
    impact = lead.get("impact_us")
    title = f"{lead['id']} ({fmt.duration(impact)} at stake)" if impact else str(lead["id"])
    blocks: list[Block] = [Note(level, title, str(lead["message"]))]
    blocks.append(Text(str(lead["action"]), "Action"))
    if len(group) > 1:
        others = ", ".join(str(f["id"]) for f in group[1:])
        blocks.append(Text(f"the same cause also shows as {others} (--full)"))
    return blocks


# -- where the time goes -----------------------------------------------------------------------


def _top_kernels(report: Report) -> Section:
    top = report["top_kernels"][:KERNELS]
    timed = report["kernels"]["time_us"] is not None
    rows = tuple(
        (
            Cell(short_name(str(k["name"])), full=str(k["name"]), code=True, name=True),
            Cell(str(k["category"])),
            Cell(fmt.count(k["count"])),
            Cell(fmt.duration(k["total_us"])),
            Cell(fmt.percent(k["share"])),
        )
        for k in top
    )
    table = Table(("kernel", "category", "count", "total", "share"), rows,
                  (False, False, True, True, True), optional=(0, 1, 0, 0, 0))  # fmt: skip
    more = len(report["top_kernels"]) - len(top)
    title = "Top kernels" if timed else "Top kernels (by dispatches: no durations)"
    blocks: list[Block] = [table]
    if more > 0:
        blocks.append(Text(f"{more} more in --full"))
    return Section(title, tuple(blocks))


def _categories(report: Report) -> Section:
    used = [(k, v) for k, v in report["categories"].items() if v["count"]]
    rows = tuple(
        (Cell(k), Cell(fmt.count(v["count"])), Cell(fmt.duration(v["time_us"])),
         Cell(fmt.percent(v["share"])))
        for k, v in used
    )  # fmt: skip
    caption = f"unclassified: {fmt.percent(report['unclassified_share'])} of GPU time"
    copy_kernels = report["categories"]["memcpy"]["count"] - report["memcpy"]["count"]
    if copy_kernels > 0:  # copies done by kernels (e.g. __amd_rocclr_copyBuffer) count here too
        caption += (
            f"; memcpy counts {fmt.count(report['memcpy']['count'])} copy operations and "
            f"{fmt.count(copy_kernels)} copy kernels"
        )
    table = Table(("category", "count", "time", "share"), rows, (False, True, True, True))
    families = families_line(report)
    blocks = (table, Text(caption), *((Text(families, "Kernel families"),) if families else ()))
    return Section("Time by category", blocks)
