"""Findings beside the causes: the rules of the core that are not a part of the step-time
breakdown (`analysis.causes` has those) — one idle gap holding most of the idle time, unified
memory, hand-written attention, GEMM time that cannot be judged.

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
from gpuscope.analysis.hoststate import STATES, state_text
from gpuscope.analysis.hotspots import MIGRATION
from gpuscope.analysis.launch import GRAPH_REPLAYED
from gpuscope.document.units import nbytes, time_ns
from gpuscope.trace.model import KERNEL

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

LONE_GAP_MIN = 0.10  # one gap this share of the span is worth its own finding
MIGRATION_WARNING = 0.05  # unified-memory migrations over the span: a warning from here
ATTENTION_MIN = 0.01  # hand-written attention: its GPU time over kernel time
GEMM_SHARE_FIRES = 0.50
ATTENTION_OPS = ("aten::bmm", "aten::baddbmm")
SOFTMAX_OPS = ("aten::_softmax", "aten::softmax", "aten::_safe_softmax")


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
        f"{LONE_GAP_MIN:.0%}): {_cause_text(a, gap.cause)}",
        _gap_action(a, gap.cause),
        evidence,
        impact_ns=gap.ns,
        cause=GAP_CAUSE.get(gap.cause),
    )


def _cause_text(a: Analysis, cause: str) -> str:
    return state_text(cause, a.program.kind) if cause in STATES else cause


GAP_CAUSE = {
    "host_work": "host-work",
    "launch": "host-launch",
    "host_late": "host-work",
    "sync": "host-sync",
    "startup": "cold-start",
    "copy_staging": "copies",
    "queued": "dependency",
}


def _gap_action(a: Analysis, cause: str) -> str:
    if cause in ("host_work", "launch", "host_late"):
        return advice.host_work(a.program)
    if cause == "sync":
        return advice.host_sync(a.program)
    if cause == "startup":
        return advice.warm_up(a.program, a.trace.meta.format) + "."
    if cause == "queued":
        return advice.dependency()
    if cause == "copy_staging":
        return advice.copies(a.program)
    return (
        "Record launch correlation (a newer profiler, or enable the runtime API trace) to "
        "tell what the GPU waited for."
    )


def _calls_within(a: Analysis, lo: int, hi: int) -> dict[str, int]:
    host = a.trace.host
    inside = (host.start < hi) & (host.end > lo)
    names, counts = np.unique(host.name[inside], return_counts=True)
    order = np.argsort(-counts)[:8]
    return {a.trace.names[names[i]]: int(counts[i]) for i in order}


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
    graphed = a.launch.graph_share >= GRAPH_REPLAYED
    shapes = bool((a.trace.ops.input_dims >= 0).any())
    asked = bool(a.trace.meta.extra.get("record_shapes")) or shapes  # torch.profiler's header
    why = (
        "their kernels are replayed from CUDA/HIP graphs, which carry no operator shapes"
        + (" (record_shapes was on)" if asked else "")
        if graphed
        else "the trace has no recorded shapes"
        if not asked
        else "their shapes or the device's peak are not known"
    )
    how = (
        "Profile one eager step (without graph capture)"
        + ("" if asked else " with record_shapes=True")
        if graphed and a.program.is_("pytorch")
        else advice.profile_shapes(a.program, a.trace.meta.format)
        if not asked
        else "Look up the device's peak (gpuscope bench measures it) and the GEMMs' shapes"
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
        "warning" if share >= MIGRATION_WARNING else "info",
        f"unified-memory page migrations take {time_ns(moved.time_ns)} ({moved.count:,} "
        f"migrations{size}; {share:.1%} of the GPU's span, warning at ≥ {MIGRATION_WARNING:.0%}): "
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
    unified_memory,
    manual_attention,
    gemm_heavy,
)


def findings(a: Analysis) -> list[Finding]:
    return [f for rule in RULES if (f := rule(a)) is not None]
