"""`Analysis` → the plain dict of schema `gpuscope.analysis/1` (µs floats, shares 0..1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope import __version__
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.launch import SHORT_KERNEL_NS
from gpuscope.analysis.sync import SYNC_TARGET_SHARE
from gpuscope.analysis.timeline import CAUSES, MICRO_GAP_NS
from gpuscope.trace.model import KERNEL

if TYPE_CHECKING:
    from gpuscope.analysis.report import Analysis

SCHEMA = "gpuscope.analysis/1"


def us(ns: float) -> float:
    """ns → µs, rounded to the ns (the JSON never loses precision the trace had)."""
    return round(float(ns) / 1000.0, 3)


def _share(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def analysis_dict(a: Analysis) -> dict[str, Any]:
    kernel_ns = a.kernel_ns
    line = a.timeline
    return {
        "schema": SCHEMA,
        "gpuscope_version": __version__,
        "source": _source(a),
        "window_us": us(a.window_ns),
        "kernels": _kernels(a),
        "memcpy": _memcpy(a),
        "memset": {"count": a.memset[0], "time_us": us(a.memset[1]), "bytes": a.memset[2]},
        "categories": _categories(a),
        "unclassified_share": _share(a.categories["other"][1], _gpu_op_ns(a)),
        "gemm_share": _share(a.categories["gemm"][1], kernel_ns),
        "gpu_busy_us": us(line.busy_ns),
        "span_us": us(line.span_ns),
        "idle_us": us(line.idle_ns),
        "utilization": _share(line.busy_ns, sum(d.span_ns for d in line.devices)),
        "devices": _devices(a),
        "gaps": _gaps(a),
        "launch": _launch(a),
        "sync": _sync(a),
        "cpu": {"op_time_us": us(a.cpu_busy_ns), "threads": _threads(a)},
        "verdict": {
            "bound": a.verdict.bound,
            "reason": a.verdict.reason,
            "utilization": round(a.verdict.utilization, 6),
            "thresholds": a.verdict.thresholds,
        },
        "top_kernels": _top(a),
        "findings": a.findings,
        "integrity": a.integrity,
    }


def _source(a: Analysis) -> dict[str, Any]:
    meta = a.trace.meta
    return {
        "path": meta.path,
        "format": meta.format,
        "schema": meta.schema,
        "vendor": meta.vendor,
        "devices": [{"id": d.id, "name": d.name} for d in meta.devices],
        "rank": meta.rank,
        "world_size": meta.world_size,
        "truncated": meta.truncated,
        "warnings": list(meta.warnings),
        "event_counts": meta.event_counts,
    }


def _gpu_op_ns(a: Analysis) -> int:
    return int(a.trace.gpu.dur.sum())


def _kernels(a: Analysis) -> dict[str, Any]:
    gpu = a.trace.gpu
    durations = gpu.dur[gpu.kind == KERNEL]
    launch = a.launch
    return {
        "count": len(durations),
        "time_us": us(int(durations.sum())),
        "mean_us": us(float(durations.mean())) if len(durations) else 0.0,
        "median_us": us(float(np.median(durations))) if len(durations) else 0.0,
        "unique_names": len(a.groups),
        "short": {
            "threshold_us": us(SHORT_KERNEL_NS),
            "count": launch.short_kernels,
            "share": _share(launch.short_kernels, launch.kernels),
            "time_us": us(launch.short_kernel_ns),
        },
    }


def _memcpy(a: Analysis) -> dict[str, Any]:
    kinds = a.copies.values()
    return {
        "count": sum(k.count for k in kinds),
        "time_us": us(sum(k.time_ns for k in kinds)),
        "bytes": sum(k.bytes for k in kinds),
        "by_kind": {
            k.kind: {
                "count": k.count,
                "time_us": us(k.time_ns),
                "bytes": k.bytes,
                "pageable": k.pageable,
                "pinned": k.pinned,
            }
            for k in sorted(kinds, key=lambda k: -k.time_ns)
        },
    }


def _categories(a: Analysis) -> dict[str, Any]:
    total = _gpu_op_ns(a)
    return {
        name: {"count": count, "time_us": us(ns), "share": _share(ns, total)}
        for name, (count, ns) in sorted(a.categories.items(), key=lambda kv: -kv[1][1])
        if name in CATEGORIES
    }


def _devices(a: Analysis) -> list[dict[str, Any]]:
    names = {d.id: d.name for d in a.trace.meta.devices}
    return [
        {
            "id": d.device,
            "name": names.get(d.device, ""),
            "busy_us": us(d.busy_ns),
            "span_us": us(d.span_ns),
            "idle_us": us(d.idle_ns),
            "utilization": _share(d.busy_ns, d.span_ns),
        }
        for d in a.timeline.devices
    ]


def _gaps(a: Analysis) -> dict[str, Any]:
    gaps = a.timeline.gaps
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
                "share": _share(gaps.attribution_ns.get(cause, 0), gaps.total_ns),
            }
            for cause in CAUSES
        },
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


def _launch(a: Analysis) -> dict[str, Any]:
    launch = a.launch
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


def _sync(a: Analysis) -> dict[str, Any]:
    sync = a.sync
    return {
        "count": sync.count,
        "time_us": us(sync.time_ns),
        "share": round(sync.share, 6),
        "target_share": SYNC_TARGET_SHARE,
        "by_name": {
            name: {"count": count, "time_us": us(ns)}
            for name, (count, ns) in sorted(sync.by_name.items(), key=lambda kv: -kv[1][1])
        },
    }


def _threads(a: Analysis) -> int:
    return len(np.unique(a.trace.ops.tid)) if len(a.trace.ops) else 0


def _top(a: Analysis) -> list[dict[str, Any]]:
    total = a.kernel_ns
    return [
        {
            "name": g.name,
            "category": g.category,
            "count": g.count,
            "total_us": us(g.total_ns),
            "mean_us": us(g.mean_ns),
            "min_us": us(g.min_ns),
            "max_us": us(g.max_ns),
            "share": _share(g.total_ns, total),
        }
        for g in a.groups[: a.top]
    ]
