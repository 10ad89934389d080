"""Findings: the guides' "reading the profile" table as rules that fire on evidence.

Each rule looks at the analysis and returns a finding — id, severity, message, action and the
evidence it fired on (kernel/op names, times) — or nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis.sync import SYNC_TARGET_SHARE
from gpuscope.trace.model import KERNEL, MEMCPY, OP

if TYPE_CHECKING:
    from gpuscope.analysis.report import Analysis

Finding = dict[str, Any]
GEMM_SHARE_FIRES = 0.50
SMALL_KERNELS_MIN = 100
SMALL_KERNELS_SHARE = 0.50
CONVERSION_SHARE = 0.01
CPU_OVER_GPU = 2.0
COMM_SHARE = 0.20
ATTENTION_OPS = ("aten::bmm", "aten::baddbmm")
SOFTMAX_OPS = ("aten::_softmax", "aten::softmax", "aten::_safe_softmax")
CONVERSION_OPS = ("aten::copy_", "aten::_to_copy", "aten::to")


def _finding(
    finding_id: str, severity: str, message: str, action: str, evidence: dict[str, Any]
) -> Finding:
    return {
        "id": finding_id,
        "severity": severity,
        "message": message,
        "action": action,
        "evidence": evidence,
    }


def _us(ns: float) -> float:
    return round(ns / 1000, 3)


def gemm_heavy(a: Analysis) -> Finding | None:
    share = a.gemm_share
    if share is None or share <= GEMM_SHARE_FIRES:
        return None
    top = [g for g in a.groups if g.category == "gemm"][:5]
    return _finding(
        "gemm-heavy",
        "warning" if share > 0.60 else "info",
        f"GEMMs take {share:.0%} of kernel time (guide's target: < 60 %)",
        "Fuse projections (e.g. one QKV GEMM instead of three), batch small GEMMs, and tune "
        "GEMMs: PyTorch TunableOp (PYTORCH_TUNABLEOP_ENABLED=1, offline tuning), hipBLASLt / "
        "cuBLASLt algorithm selection; check shapes are multiples of 8/16 for tensor cores.",
        {
            "gemm_share": round(share, 4),
            "top_gemm_kernels": [{"name": g.name, "time_us": _us(g.total_ns)} for g in top],
        },
    )


def _op_stats(a: Analysis, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """CPU count and launched GPU kernel time of the named ops."""
    trace = a.trace
    wanted = {i: trace.names[i] for i in np.unique(trace.ops.name) if trace.names[i] in names}
    result: dict[str, dict[str, float]] = {}
    for index, name in wanted.items():
        cpu = (trace.ops.kind == OP) & (trace.ops.name == index)
        gpu = (a.parent_op == index) & (trace.gpu.kind == KERNEL)
        result[name] = {
            "count": int(cpu.sum()),
            "gpu_kernels": int(gpu.sum()),
            "gpu_time_us": _us(int(trace.gpu.dur[gpu].sum())),
        }
    return result


def manual_attention(a: Analysis) -> Finding | None:
    bmm = _op_stats(a, ATTENTION_OPS)
    softmax = _op_stats(a, SOFTMAX_OPS)
    if not bmm or not softmax:
        return None
    time = sum(v["gpu_time_us"] for v in (*bmm.values(), *softmax.values()))
    return _finding(
        "manual-attention",
        "warning",
        "attention computed by hand: batched matmul (aten::bmm) and softmax ops run separately "
        f"({time:,.1f} µs of GPU time)",
        "Use torch.nn.functional.scaled_dot_product_attention: it dispatches to fused "
        "flash / memory-efficient attention kernels (CK / aiter on ROCm) and never writes the "
        "score matrix to memory.",
        {"ops": {**bmm, **softmax}},
    )


def many_small_kernels(a: Analysis) -> Finding | None:
    launch = a.launch
    if not a.inputs.durations or launch.kernels < SMALL_KERNELS_MIN:
        return None
    share = launch.short_kernels / launch.kernels
    replayed = launch.graph_kernels / launch.kernels
    if share < SMALL_KERNELS_SHARE or replayed > 0.5:
        return None
    durations = a.trace.gpu.dur[a.trace.gpu.kind == KERNEL]
    per_ms = launch.kernels / (launch.kernel_span_ns / 1e6) if launch.kernel_span_ns else 0.0
    return _finding(
        "many-small-kernels",
        "warning",
        f"{share:.0%} of {launch.kernels:,} kernels run under 10 µs (median "
        f"{np.median(durations) / 1000:.1f} µs): launch overhead, not compute, sets the pace",
        "Fuse them with torch.compile and remove launch overhead with CUDA/HIP graphs "
        '(torch.compile(mode="reduce-overhead") or torch.cuda.graphs); batch more work per call.',
        {
            "short_kernels": launch.short_kernels,
            "short_kernel_time_us": _us(launch.short_kernel_ns),
            "kernels_per_ms": round(per_ms, 2),
            "launch_api_time_us": _us(launch.launch_api_ns),
        },
    )


def dtype_conversions(a: Analysis) -> Finding | None:
    stats = _op_stats(a, CONVERSION_OPS)
    time = sum(v["gpu_time_us"] for v in stats.values())
    total = a.kernel_ns / 1000
    if not total or time / total < CONVERSION_SHARE:
        return None
    kernels = a.trace.gpu.kind == KERNEL
    conversion_ops = [i for i, n in enumerate(a.trace.names) if n in CONVERSION_OPS]
    launched = kernels & np.isin(a.parent_op, conversion_ops)
    names, counts = np.unique(a.trace.gpu.name[launched], return_counts=True)
    top = [a.trace.names[n] for n in names[np.argsort(-counts)][:3]]
    return _finding(
        "dtype-conversions",
        "warning" if time / total >= 0.05 else "info",
        f"copy / dtype-conversion kernels (aten::copy_, aten::to) take {time / total:.0%} of "
        f"kernel time ({time:,.1f} µs)",
        "Fix dtypes at model init (model.to(dtype), inputs created in the compute dtype, "
        "autocast once at the top) instead of converting every call; avoid non-contiguous "
        "tensors that force copies.",
        {"ops": stats, "top_kernels": top},
    )


def cpu_bottleneck(a: Analysis) -> Finding | None:
    if a.timeline is None or a.cpu_busy_ns is None:
        return None
    busy = a.timeline.busy_ns
    if not busy or a.verdict.bound != "cpu-bound":
        return None
    ratio = a.cpu_busy_ns / busy
    if ratio < CPU_OVER_GPU and a.verdict.utilization > 0.5:
        return None
    waiting = a.timeline.gaps.attribution_ns.get("host_wait", 0)
    cpu = f"CPU operator time is {ratio:.1f}× the GPU busy time; " if a.cpu_busy_ns else ""
    return _finding(
        "cpu-bottleneck",
        "warning",
        f"CPU-bound: {cpu}the GPU is busy {a.verdict.utilization:.0%} of its span and "
        f"{waiting / 1000:,.0f} µs of its idle time waits for the host to launch work",
        "Cut host overhead: CUDA/HIP graphs or torch.compile (mode='reduce-overhead'), larger "
        "batches, fewer Python-level ops per step, data loading in worker processes with "
        "pinned memory.",
        {
            "cpu_op_time_us": _us(a.cpu_busy_ns),
            "gpu_busy_us": _us(busy),
            "host_wait_gap_us": _us(waiting),
        },
    )


def host_device_copies(a: Analysis) -> Finding | None:
    moves = {k: v for k, v in a.copies.items() if k in ("HtoD", "DtoH")}
    count = sum(v.count for v in moves.values())
    if not count:
        return None
    trace = a.trace
    host_side = [i for i in np.unique(trace.gpu.name) if _is_host_copy(trace.names[i])]
    rows = np.flatnonzero((trace.gpu.kind == MEMCPY) & np.isin(trace.gpu.name, host_side))
    parents = a.parent_op[rows]
    names, counts = np.unique(parents[parents >= 0], return_counts=True)
    launched_by = {trace.names[n]: int(c) for n, c in zip(names, counts, strict=True)}
    pageable = sum(v.pageable for v in moves.values())
    dtoh = moves.get("DtoH")
    severity = "warning" if (dtoh and dtoh.count >= max(a.launch.steps, 1)) or pageable else "info"
    return _finding(
        "host-device-copies",
        severity,
        f"{count:,} host↔device copies ("
        + ", ".join(f"{k}: {v.count:,}, {v.bytes:,} B" for k, v in sorted(moves.items()))
        + f"{', ' + str(pageable) + ' from pageable memory' if pageable else ''})",
        "Keep tensors on the device: avoid .item(), .cpu(), .tolist() and printing tensors in "
        "the loop (each DtoH copy also synchronizes); move inputs once with pinned memory and "
        "non_blocking=True.",
        {
            "by_kind": {
                k: {"count": v.count, "bytes": v.bytes, "time_us": _us(v.time_ns)}
                for k, v in moves.items()
            },
            "launched_by": dict(sorted(launched_by.items(), key=lambda kv: -kv[1])[:8]),
        },
    )


def _is_host_copy(name: str) -> bool:
    return "HtoD" in name or "DtoH" in name


def sync_overhead(a: Analysis) -> Finding | None:
    sync = a.sync
    if sync is None or sync.share <= SYNC_TARGET_SHARE:
        return None
    top = sorted(sync.by_name.items(), key=lambda kv: -kv[1][1])[:5]
    return _finding(
        "sync-overhead",
        "warning",
        f"blocking synchronization takes {sync.share:.1%} of the profiled window "
        f"({sync.time_ns / 1000:,.0f} µs; target < {SYNC_TARGET_SHARE:.0%})",
        "Remove host syncs from the hot loop: .item(), .cpu(), torch.cuda.synchronize(), "
        "printing or branching on GPU values; use stream/event dependencies instead and sync "
        "once per step at most.",
        {"by_name": {name: {"count": c, "time_us": _us(t)} for name, (c, t) in top}},
    )


def communication_heavy(a: Analysis) -> Finding | None:
    total = a.kernel_ns
    comm = a.categories["communication"][1]
    if not a.kernel_times_known or not total or comm / total < COMM_SHARE:
        return None
    top = [g for g in a.groups if g.category == "communication"][:5]
    return _finding(
        "communication-heavy",
        "info",
        f"communication kernels take {comm / total:.0%} of kernel time",
        "Overlap communication with compute (bucketed all-reduce, async collectives), "
        "check interconnect bandwidth with the collective sizes, reduce tensor-parallel degree.",
        {"top_kernels": [{"name": g.name, "time_us": _us(g.total_ns)} for g in top]},
    )


RULES: tuple[Callable[[Analysis], Finding | None], ...] = (
    cpu_bottleneck,
    sync_overhead,
    many_small_kernels,
    gemm_heavy,
    manual_attention,
    dtype_conversions,
    host_device_copies,
    communication_heavy,
)


def findings(a: Analysis) -> list[Finding]:
    return [f for rule in RULES if (f := rule(a)) is not None]
