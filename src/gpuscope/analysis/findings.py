"""Findings: the core advice rules, each firing on evidence and consistent with the verdict.

Each rule returns a finding — id, severity, message, action and the evidence it fired on — or
nothing. A rule fires at the threshold its message states, and its severity follows what acting
on it could save in this trace ("warning" when that is a real share of the time, else "info").
The analyses in `extras` (communication, steps, host hot spots, cold start, efficiency,
conversions, patterns) add their own findings after these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import advice
from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._unique import unique
from gpuscope.analysis.hotspots import MIGRATION
from gpuscope.analysis.sync import SYNC_TARGET_SHARE
from gpuscope.analysis.verdict import CAUSE_TEXT
from gpuscope.document.units import nbytes, time_ns
from gpuscope.trace.model import DTOH, HTOD, KERNEL, MEMCPY, PAGEABLE

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

SMALL_KERNELS_MIN = 100
SMALL_KERNELS_SHARE = 0.50
GRAPH_REPLAYED = 0.50  # share of kernels launched by graph launches: the trace already uses graphs
HOST_WAIT_WARNING = 0.20  # host-wait idle over the span
LONE_GAP_MIN = 0.10  # one gap this share of the span is worth its own finding
COPY_WARNING = 0.05  # host↔device copy time over GPU busy time
COPY_INFO = 0.01
COPY_DOMINANT = 0.30  # copies this share of busy time: they dominate the device
ATTENTION_MIN = 0.01  # hand-written attention: its GPU time over kernel time
GEMM_SHARE_FIRES = 0.50
COLD_UNRELIABLE = 0.25  # cold start this share of the window: host-bound advice is provisional
ATTENTION_OPS = ("aten::bmm", "aten::baddbmm")
SOFTMAX_OPS = ("aten::_softmax", "aten::softmax", "aten::_safe_softmax")


def _largest_gap(a: Analysis) -> dict[str, Any] | None:
    gap = a.verdict.largest_gap
    if gap is None:
        return None
    names = a.trace.names
    return {
        "gap_us": us(gap.ns),
        "cause": gap.cause,
        "kernel_before": names[a.trace.gpu.name[gap.before]] if gap.before >= 0 else None,
        "kernel_after": names[a.trace.gpu.name[gap.after]] if gap.after >= 0 else None,
        "host_calls_in_gap": _calls_within(a, gap.start, gap.end),
    }


def _graph_share(a: Analysis) -> float:
    launch = a.launch
    return launch.graph_kernels / launch.kernels if launch.kernels else 0.0


def cpu_bottleneck(a: Analysis) -> Finding | None:
    """The host is late: fires only with a cpu-bound verdict, with advice that fits the trace."""
    line = a.timeline
    if line is None or a.verdict.bound != "cpu-bound" or not line.device_span_ns:
        return None
    waiting = line.gaps.attribution_ns.get("host_wait", 0)
    after_sync = line.gaps.after_sync_ns
    share = waiting / line.device_span_ns
    cpu = a.cpu_busy_ns
    ratio = f"; CPU operator time is {cpu / line.busy_ns:.1f}× the GPU busy time" if cpu else ""
    evidence: dict[str, Any] = {
        "host_wait_gap_us": us(waiting),
        "host_wait_share_of_span": round(share, 4),
        "gpu_busy_us": us(line.busy_ns),
        "graph_replayed_share": round(_graph_share(a), 4),
        "largest_gap": _largest_gap(a),
    }
    if cpu is not None:
        evidence["cpu_op_time_us"] = us(cpu)
    if a.verdict.queue_p50_ns is not None:
        evidence["launch_queue_p50_us"] = us(a.verdict.queue_p50_ns)
    cold = _cold_share(a)
    caveat, action = "", _host_action(a)
    if after_sync >= 0.5 * waiting:
        evidence["host_time_after_syncs_us"] = us(after_sync)
        caveat = (
            f"; {time_ns(after_sync)} of the wait follows a blocking sync: the host returns "
            "from it and only then does its own work before launching"
        )
        action = advice.host_after_sync(a.program)
    if cold >= COLD_UNRELIABLE:
        evidence["cold_start_share_of_window"] = round(cold, 4)
        caveat = (
            f"; but {cold:.0%} of the window is cold start (see cold-start), so this may be the "
            "first iteration's host work, not the steady state's"
        )
        then = action[0].lower() + action[1:]
        action = f"Profile after warm-up first (see cold-start); if it persists: {then}"
    return finding(
        "cpu-bottleneck",
        "warning" if share >= HOST_WAIT_WARNING and cold < COLD_UNRELIABLE else "info",
        f"cpu-bound: the GPU waits {time_ns(waiting)} ({share:.0%} of its span) for the "
        f"host to launch the next work (warning at ≥ {HOST_WAIT_WARNING:.0%}){ratio}{caveat}",
        action,
        evidence,
        impact_ns=waiting,
        cause="host-sync" if after_sync >= 0.5 * waiting else "host-launch",
    )


def _cold_share(a: Analysis) -> float:
    """The share of the window the cold-start analysis attributes to first-call work."""
    extra = a.extras.get("cold_start")
    share = getattr(extra.result, "share", 0.0) if extra is not None and extra.result else 0.0
    return float(share)


def _host_action(a: Analysis) -> str:
    launch = a.launch
    short = launch.short_kernels / launch.kernels if launch.kernels else 0.0
    return advice.host_launch(a.program, short_kernels=short >= SMALL_KERNELS_SHARE)


def idle_gap(a: Analysis) -> Finding | None:
    """One gap holding most of the idle time is reported on its own, with what it waited on."""
    line = a.timeline
    gap = a.verdict.largest_gap
    if line is None or gap is None or not line.span_ns or not line.idle_ns:
        return None
    span = line.span_of(gap.device)
    if gap.ns < LONE_GAP_MIN * span or gap.ns < 0.5 * line.idle_ns:
        return None
    if gap.cause == a.verdict.cause and a.verdict.bound != "gpu-bound":
        return None  # the verdict's own finding carries this gap in its evidence
    trace = a.trace
    names = trace.names
    outside = a.verdict.utilization_outside_gap
    evidence: dict[str, Any] = {
        "gap_us": us(gap.ns),
        "share_of_span": round(gap.ns / span, 4),
        "cause": gap.cause,
        "device": gap.device,
        "kernel_before": names[trace.gpu.name[gap.before]] if gap.before >= 0 else None,
        "kernel_after": names[trace.gpu.name[gap.after]] if gap.after >= 0 else None,
        "host_calls_in_gap": _calls_within(a, gap.start, gap.end),
    }
    if outside is not None:
        evidence["utilization_outside_gap"] = round(outside, 4)
    return finding(
        "idle-gap",
        "warning" if gap.ns >= 0.2 * span else "info",
        f"one idle gap of {time_ns(gap.ns)} holds {gap.ns / line.idle_ns:.0%} of the GPU's "
        f"idle time ({gap.ns / span:.0%} of its span; reported at ≥ "
        f"{LONE_GAP_MIN:.0%}): {CAUSE_TEXT[gap.cause]}",
        _gap_action(a, gap.cause),
        evidence,
        impact_ns=gap.ns,
        cause=GAP_CAUSE.get(gap.cause),
    )


GAP_CAUSE = {"host_wait": "host-work", "sync_drain": "host-sync", "startup": "cold-start"}


def _gap_action(a: Analysis, cause: str) -> str:
    if cause == "host_wait":
        return advice.host_work(a.program)
    if cause == "sync_drain":
        return advice.host_sync(a.program)
    if cause == "startup":
        return advice.warm_up(a.program, a.trace.meta.format) + "."
    return {
        "kernel_wait": "Find what the queued kernel waited for: the event it depends on "
        "(a stream-wait on an event before the gap), the other stream's work or collective, "
        "or another process sharing the GPU. Overlap that work or remove the dependency; it is "
        "not host overhead, so graphs or fusion will not shorten it.",
        "unknown": "Record launch correlation (a newer profiler, or enable the runtime API "
        "trace) to tell what the GPU waited for.",
    }[cause]


def _calls_within(a: Analysis, lo: int, hi: int) -> dict[str, int]:
    host = a.trace.host
    inside = (host.start < hi) & (host.end > lo)
    names, counts = np.unique(host.name[inside], return_counts=True)
    order = np.argsort(-counts)[:8]
    return {a.trace.names[names[i]]: int(counts[i]) for i in order}


def many_small_kernels(a: Analysis) -> Finding | None:
    """Launch overhead paces the GPU only when the host is late and the queue is not full."""
    launch = a.launch
    if not a.inputs.durations or not a.inputs.launch or launch.kernels < SMALL_KERNELS_MIN:
        return None
    share = launch.short_kernels / launch.kernels
    if share < SMALL_KERNELS_SHARE or _graph_share(a) >= GRAPH_REPLAYED:
        return None
    if a.verdict.bound != "cpu-bound" or a.verdict.queue_backed_up:
        return None
    durations = a.trace.gpu.dur[a.trace.gpu.kind == KERNEL]
    per_ms = launch.kernels / (launch.kernel_span_ns / 1e6) if launch.kernel_span_ns else 0.0
    queue = a.verdict.queue_p50_ns
    return finding(
        "many-small-kernels",
        "warning",
        f"{share:.0%} of {launch.kernels:,} kernels run under 10 µs (median "
        f"{time_ns(np.median(durations))}; fires at ≥ {SMALL_KERNELS_SHARE:.0%}) and they "
        "start soon after their launch: launch overhead, not compute, sets the pace",
        advice.host_launch(a.program, short_kernels=True),
        {
            "short_kernels": launch.short_kernels,
            "short_kernel_time_us": us(launch.short_kernel_ns),
            "kernels_per_ms": round(per_ms, 2),
            "launch_api_time_us": us(launch.launch_api_ns),
            "launch_queue_p50_us": us(queue) if queue is not None else None,
        },
        impact_ns=a.timeline.gaps.attribution_ns.get("host_wait", 0) if a.timeline else None,
        cause="host-launch",
    )


def sync_overhead(a: Analysis) -> Finding | None:
    """A sync costs the GPU time it leaves idle after it (drain then relaunch), not the host's
    wait; the sync that closes the profiled window is no overhead."""
    sync, line = a.sync, a.timeline
    if sync is None or line is None or not line.device_span_ns:
        return None
    drained = line.gaps.attribution_ns.get("sync_drain", 0)
    after = line.gaps.after_sync_ns
    share = (drained + after) / line.device_span_ns
    if share < SYNC_TARGET_SHARE:
        return None
    top = sorted(sync.by_name.items(), key=lambda kv: -kv[1][1])[:5]
    evidence: dict[str, Any] = {
        "idle_after_syncs_us": us(drained),
        "host_time_after_syncs_us": us(after),
        "in_loop_blocking_us": us(sync.loop_ns),
        "gpu_busy_while_host_blocked": round(sync.gpu_busy_ns / sync.loop_ns, 4)
        if sync.loop_ns
        else None,
        "window_closing_syncs": {"count": sync.closing_count, "time_us": us(sync.closing_ns)},
        "largest_gap": _largest_gap(a),
        "by_name": {name: {"count": c, "time_us": us(t)} for name, (c, t) in top},
    }
    if a.launch.steps:
        evidence["syncs_per_step"] = round(sync.count / a.launch.steps, 2)
    return finding(
        "sync-overhead",
        "warning",
        f"in-loop synchronization leaves the GPU idle {time_ns(drained + after)} ({share:.1%} "
        f"of its span; target < {SYNC_TARGET_SHARE:.0%}): after each blocking call the queue is "
        "empty until the host launches again"
        + (
            f"; {time_ns(after)} of it is host work done after the syncs returned (it could "
            "overlap the GPU if the next work were launched before the sync)"
            if after
            else ""
        )
        + (
            f" (the {sync.closing_count} sync(s) closing the profiled window are not counted)"
            if sync.closing_count
            else ""
        ),
        advice.host_sync(a.program),
        evidence,
        impact_ns=drained + after,
        cause="host-sync",
    )


def host_device_copies(a: Analysis) -> Finding | None:
    """Host↔device copies, sized by what removing them could save: their time against the
    span (wall time) of the device; their share of GPU busy time is reported beside it."""
    moves = {k: v for k, v in a.copies.items() if k in ("HtoD", "DtoH")}
    count = sum(v.count for v in moves.values())
    line = a.timeline
    busy = line.busy_ns if line else sum(ns for _, ns in a.categories.values())
    span = line.device_span_ns if line else busy
    if not count or not busy:
        return None
    time = sum(v.time_ns for v in moves.values())
    share = time / span
    pageable = sum(v.pageable for v in moves.values())
    if share < COPY_INFO and not pageable:
        return None
    dominant = " — they dominate the device's busy time" if time >= COPY_DOMINANT * busy else ""
    return finding(
        "host-device-copies",
        "warning" if share >= COPY_WARNING else "info",
        f"host↔device copies take {time_ns(time)}, {share:.1%} of the GPU's span and "
        f"{time / busy:.1%} of its busy time ({count:,} cop{'y' if count == 1 else 'ies'}"
        f"{f', {pageable} from pageable memory' if pageable else ''}; warning at ≥ "
        f"{COPY_WARNING:.0%} of the span){dominant}",
        advice.copies(a.program),
        _copy_evidence(a, moves),
        impact_ns=time,
        cause="copies",
    )


def _copy_evidence(a: Analysis, moves: dict[str, Any]) -> dict[str, Any]:
    trace = a.trace
    gpu = trace.gpu
    rows = np.flatnonzero((gpu.kind == MEMCPY) & np.isin(gpu.copy, [HTOD, DTOH]))
    parents = a.parent_op[rows]
    names, counts = np.unique(parents[parents >= 0], return_counts=True)
    launched_by = {trace.names[n]: int(c) for n, c in zip(names, counts, strict=True)}
    return {
        "by_kind": {
            k: {
                "count": v.count,
                "bytes": v.known_bytes,
                "sized": v.sized,
                "time_us": us(v.time_ns),
                "pageable": v.pageable,
                "gb_per_s": v.gb_per_s,
            }
            for k, v in moves.items()
        },
        "pageable_bytes": int(gpu.bytes[rows][gpu.host_memory[rows] == PAGEABLE].clip(0).sum()),
        "launched_by": dict(sorted(launched_by.items(), key=lambda kv: -kv[1])[:8]),
    }


def _op_stats(a: Analysis, names: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """CPU count and launched GPU kernel time of the named ops."""
    trace = a.trace
    wanted = {i: trace.names[i] for i in unique(trace.ops.name) if trace.names[i] in names}
    result: dict[str, dict[str, float]] = {}
    for index, name in wanted.items():
        cpu = (trace.ops.kind == 0) & (trace.ops.name == index)
        gpu = (a.parent_op == index) & (trace.gpu.kind == KERNEL)
        result[name] = {
            "count": int(cpu.sum()),
            "gpu_kernels": int(gpu.sum()),
            "gpu_time_us": us(int(trace.gpu.dur[gpu].clip(0).sum())),
        }
    return result


def manual_attention(a: Analysis) -> Finding | None:
    bmm = _op_stats(a, ATTENTION_OPS)
    softmax = _op_stats(a, SOFTMAX_OPS)
    if not bmm or not softmax or not a.kernel_ns:
        return None
    time = sum(v["gpu_time_us"] for v in (*bmm.values(), *softmax.values()))
    share = time * 1000 / a.kernel_ns
    if share < ATTENTION_MIN:
        return None
    return finding(
        "manual-attention",
        "warning" if share >= 0.05 else "info",
        "attention computed by hand: batched matmuls (aten::bmm) and softmax run as separate "
        f"kernels, {time_ns(time * 1000)} = {share:.1%} of kernel time (fires at ≥ "
        f"{ATTENTION_MIN:.0%})",
        "Use torch.nn.functional.scaled_dot_product_attention: it dispatches to fused "
        "flash / memory-efficient attention kernels (CK / aiter on ROCm) and never writes the "
        "score matrix to memory.",
        {"ops": {**bmm, **softmax}},
        impact_ns=time * 1000,
        cause="fusion",
    )


def gemm_heavy(a: Analysis) -> Finding | None:
    """Only when shapes were not recorded: the efficiency analysis judges GEMMs when they were."""
    share = a.gemm_share
    extra = a.extras.get("efficiency")
    if share is None or share < GEMM_SHARE_FIRES or (extra is not None and extra.result):
        return None
    top = [g for g in a.groups if g.category == "gemm"][:5]
    graphed = _graph_share(a) >= GRAPH_REPLAYED
    why = (
        "the trace has no recorded shapes"
        if not (a.trace.ops.input_dims >= 0).any()
        else "their kernels are replayed from CUDA/HIP graphs, which carry no operator shapes"
        if graphed
        else "their shapes or the device's peak are not known"
    )
    how = (
        "Profile one eager step (without graph capture) with record_shapes=True"
        if graphed and (a.trace.ops.input_dims >= 0).any()
        else advice.profile_shapes(a.program, a.trace.meta.format)
    )
    return finding(
        "gemm-heavy",
        "info",
        f"GEMMs take {share:.0%} of kernel time (reported at ≥ {GEMM_SHARE_FIRES:.0%}); {why}, "
        "so whether they run near the hardware's peak cannot be judged",
        f"{how} to judge GEMM efficiency; if they are slow for their shapes, "
        f"{advice.gemm_tuning(a.program)}.",
        {
            "gemm_share": round(share, 4),
            "top_gemm_kernels": [{"name": g.name, "time_us": us(g.total_ns)} for g in top],
        },
    )


def unified_memory(a: Analysis) -> Finding | None:
    """Managed memory migrated page by page when a kernel (or the host) first touches it."""
    moved = a.copies.get(MIGRATION)
    line = a.timeline
    if moved is None or not moved.count:
        return None
    span = line.device_span_ns if line else 0
    share = moved.time_ns / span if span else 0.0
    size = f", {nbytes(moved.known_bytes)}" if moved.known_bytes is not None else ""
    return finding(
        "unified-memory",
        "warning" if share >= COPY_WARNING else "info",
        f"unified-memory page migrations take {time_ns(moved.time_ns)} ({moved.count:,} "
        f"migrations{size}; {share:.1%} of the GPU's span, warning at ≥ {COPY_WARNING:.0%}): "
        "managed memory moves on first touch, and the kernel that touches it waits",
        advice.unified_memory(a.program),
        {
            "migrations": moved.count,
            "time_us": us(moved.time_ns),
            "bytes": moved.known_bytes,
            "share_of_span": round(share, 4),
        },
        impact_ns=moved.time_ns,
        cause="unified-memory",
    )


RULES: tuple[Callable[[Analysis], Finding | None], ...] = (
    idle_gap,
    cpu_bottleneck,
    sync_overhead,
    many_small_kernels,
    host_device_copies,
    unified_memory,
    manual_attention,
    gemm_heavy,
)


def findings(a: Analysis) -> list[Finding]:
    return [f for rule in RULES if (f := rule(a)) is not None]
