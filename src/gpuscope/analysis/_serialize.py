"""The parts of the report of schema `gpuscope.analysis/1` (µs floats, shares 0..1), each from the
results it shows: `Analysis.to_dict` (analyze.py) puts them together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gpuscope.analysis import breakdown as breakdown_mod
from gpuscope.analysis import critical
from gpuscope.analysis._unique import unique
from gpuscope.analysis.breakdown import Breakdown
from gpuscope.analysis.categories import CATEGORIES, Classification, family_totals
from gpuscope.analysis.critical import CriticalPath
from gpuscope.analysis.hoststate import STATES
from gpuscope.analysis.hotspots import CopyKind, KernelGroup
from gpuscope.analysis.launch import SHORT_KERNEL_NS, LaunchStats
from gpuscope.analysis.regions import Region
from gpuscope.analysis.sync import SYNC_TARGET_SHARE, SyncStats
from gpuscope.analysis.timeline import MICRO_GAP_NS, Gap, Timeline
from gpuscope.analysis.verdict import Verdict
from gpuscope.trace.model import KERNEL, Device, Trace, TraceMeta


def us(ns: float) -> float:
    """ns → µs, rounded to the ns (the JSON never loses precision the trace had)."""
    return round(float(ns) / 1000.0, 3)


def us_or_none(ns: float | None) -> float | None:
    """µs, or None where the source could not measure it (never a zero that reads as data)."""
    return None if ns is None or ns < 0 else us(ns)


def share(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def kernel_ns(groups: Sequence[KernelGroup]) -> int:
    """Kernel time: the groups' known totals."""
    return sum(max(g.total_ns, 0) for g in groups)


def kernel_times_known(groups: Sequence[KernelGroup]) -> bool:
    return all(g.total_ns >= 0 for g in groups)


def verdict(v: Verdict, b: Breakdown | None) -> dict[str, Any]:
    outside = v.utilization_outside_gap
    return {
        "bound": v.bound,
        "reason": v.reason,
        "utilization": round(v.utilization, 6),
        "cause": v.cause or None,
        "utilization_outside_largest_gap": round(outside, 6) if outside is not None else None,
        "steady_from_us": us(v.steady_from_ns - b.window[0])
        if v.steady_from_ns is not None and b is not None
        else None,
        "launch_queue_p50_us": us_or_none(v.queue_p50_ns),
        "thresholds": v.thresholds,
    }


def breakdown(b: Breakdown | None, path: CriticalPath | None) -> dict[str, Any]:
    """`breakdown` (what the parts mean, the judged totals, the bounds), `step_breakdown` (a row
    per step) and `critical_path` (a row per link of each step's path); null without a
    timeline."""
    if b is None or path is None:
        return {"breakdown": None, "step_breakdown": None, "critical_path": None}
    return {
        "breakdown": breakdown_mod.summary(b, path.at_most_ns),
        "step_breakdown": breakdown_mod.rows(b),
        "critical_path": critical.rows(path, b.steps.names, breakdown_mod.MAX_STEPS),
    }


def _gap(trace: Trace, line: Timeline, gap: Gap | None) -> dict[str, Any] | None:
    if gap is None:
        return None
    span = line.span_ns
    first = min(d.first_ns for d in line.devices) if line.devices else gap.start
    names = trace.names
    return {
        "time_us": us(gap.ns),
        "share_of_span": share(gap.ns, span),
        "cause": gap.cause,
        "device": gap.device,
        "starts_at_us": us(gap.start - first),
        "before": names[trace.gpu.name[gap.before]] if gap.before >= 0 else None,
        "after": names[trace.gpu.name[gap.after]] if gap.after >= 0 else None,
    }


def source(meta: TraceMeta) -> dict[str, Any]:
    return {
        "path": meta.path,
        "format": meta.format,
        "schema": meta.schema,
        "vendor": meta.vendor,
        "devices": [_device(d) for d in meta.devices],
        "rank": meta.rank,
        "world_size": meta.world_size,
        "truncated": meta.truncated,
        "warnings": list(meta.warnings),
        "event_counts": meta.event_counts,
        "provides": sorted(meta.provides),
        "clock": meta.clock,
        "files": list(meta.files),
    }


def _device(device: Device) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": device.id, "name": device.name}
    if device.arch:
        entry["arch"] = device.arch
    if device.compute_units:
        entry["compute_units"] = device.compute_units
    return entry


def _gpu_op_ns(categories: dict[str, tuple[int, int]]) -> int:
    return sum(ns for _, ns in categories.values())


def unclassified(categories: dict[str, tuple[int, int]]) -> float:
    """The share of GPU op time no category claims."""
    return share(categories["other"][1], _gpu_op_ns(categories))


def utilization(line: Timeline) -> float:
    return share(line.busy_ns, sum(d.span_ns for d in line.devices))


def memset(totals: tuple[int, int, int]) -> dict[str, Any]:
    return {"count": totals[0], "time_us": us(totals[1]), "bytes": totals[2]}


def cpu(trace: Trace, busy_ns: int) -> dict[str, Any]:
    return {"op_time_us": us(busy_ns), "threads": _threads(trace)}


def kernels(
    trace: Trace, groups: Sequence[KernelGroup], launch: LaunchStats, durations: bool
) -> dict[str, Any]:
    gpu = trace.gpu
    count = sum(g.count for g in groups)
    total = kernel_ns(groups) if kernel_times_known(groups) else None
    result: dict[str, Any] = {
        "count": count,
        "time_us": us_or_none(total),
        "mean_us": us(total / count) if total is not None and count else None,
        "median_us": None,
        "unique_names": len(groups),
        "short": None,
    }
    if not durations:
        return result
    durations_ns = gpu.dur[gpu.kind == KERNEL]
    result["mean_us"] = us(float(durations_ns.mean())) if len(durations_ns) else 0.0
    result["median_us"] = us(float(np.median(durations_ns))) if len(durations_ns) else 0.0
    result["short"] = {
        "threshold_us": us(SHORT_KERNEL_NS),
        "count": launch.short_kernels,
        "share": share(launch.short_kernels, launch.kernels),
        "time_us": us(launch.short_kernel_ns),
    }
    return result


def memcpy(copies: dict[str, CopyKind]) -> dict[str, Any]:
    kinds = copies.values()
    return {
        "count": sum(k.count for k in kinds),
        "time_us": us(sum(k.time_ns for k in kinds)),
        "bytes": sum(k.bytes for k in kinds) if all(k.sized for k in kinds) else _partial(kinds),
        "sized": sum(k.sized for k in kinds),
        "by_kind": {
            k.kind: {
                "count": k.count,
                "time_us": us(k.time_ns),
                "bytes": k.known_bytes,
                "sized": k.sized,
                "pageable": k.pageable,
                "pinned": k.pinned,
            }
            for k in sorted(kinds, key=lambda k: -k.time_ns)
        },
    }


def _partial(kinds: Any) -> int | None:
    """Bytes when some copy kinds lack sizes: those that have them; None when none does."""
    return sum(k.bytes for k in kinds) if any(k.sized for k in kinds) else None


def categories(totals: dict[str, tuple[int, int]], times: bool) -> dict[str, Any]:
    total = _gpu_op_ns(totals)
    return {
        name: {
            "count": count,
            "time_us": us(ns) if times else None,
            "share": share(ns, total) if times else None,
        }
        for name, (count, ns) in sorted(totals.items(), key=lambda kv: (-kv[1][1], -kv[1][0]))
        if name in CATEGORIES
    }


def families(trace: Trace, classes: Classification, total: int) -> dict[str, Any]:
    """Kernel calls and time per family (share of kernel time), the top kernel of each."""
    return {
        f.family: {
            "count": f.count,
            "time_us": us(f.time_ns) if f.time_ns >= 0 else None,
            "share": share(f.time_ns, total) if f.time_ns >= 0 else None,
            "top": f.top,
        }
        for f in family_totals(trace, classes)
    }


def devices(meta: TraceMeta, line: Timeline | None) -> list[dict[str, Any]]:
    known = {d.id: d for d in meta.devices}
    if line is None:
        return [{**_device(d), "busy_us": None, "span_us": None, "idle_us": None,
                 "utilization": None} for d in meta.devices]  # fmt: skip
    result = []
    for d in line.devices:
        device = known.get(d.device)
        entry = _device(device) if device else {"id": d.device, "name": ""}
        entry.update(
            busy_us=us(d.busy_ns),
            span_us=us(d.span_ns),
            idle_us=us(d.idle_ns),
            utilization=share(d.busy_ns, d.span_ns),
        )
        result.append(entry)
    return result


def gaps(line: Timeline) -> dict[str, Any]:
    gaps = line.gaps
    return {
        "count": gaps.count,
        "total_us": us(gaps.total_ns),
        "micro_threshold_us": us(MICRO_GAP_NS),
        "micro": {"count": gaps.micro_count, "time_us": us(gaps.micro_ns)},
        "macro": {
            "count": gaps.count - gaps.micro_count,
            "time_us": us(gaps.total_ns - gaps.micro_ns),
        },
        "histogram": [
            {"lo_us": lo, "hi_us": hi, "count": count, "time_us": us(ns)}
            for lo, hi, count, ns in gaps.histogram
        ],
        "attribution": {
            cause: {
                "count": gaps.attribution_count.get(cause, 0),
                "time_us": us(gaps.attribution_ns.get(cause, 0)),
                "share": share(gaps.attribution_ns.get(cause, 0), gaps.total_ns),
            }
            for cause in STATES
        },
    }


def longest(trace: Trace, line: Timeline) -> dict[str, Any]:
    """The largest gap; the longest few and the busy / idle strip they are marked on."""
    strip = line.strip
    return {
        "largest": _gap(trace, line, line.gaps.largest),
        "longest": [_gap(trace, line, g) for g in line.gaps.longest],
        "strip": {
            "bin_us": us(strip.bin_ns),
            "devices": [{"device": d, "busy": list(b)} for d, b in strip.busy.items()],
        }
        if strip is not None
        else None,
    }


def _percentiles(values: Any) -> dict[str, float]:
    if len(values) == 0:
        return {}
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {
        "p50": us(p50),
        "p90": us(p90),
        "p99": us(p99),
        "max": us(values.max()),
        "mean": us(values.mean()),
    }


def launch(launch: LaunchStats) -> dict[str, Any]:
    per_step = launch.kernels_per_step
    per_ms = launch.kernels / (launch.kernel_span_ns / 1e6) if launch.kernel_span_ns else 0.0
    return {
        "kernels": launch.kernels,
        "linked": launch.linked,
        "launch_calls": launch.launch_calls,
        "launch_api_time_us": us(launch.launch_api_ns),
        "launch_api_mean_us": us(launch.launch_api_ns / launch.launch_calls)
        if launch.launch_calls
        else 0.0,
        "graph_launches": launch.graph_launches,
        "graph_kernels": launch.graph_kernels,
        "kernels_per_graph_launch": round(launch.graph_kernels / launch.graph_launches, 2)
        if launch.graph_launches
        else 0.0,
        "queue_delay_us": _percentiles(launch.queue_ns),
        "kernels_per_ms": round(per_ms, 3),
        "steps": launch.steps,
        "kernels_per_step": {
            "mean": round(float(np.mean(per_step)), 2),
            "min": min(per_step),
            "max": max(per_step),
            "values": per_step,
        }
        if per_step
        else None,
    }


def sync(sync: SyncStats) -> dict[str, Any]:
    return {
        "count": sync.count,
        "time_us": us(sync.time_ns),
        "share": round(sync.share, 6),
        "target_share": SYNC_TARGET_SHARE,
        "in_loop_us": us(sync.loop_ns),
        "in_loop_share": round(sync.loop_share, 6),
        "gpu_busy_during_us": us(sync.gpu_busy_ns),
        "closing": {"count": sync.closing_count, "time_us": us(sync.closing_ns)},
        "pageable_copies": sync.pageable_copies,
        "by_name": {
            name: {"count": count, "time_us": us(ns)}
            for name, (count, ns) in sorted(sync.by_name.items(), key=lambda kv: -kv[1][1])
        },
    }


def _threads(trace: Trace) -> int:
    return len(unique(trace.ops.tid)) if len(trace.ops) else 0


def top(groups: Sequence[KernelGroup], total: int, times: bool) -> list[dict[str, Any]]:
    """The `top_kernels` rows: `groups` as given (the report's first `top` groups)."""
    return [
        {
            "name": g.name,
            "category": g.category,
            "count": g.count,
            "total_us": us_or_none(g.total_ns),
            "mean_us": us(g.mean_ns) if g.total_ns >= 0 else None,
            "min_us": us_or_none(g.min_ns),
            "max_us": us_or_none(g.max_ns),
            "share": share(g.total_ns, total) if times else None,
        }
        for g in groups
    ]


def regions(found: Sequence[Region], window_ns: int | None, timed: bool) -> list[dict[str, Any]]:
    window = window_ns or 0
    return [
        {
            "name": r.name,
            "depth": r.depth,
            "count": r.count,
            "total_us": us(r.total_ns),
            "mean_us": us(r.mean_ns),
            "min_us": us(r.min_ns),
            "max_us": us(r.max_ns),
            "share_of_window": share(r.total_ns, window) if window else None,
            "gpu_busy_us": us(r.gpu_ns) if timed else None,
        }
        for r in found
    ]
