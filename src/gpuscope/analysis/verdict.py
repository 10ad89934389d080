"""CPU-bound / GPU-bound / sync-bound: one word for where the time goes, with its thresholds."""

from __future__ import annotations

from dataclasses import dataclass

from gpuscope.analysis.sync import SyncStats
from gpuscope.analysis.timeline import Timeline
from gpuscope.trace.model import Trace

GPU_BOUND_UTILIZATION = 0.80  # device busy over its active span
SYNC_BOUND_SHARE = 0.15  # blocking-sync time over the profiled window


@dataclass(frozen=True)
class Verdict:
    bound: str  # "gpu-bound", "cpu-bound", "sync-bound" or "no-gpu-activity"
    reason: str
    utilization: float
    thresholds: dict[str, float]


def verdict(line: Timeline, sync: SyncStats | None, window_ns: int, trace: Trace) -> Verdict:
    thresholds = {
        "gpu_bound_utilization": GPU_BOUND_UTILIZATION,
        "sync_bound_share": SYNC_BOUND_SHARE,
    }
    span = sum(d.span_ns for d in line.devices)
    if not line.devices or span == 0:
        return Verdict("no-gpu-activity", "the trace holds no GPU activity", 0.0, thresholds)
    utilization = line.busy_ns / span
    causes = line.gaps.attribution_ns
    if utilization >= GPU_BOUND_UTILIZATION:
        reason = (
            f"the GPU is busy {utilization:.1%} of its active span (≥ {GPU_BOUND_UTILIZATION:.0%})"
        )
        return Verdict("gpu-bound", reason, utilization, thresholds)
    if (
        sync is not None
        and sync.share >= SYNC_BOUND_SHARE
        and causes.get("sync_drain", 0) >= causes.get("host_wait", 0)
    ):
        reason = (
            f"blocking syncs take {sync.share:.0%} of the window (≥ {SYNC_BOUND_SHARE:.0%}) and "
            "most device idle time follows a sync"
        )
        return Verdict("sync-bound", reason, utilization, thresholds)
    idle = line.idle_ns
    waiting = causes.get("host_wait", 0) + causes.get("sync_drain", 0)
    reason = (
        f"the GPU is busy only {utilization:.1%} of its active span; "
        f"{waiting / idle if idle else 0:.0%} of its idle time waits on the host"
    )
    return Verdict("cpu-bound", reason, utilization, thresholds)


def unknown_verdict(trace: Trace) -> Verdict:
    """No verdict without a timeline: say why instead of guessing."""
    thresholds = {
        "gpu_bound_utilization": GPU_BOUND_UTILIZATION,
        "sync_bound_share": SYNC_BOUND_SHARE,
    }
    reason = (
        f"the {trace.meta.format} input has no timestamps: busy and idle time, and so CPU- or "
        "GPU-bound, cannot be told"
    )
    return Verdict("unknown", reason, 0.0, thresholds)
