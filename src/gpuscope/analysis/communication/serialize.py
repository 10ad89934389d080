"""The communication analysis as its report part: µs floats rounded to the ns, shares 0..1,
bandwidths in GB/s (10⁹ bytes per second), names resolved."""

from __future__ import annotations

from typing import Any

from gpuscope.analysis._finding import us
from gpuscope.analysis.communication.exposure import Exposure
from gpuscope.analysis.communication.model import Communication
from gpuscope.analysis.communication.stats import (
    MIN_CALLS,
    SLOW_FACTOR,
    SPREAD_MAX,
    SPREAD_P90,
    Bucket,
    CollectiveRow,
    SizeRow,
)

TOP_BUCKETS = 10

COMPUTE = (
    "compute = every kernel that is not communication; memcpys and memsets are not counted as "
    "compute (copies often belong to the communication itself, e.g. DDP bucket copies)"
)
NAME_FIELDS = (
    "algorithm, protocol and reduction in an NCCL/RCCL kernel name are the kernel's compiled "
    "specialisation, not necessarily what ran: the LL protocol is inlined and the others run "
    "through a function table, and NCCL ≥ 2.19 (ncclDevKernel_*) names every reduction Sum and "
    "every algorithm but TREE as RING. NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=TUNING shows the "
    "algorithm and protocol NCCL chose"
)
PEER_WAIT = (
    "on one rank a collective's kernel time includes waiting for the slowest peer to arrive: "
    "long or varying calls can be another rank's delay, which only the other ranks' traces show"
)


def to_dict(result: Communication) -> dict[str, Any]:
    shown = result.exposure
    return {
        "kernels": len(result.calls),
        "time_us": us(result.kernel_ns),
        "share_of_kernel_time": _share(result.kernel_ns, result.all_kernel_ns),
        "compute": COMPUTE,
        "exposure": _exposure(result, shown) if shown is not None else None,
        "collectives": [_collective(result, row, shown is not None) for row in result.collectives],
        "sizes": _sizes_note(result),
        "variance": _variance(result),
        "bandwidth": _bandwidth(result),
        "notes": _notes(result),
    }


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def _exposure(result: Communication, shown: Exposure) -> dict[str, Any]:
    steps = shown.steps
    step_time = shown.step_ns * shown.devices
    return {
        "communication_us": us(shown.comm_ns),
        "exposed_us": us(shown.exposed_ns),
        "overlapped_us": us(shown.overlapped_ns),
        "overlapped_share": _share(shown.overlapped_ns, shown.comm_ns),
        "exposed_share_of_span": _share(shown.exposed_ns, shown.span_ns),
        "span_us": us(shown.span_ns),
        "exposed_vs_all_gpu_work_us": us(shown.exposed_vs_all_ns),
        "devices": shown.devices,
        "steps": {
            "count": len(steps),
            "time_us": us(shown.step_ns),
            "exposed_us": us(shown.step_exposed_ns),
            "exposed_share_of_steps": _share(shown.step_exposed_ns, step_time),
            "source": "ProfilerStep#N ranges (host); the GPU runs the step's work inside them "
            "in steady state",
        }
        if steps
        else None,
        "by_stream": [
            {
                "device": s.device,
                "stream": s.stream,
                "kernels": s.kernels,
                "communication_us": us(s.comm_ns),
                "exposed_us": us(s.exposed_ns),
                "exposed_share_of_span": _share(s.exposed_ns, shown.span_ns),
            }
            for s in shown.streams
        ],
        "by_step": [
            {
                "name": s.name,
                "time_us": us(s.dur_ns),
                "communication_us": us(s.comm_ns),
                "exposed_us": us(s.exposed_ns),
                "exposed_share": _share(s.exposed_ns, s.dur_ns * shown.devices),
            }
            for s in steps
        ],
    }


def _collective(result: Communication, row: CollectiveRow, timed: bool) -> dict[str, Any]:
    name = result.calls.parsed[row.which]
    stats = row.stats
    return {
        "kind": row.kind,
        "library": name.library,
        "algorithm": name.algorithm,
        "protocol": name.protocol,
        "dtype": name.dtype,
        "reduction": name.reduction,
        "kernel": result.names[row.kernel],
        "launched_by": result.names[row.launched_by] if row.launched_by >= 0 else None,
        "count": stats.count,
        "time_us": us(stats.total_ns),
        "mean_us": us(stats.mean_ns),
        "p50_us": us(stats.p50_ns),
        "p90_us": us(stats.p90_ns),
        "max_us": us(stats.max_ns),
        "exposed_us": us(row.exposed_ns) if timed else None,
        "sized_calls": row.sized,
        "bytes_min": row.bytes_min,
        "bytes_max": row.bytes_max,
        "ranks": row.ranks,
        "algbw_gbps": _gbps(row.algbw),
        "busbw_gbps": _gbps(row.busbw),
    }


def _gbps(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def _sizes_note(result: Communication) -> dict[str, Any]:
    known = int((result.calls.bytes >= 0).sum())
    if known:
        source, note = "record_param_comms", None
    elif result.record_ops:
        source = None
        note = (
            f"the trace's {result.record_ops:,} record_param_comms ops carry no message sizes "
            "(older PyTorch): no bandwidth, and identical calls are told apart by their place "
            "in the profiler step only"
        )
    else:
        source = None
        note = (
            "no collective sizes in the trace (no torch.distributed record_param_comms ops): "
            "no bandwidth"
        )
    return {"known_calls": known, "source": source, "note": note}


def _variance(result: Communication) -> dict[str, Any]:
    varying = [b for b in result.buckets if b.varies]
    timed = result.exposure is not None
    return {
        "grouping": result.grouping,
        "groups": len(result.buckets),
        "varying_groups": len(varying),
        "thresholds": {
            "min_calls": MIN_CALLS,
            "p90_over_p50": SPREAD_P90,
            "max_over_p50": SPREAD_MAX,
        },
        "excess_us": us(sum(b.excess_ns for b in varying)),
        "excess_exposed_us": us(sum(b.excess_exposed_ns for b in varying)) if timed else None,
        "top": [_bucket(result, b, timed) for b in varying[:TOP_BUCKETS]],
    }


def _bucket(result: Communication, b: Bucket, timed: bool) -> dict[str, Any]:
    calls = result.calls
    step = int(result.step_of[b.slowest])
    return {
        "kind": b.kind,
        "kernel": result.names[int(calls.parsed_names[b.which])],
        "bytes": b.bytes if b.bytes >= 0 else None,
        "position_in_step": b.position if b.position >= 0 else None,
        "count": b.count,
        "p50_us": us(b.p50_ns),
        "p90_us": us(b.p90_ns),
        "max_us": us(b.max_ns),
        "cv": round(b.cv, 3),
        "excess_us": us(b.excess_ns),
        "excess_exposed_us": us(b.excess_exposed_ns) if timed else None,
        "slowest_start_us": us(int(calls.start[b.slowest])),
        "slowest_step": result.step_names[step] if step >= 0 else None,
    }


def _bandwidth(result: Communication) -> dict[str, Any] | None:
    if not result.sizes:
        return None
    timed = result.exposure is not None
    return {
        "assumption": "a collective's time = latency + size × bus factor / bandwidth, with the "
        "lowest median time of any size as the latency and the highest median bus bandwidth of "
        "any size as the bandwidth, per collective and process group of this trace; the link's "
        "own speed is not in the trace",
        "slow_factor": SLOW_FACTOR,
        "by_size": [_size(result, row, timed) for row in result.sizes],
    }


def _size(result: Communication, row: SizeRow, timed: bool) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "group": result.names[row.group] if row.group >= 0 else None,
        "ranks": row.ranks,
        "bytes": row.bytes,
        "count": row.count,
        "p50_us": us(row.p50_ns),
        "busbw_gbps": round(row.busbw, 2),
        "envelope_us": us(row.envelope_ns),
        "best_busbw_gbps": round(row.best_busbw, 2),
        "latency_us": us(row.latency_ns),
        "slow": row.slow,
        "excess_exposed_us": us(row.excess_exposed_ns) if timed else None,
    }


def _notes(result: Communication) -> list[str]:
    notes = [PEER_WAIT]
    if any(p.nccl_generation for p in result.calls.parsed):
        notes.append(NAME_FIELDS)
    if result.exposure is None:
        notes.append("the source has no timestamps: exposure cannot be computed")
    return notes
