"""The communication findings: exposed communication, identical collectives whose times vary
(a straggler signal), and message sizes that run far below the bandwidth the trace shows.

Each fires at the threshold its message states; its severity follows the time at stake in this
trace. A host-bound verdict caps exposed communication at "info": while the GPU waits for the
host, hiding communication behind compute does not shorten the step.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.communication.exposure import Exposure
from gpuscope.analysis.communication.groups import group_ids
from gpuscope.analysis.communication.model import Communication
from gpuscope.analysis.communication.names import KINDS
from gpuscope.analysis.communication.stats import (
    MIN_CALLS,
    SLOW_FACTOR,
    SPREAD_MAX,
    SPREAD_P90,
    Bucket,
)
from gpuscope.document.units import duration, time_ns
from gpuscope.trace.model import KERNEL

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

EXPOSED_WARNING = 0.10  # exposed communication over the step time (or the GPU span)
EXPOSED_INFO = 0.03
VARIANCE_WARNING = 0.05  # exposed time above the medians of varying identical calls / span
VARIANCE_INFO = 0.01
BANDWIDTH_WARNING = 0.05  # exposed time above the trace's own envelope / span
BANDWIDTH_INFO = 0.01
HOST_BOUND = ("cpu-bound", "sync-bound")
SAME_STREAM_SHARE = 0.5  # exposed time on streams that also run compute: serialised by design
MANY_CALLS_PER_STEP = 50  # collectives of one kind per profiler step ...
SMALL_CALL_NS = 50_000  # ... with a median under 50 µs: latency-bound, worth coalescing
LABEL = {
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "all_to_all": "all-to-all",
    "send_recv": "send/recv",
}


def label(kind: str) -> str:
    return LABEL.get(kind, kind.replace("_", " "))


def findings(a: Analysis, result: Communication) -> list[Finding]:
    found = [exposed(a, result), variance(a, result), bandwidth(a, result)]
    return [f for f in found if f is not None]


def exposed(a: Analysis, result: Communication) -> Finding | None:
    shown = result.exposure
    if shown is None or not shown.span_ns or not shown.exposed_ns:
        return None
    share, what, at_stake = _exposed_share(shown)
    if share < EXPOSED_INFO:
        return None
    host_bound = a.verdict.bound in HOST_BOUND
    kinds = _exposed_by_kind(result)
    top = ", ".join(f"{label(k)} {time_ns(v['exposed_ns'])}" for k, v in list(kinds.items())[:3])
    waiting = sum(b.excess_exposed_ns for b in result.buckets if b.varies)
    message = (
        f"communication is exposed {time_ns(at_stake)}, {share:.1%} {what} (warning at ≥ "
        f"{EXPOSED_WARNING:.0%}, reported at ≥ {EXPOSED_INFO:.0%}): no compute kernel runs "
        f"beside it ({top}); {shown.overlapped_ns / shown.comm_ns:.0%} of the communication "
        "time overlaps compute. "
        + (
            f"{time_ns(waiting)} of the exposed time is identical calls running above their "
            "median (see collective-variance): likely waiting for a late peer"
            if waiting
            else "Part of it may be waiting for a slower peer"
        )
    )
    if host_bound:
        message += (
            f"; the verdict is {a.verdict.bound}: the GPU also waits for the host, so hiding "
            "communication shortens the step only once the host keeps up"
        )
    same_stream = _same_stream_exposed(a, result)
    evidence = _exposed_evidence(shown, kinds, same_stream, waiting)
    evidence["verdict"] = a.verdict.bound
    small = _small_calls(result, next(iter(kinds)))
    if small is not None:
        evidence["calls_per_step"], evidence["median_us"] = small
    severity = "warning" if share >= EXPOSED_WARNING and not host_bound else "info"
    action = _exposed_action(result, kinds, same_stream / shown.exposed_ns, small)
    return finding("exposed-communication", severity, message, action, evidence,
                   impact_ns=at_stake, cause="communication")  # fmt: skip


def _exposed_share(shown: Exposure) -> tuple[float, str, int]:
    """(share, of what, time): over the ProfilerStep ranges when there are some, else the span."""
    step_time = shown.step_ns * shown.devices
    if step_time:
        what = f"of step time ({len(shown.steps)} steps)"
        return shown.step_exposed_ns / step_time, what, shown.step_exposed_ns
    return shown.exposed_ns / shown.span_ns, "of the GPU span", shown.exposed_ns


def _exposed_evidence(
    shown: Exposure, kinds: dict[str, dict[str, int]], same_stream: int, waiting: int
) -> dict[str, Any]:
    step_time = shown.step_ns * shown.devices
    return {
        "exposed_us": us(shown.exposed_ns),
        "communication_us": us(shown.comm_ns),
        "overlapped_share": round(shown.overlapped_ns / shown.comm_ns, 4),
        "exposed_share_of_span": round(shown.exposed_ns / shown.span_ns, 4),
        "exposed_share_of_steps": round(shown.step_exposed_ns / step_time, 4)
        if step_time
        else None,
        "exposed_on_compute_streams_us": us(same_stream),
        "exposed_above_median_of_varying_calls_us": us(waiting),
        "by_kind": {
            k: {"exposed_us": us(v["exposed_ns"]), "time_us": us(v["ns"]), "count": v["n"]}
            for k, v in kinds.items()
        },
    }


def _small_calls(result: Communication, kind: str) -> tuple[float, float] | None:
    """(calls per step, median µs) of `kind` when the steps make many short ones."""
    calls = result.calls
    mine = (calls.kind == KINDS.index(kind)) & (result.step_of >= 0)
    steps = len(result.step_names)
    if not steps or not mine.any():
        return None
    per_step = mine.sum() / steps
    median = float(np.median(calls.dur[mine]))
    if per_step < MANY_CALLS_PER_STEP or median >= SMALL_CALL_NS:
        return None
    return round(float(per_step), 2), us(median)


def _exposed_by_kind(result: Communication) -> dict[str, dict[str, int]]:
    """Per collective kind: own exposed time (per kernel), time and count; most exposed first."""
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"exposed_ns": 0, "ns": 0, "n": 0})
    for row in result.collectives:
        entry = kinds[row.kind]
        entry["exposed_ns"] += row.exposed_ns
        entry["ns"] += row.stats.total_ns
        entry["n"] += row.stats.count
    return dict(sorted(kinds.items(), key=lambda kv: -kv[1]["exposed_ns"]))


def _same_stream_exposed(a: Analysis, result: Communication) -> int:
    """Exposed communication on streams that also run compute kernels: serialised with it."""
    gpu = a.trace.gpu
    shown = result.exposure
    if shown is None:
        return 0
    compute = (gpu.kind == KERNEL) & (a.classes.category != CATEGORIES.index("communication"))
    device, stream = gpu.device[compute].astype(np.int64), gpu.stream[compute]
    _, first = group_ids(device, stream)
    pairs = {(int(device[i]), int(stream[i])) for i in first}
    return sum(s.exposed_ns for s in shown.streams if (s.device, s.stream) in pairs)


def _exposed_action(
    result: Communication,
    kinds: dict[str, Any],
    same_stream: float,
    small: tuple[float, float] | None,
) -> str:
    first = next(iter(kinds), "unknown")
    parts = []
    if small is not None:
        how = (
            "DDP's gradient buckets, all_reduce_coalesced, one flat buffer"
            if result.training
            else "one flat buffer per layer, all_reduce_coalesced, or the serving engine's "
            "custom all-reduce for small messages"
        )
        parts.append(
            f"The steps make {small[0]:,.0f} {label(first)} calls each, with a median of "
            f"{duration(small[1])}: so many short collectives each pay NCCL's launch and latency; "
            f"coalesce them ({how}) into fewer, larger calls."
        )
    if same_stream >= SAME_STREAM_SHARE:
        parts.append(
            f"{same_stream:.0%} of the exposed time runs on streams that also run compute, so it "
            "is serialised with compute by construction: issue those collectives asynchronously "
            "(async_op=True and wait() just before the result is needed) so they run on NCCL's "
            "own stream."
        )
    parts.append(_kind_action(first, result.training, result.wrapper))
    parts.append(
        "Only once overlap is exhausted, look at NCCL's choices (NCCL_DEBUG=INFO, "
        "NCCL_DEBUG_SUBSYS=TUNING) before forcing NCCL_ALGO / NCCL_PROTO."
    )
    return " ".join(parts)


def _kind_action(kind: str, training: bool, wrapper: str = "") -> str:
    if kind in ("all_gather", "reduce_scatter") and wrapper == "fsdp2":
        return (
            "FSDP2 (fully_shard): prefetch the next all-gathers explicitly (module."
            "set_modules_to_forward_prefetch / set_modules_to_backward_prefetch), keep the last "
            "blocks unsharded after forward (reshard_after_forward=False on them), and shard in "
            "units large enough to hide each gather behind the previous unit's compute."
        )
    if kind in ("all_gather", "reduce_scatter") and wrapper == "fsdp1":
        return (
            "FSDP: prefetch the next all-gather (forward_prefetch=True, backward_prefetch="
            "BackwardPrefetch.BACKWARD_PRE), let it run ahead (limit_all_gathers=False where "
            "memory allows), and wrap in units large enough to hide each gather behind the "
            "previous unit's compute."
        )
    if kind in ("all_gather", "reduce_scatter"):
        return (
            "Sharded data parallel (FSDP / ZeRO): prefetch the next all-gather (FSDP2 "
            "set_modules_to_forward_prefetch; FSDP1 forward_prefetch / backward_prefetch; ZeRO "
            "overlap_comm), keep the last layers unsharded, and use units large enough to hide "
            "each gather behind the previous unit's compute."
        )
    if kind == "all_to_all":
        return (
            "All-to-all (expert-parallel dispatch / combine, sparse-feature or embedding "
            "distribution, sequence parallel): start it before the compute that does not need "
            "its result — pipeline the next batch's input distribution (TorchRec's "
            "TrainPipelineSparseDist), keep two micro-batches in flight for MoE layers (DeepEP's "
            "overlap hooks) — and balance the work per rank so no rank waits for the busiest one."
        )
    if kind == "all_reduce" and training:
        return (
            "Data parallel: overlap the gradient all-reduce with backward — DDP's "
            "gradient_as_bucket_view=True (no bucket copies), static_graph=True, bucket_cap_mb "
            "tuned so the first buckets start early, no find_unused_parameters unless needed, "
            "no_sync() for gradient-accumulation micro-steps; no synchronous all_reduce after "
            "backward."
        )
    if kind == "all_reduce":
        return (
            "Tensor parallel (no backward in this trace): overlap the all-reduce with the next "
            "GEMM (async tensor parallel / symmetric-memory fused all-reduce-matmul, torch."
            "compile's micro-pipeline TP), or fuse it with the following norm (fused "
            "all-reduce + RMSNorm kernels); sequence parallel turns it into reduce-scatter + "
            "all-gather that overlap better."
        )
    return (
        "Overlap the communication with independent compute: issue it asynchronously on its own "
        "stream as early as its input is ready, and wait for it only where its result is used."
    )


def variance(a: Analysis, result: Communication) -> Finding | None:
    shown = result.exposure
    varying = [b for b in result.buckets if b.varies]
    if shown is None or not shown.span_ns or not varying:
        return None
    at_stake = sum(b.excess_exposed_ns for b in varying)
    share = at_stake / shown.span_ns
    if share < VARIANCE_INFO:
        return None
    how = "same size" if result.grouping and "size" in result.grouping else "same call each step"
    message = (
        f"{len(varying)} group(s) of identical collectives ({how}; ≥ {MIN_CALLS} calls) vary "
        f"in duration (p90 ≥ {SPREAD_P90}× or max ≥ {SPREAD_MAX}× the median): "
        f"{time_ns(sum(b.excess_ns for b in varying))} above their medians, {time_ns(at_stake)} of "
        f"it exposed ({share:.1%} of the GPU span; warning at ≥ {VARIANCE_WARNING:.0%}, "
        f"reported at ≥ {VARIANCE_INFO:.0%}). On one rank a collective's time includes waiting "
        "for the slowest peer, so this points at a late rank or uneven work, not at the link; "
        "this trace alone cannot name the late rank"
    )
    where = _slowest_steps(result, varying)
    if where:
        step, count = next(iter(where.items()))
        if count * 2 >= len(varying):
            message += f"; the slowest call of {count} of the {len(varying)} groups is in {step}"
    return finding(
        "collective-variance",
        "warning" if share >= VARIANCE_WARNING else "info",
        message,
        "Open the other ranks' traces at the steps listed: the late rank's own call of that "
        "collective is short (it arrived last), the others' are long. Usual causes: data "
        "loading or preprocessing on one rank, uneven batch or sequence lengths, Python GC or "
        "host jitter (gc.freeze(), pinned CPU threads), a throttled GPU or a slow link / NIC. "
        "PyTorch's NCCL flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE) records every rank's "
        "collective timing.",
        {
            "grouping": result.grouping,
            "excess_us": us(sum(b.excess_ns for b in varying)),
            "excess_exposed_us": us(at_stake),
            "slowest_call_steps": where,
            "groups": [_bucket_evidence(result, b) for b in varying[:5]],
        },
        impact_ns=at_stake,
        cause="imbalance",
    )


def _slowest_steps(result: Communication, varying: list[Bucket]) -> dict[str, int]:
    """Profiler step → how many varying groups have their slowest call in it (most first)."""
    counts = Counter(int(result.step_of[b.slowest]) for b in varying)
    named = {result.step_names[s]: n for s, n in counts.most_common() if s >= 0}
    return dict(list(named.items())[:5])


def _bucket_evidence(result: Communication, b: Bucket) -> dict[str, Any]:
    step = int(result.step_of[b.slowest])
    return {
        "kind": b.kind,
        "kernel": result.names[int(result.calls.parsed_names[b.which])],
        "bytes": b.bytes if b.bytes >= 0 else None,
        "position_in_step": b.position if b.position >= 0 else None,
        "count": b.count,
        "p50_us": us(b.p50_ns),
        "p90_us": us(b.p90_ns),
        "max_us": us(b.max_ns),
        "excess_exposed_us": us(b.excess_exposed_ns),
        "slowest_step": result.step_names[step] if step >= 0 else None,
        "slowest_start_us": us(int(result.calls.start[b.slowest])),
    }


def bandwidth(a: Analysis, result: Communication) -> Finding | None:
    shown = result.exposure
    slow = [r for r in result.sizes if r.slow]
    if shown is None or not shown.span_ns or not slow:
        return None
    at_stake = sum(r.excess_exposed_ns for r in slow)
    share = at_stake / shown.span_ns
    if share < BANDWIDTH_INFO:
        return None
    worst = max(slow, key=lambda r: r.excess_exposed_ns)
    message = (
        f"{len(slow)} message size(s) run at ≥ {SLOW_FACTOR:g}× the time this trace's own "
        f"latency-bandwidth envelope allows (e.g. {label(worst.kind)} of "
        f"{worst.bytes / 2**20:,.2f} MiB: {worst.busbw:,.1f} GB/s bus bandwidth, median "
        f"{time_ns(worst.p50_ns)}, against {worst.best_busbw:,.1f} GB/s and "
        f"{time_ns(worst.latency_ns)} latency seen at other sizes): {time_ns(at_stake)} of exposed "
        f"time above the envelope ({share:.1%} of the GPU span; warning at ≥ "
        f"{BANDWIDTH_WARNING:.0%}, reported at ≥ {BANDWIDTH_INFO:.0%}). The envelope assumes "
        "time = latency + size × bus factor / bandwidth, fitted to the best this trace shows; "
        "the link's rated speed is not in the trace"
    )
    return finding(
        "low-bus-bandwidth",
        "warning" if share >= BANDWIDTH_WARNING else "info",
        message,
        "Check whether those calls overlap heavy compute (communication kernels then get fewer "
        "SMs and less memory bandwidth), run in a different process group or over a slower "
        "link, or wait for a late peer (compare the ranks); measure the link with nccl-tests "
        "(all_reduce_perf -b 8 -e 1G -f 2) on the same machines for its real curve. Small "
        "messages are latency-bound: coalesce them (larger buckets, fewer, bigger collectives).",
        {
            "sizes": [
                {
                    "kind": r.kind,
                    "bytes": r.bytes,
                    "ranks": r.ranks,
                    "count": r.count,
                    "p50_us": us(r.p50_ns),
                    "busbw_gbps": round(r.busbw, 2),
                    "envelope_us": us(r.envelope_ns),
                    "excess_exposed_us": us(r.excess_exposed_ns),
                }
                for r in sorted(slow, key=lambda r: -r.excess_exposed_ns)[:5]
            ],
            "best_busbw_gbps": round(worst.best_busbw, 2),
            "latency_us": us(worst.latency_ns),
        },
        impact_ns=at_stake,
        cause="communication",
    )
