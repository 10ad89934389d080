"""Where the time goes, in one word with its reason: what paces this trace?

- `gpu-bound`: the device is busy ≥ 80 % of its active span — or of the span outside one idle gap
  that holds most of the idle time (that gap is then reported on its own, with its cause);
- otherwise the idle time's dominant cause decides, as the timeline attributes it:
  `cpu-bound` (the next work was launched only after the device went idle: the host is late),
  `sync-bound` (a blocking sync drained the queue, then the host relaunched; ≥ 15 % of the span),
  `dependency-bound` (the next kernel was already queued: it waited on an event, another stream,
  a collective or another process — not on the host; when those waits are mostly short
  (< 10 µs) inter-kernel gaps of a full queue, the device's own overhead: `gpu-bound`),
  `startup-bound` (start-up work — module loads, library initialisation, allocations, JIT —
  filled the gaps: the trace holds the cold start, not the steady loop),
  `underutilized` (the cause is unknown: kernels are not linked to their launches);
- `no-gpu-activity` and `unknown` (a source without timestamps) say why there is no verdict.

A backed-up launch queue (launch → start p50 ≥ 50 µs) means the GPU sets the pace of the launched
work: it is said in the reason, and the findings do not blame launch overhead then.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gpuscope.analysis.launch import LaunchStats
from gpuscope.analysis.sync import SyncStats
from gpuscope.analysis.timeline import Gap, Timeline
from gpuscope.document.units import time_ns
from gpuscope.trace.model import Trace

GPU_BOUND_UTILIZATION = 0.80  # device busy over its active span
SYNC_BOUND_SHARE = 0.15  # idle time after blocking syncs over the span
LONE_GAP_SHARE = 0.5  # one gap holding this share of the idle time is reported on its own
QUEUE_BACKED_UP_NS = 50_000  # launch → start p50 at or above this: the launch queue is full
QUEUE_MIN_KERNELS = 20  # fewer linked (non-graph) kernels say nothing about the queue
SECOND_CAUSE_SHARE = 0.25  # a second cause with this share of the idle time is named too

CAUSE_TEXT = {
    "host_wait": "the host launched the next work only after the GPU went idle",
    "sync_drain": "a blocking synchronize drained the queue, then the host had to relaunch",
    "kernel_wait": "the next kernel was already queued: it waited on an event, another stream, "
    "a collective, another process or the device's own scheduling, not on the host",
    "startup": "start-up work (module / code-object loads, library initialisation, allocations, "
    "run-time compilation) ran before the next launch: cold start, not the steady loop",
    "unknown": "the next kernel is not linked to its launch call, so the cause is unknown",
}
BOUND_BY_CAUSE = {
    "host_wait": "cpu-bound",
    "sync_drain": "sync-bound",
    "kernel_wait": "dependency-bound",
    "startup": "startup-bound",
    "unknown": "underutilized",
}


@dataclass(frozen=True)
class Verdict:
    bound: str
    reason: str
    utilization: float
    thresholds: dict[str, float]
    cause: str = ""  # the idle cause that decided it (a CAUSES name), "" when busy decided
    largest_gap: Gap | None = None
    utilization_outside_gap: float | None = None
    queue_p50_ns: int | None = None

    @property
    def queue_backed_up(self) -> bool:
        return self.queue_p50_ns is not None and self.queue_p50_ns >= QUEUE_BACKED_UP_NS


THRESHOLDS = {
    "gpu_bound_utilization": GPU_BOUND_UTILIZATION,
    "sync_bound_share": SYNC_BOUND_SHARE,
    "lone_gap_share_of_idle": LONE_GAP_SHARE,
    "queue_backed_up_us": QUEUE_BACKED_UP_NS / 1000,
}


def verdict(
    line: Timeline, sync: SyncStats | None, launch: LaunchStats | None, trace: Trace
) -> Verdict:
    span = sum(d.span_ns for d in line.devices)
    if not line.devices or span == 0:
        return Verdict("no-gpu-activity", "the trace holds no GPU activity", 0.0, THRESHOLDS)
    busy, idle = line.busy_ns, line.idle_ns
    utilization = busy / span
    queue = _queue_p50(launch)
    gap = line.gaps.largest
    lone = gap is not None and idle > 0 and gap.ns >= LONE_GAP_SHARE * idle
    outside = busy / (span - gap.ns) if lone and gap is not None and span > gap.ns else None
    base = Verdict(
        "gpu-bound",
        "",
        utilization,
        THRESHOLDS,
        largest_gap=gap,
        utilization_outside_gap=outside,
        queue_p50_ns=queue,
    )
    if utilization >= GPU_BOUND_UTILIZATION:
        reason = f"the GPU is busy {utilization:.1%} of its active span (≥ 80%)"
        return replace(base, reason=reason + _queue_note(queue, busy=True))
    if lone and gap is not None and outside is not None and outside >= GPU_BOUND_UTILIZATION:
        reason = (
            f"the GPU is busy {outside:.1%} of its span outside one {time_ns(gap.ns)} idle "
            f"gap ({gap.ns / span:.0%} of the span; {utilization:.1%} including it): "
            f"{CAUSE_TEXT[gap.cause]}"
        )
        return replace(base, reason=reason, cause=gap.cause)
    cause, share = _dominant(line)
    bound = BOUND_BY_CAUSE[cause]
    if cause == "kernel_wait" and _mostly_micro(line, cause):
        reason = (
            f"the GPU is busy {utilization:.1%} of its active span and the rest is short gaps "
            "(< 10 µs) between kernels that were already queued: the device's own "
            "kernel-to-kernel overhead, which fewer, larger (fused) kernels shorten"
        )
        return replace(base, reason=reason + _queue_note(queue, busy=True), cause=cause)
    if bound == "sync-bound" and line.gaps.attribution_ns.get("sync_drain", 0) < (
        SYNC_BOUND_SHARE * span
    ):
        cause, share = _dominant(line, exclude="sync_drain")
        bound = BOUND_BY_CAUSE[cause]
    reason = (
        f"the GPU is busy only {utilization:.1%} of its active span; {share:.0%} of its idle "
        f"time: {CAUSE_TEXT[cause]}{_second_cause(line, cause)}"
    )
    return replace(base, bound=bound, reason=reason + _queue_note(queue, busy=False), cause=cause)


def _mostly_micro(line: Timeline, cause: str) -> bool:
    total = line.gaps.attribution_ns.get(cause, 0)
    return total > 0 and line.gaps.micro_attribution_ns.get(cause, 0) >= 0.5 * total


def _second_cause(line: Timeline, first: str) -> str:
    attribution = line.gaps.attribution_ns
    total = sum(attribution.values())
    rest = {k: v for k, v in attribution.items() if k != first}
    if not rest or not total:
        return ""
    cause = max(rest, key=lambda k: rest[k])
    share = rest[cause] / total
    return f"; {share:.0%}: {CAUSE_TEXT[cause]}" if share >= SECOND_CAUSE_SHARE else ""


def _dominant(line: Timeline, exclude: str = "") -> tuple[str, float]:
    attribution = {k: v for k, v in line.gaps.attribution_ns.items() if k != exclude}
    total = sum(line.gaps.attribution_ns.values())
    if not attribution or total == 0:
        return "unknown", 0.0
    cause = max(attribution, key=lambda k: attribution[k])
    return cause, attribution[cause] / total


def _queue_p50(launch: LaunchStats | None) -> int | None:
    if launch is None or len(launch.queue_ns) < QUEUE_MIN_KERNELS:
        return None
    return int(np.median(launch.queue_ns))


def _queue_note(queue: int | None, busy: bool) -> str:
    if queue is None or queue < QUEUE_BACKED_UP_NS:
        return ""
    wait = f"{time_ns(queue)}"
    if busy:
        return f"; launched kernels wait {wait} (p50) in the launch queue: the host runs ahead"
    return (
        f"; between those gaps the host runs ahead (launched kernels wait {wait} p50 in the "
        "launch queue), so it is the gaps, not launch overhead, that cost time"
    )


def unknown_verdict(trace: Trace) -> Verdict:
    """No verdict without a timeline: say why instead of guessing."""
    reason = (
        f"the {trace.meta.format} input has no timestamps: busy and idle time, and so what "
        "paces the work, cannot be told"
    )
    return Verdict("unknown", reason, 0.0, THRESHOLDS)
