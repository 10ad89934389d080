"""Where the time goes, in one word with its reason, read off the step-time breakdown
(`analysis.breakdown`: the steady steps, else the device's active span):

- the device is busy ≥ 80 % of that time: it paces the work — `gpu-bound` (compute, or
  communication), or `copy-bound` when copies hold more of it than kernels do;
- otherwise the idle time decides, by what the host was doing under it, its states summed by
  the bound they point to (the headline names the largest state of the group):
  `cpu-bound` (launch / dispatch, host work outside operators, or a dispatch that came late),
  `sync-bound` (blocking syncs drained the queue; only from SYNC_BOUND_SHARE of the time, else
  the next part decides), `dependency-bound` (the next work was already queued: an event,
  another stream, a collective — and when those waits are mostly short gaps between queued
  kernels, the device's own overhead: `gpu-bound`), `startup-bound` (start-up work: the trace
  holds the cold start), `copy-bound` (staging pageable copies), `underutilized` (the trace
  cannot say: no launch links and no host calls);
- without steps, one idle gap holding most of the idle time is reported on its own when the
  device is ≥ 80 % busy outside it (`gpu-bound outside one … gap`, with that gap's state); and a
  start that holds most of the idle time before a steady part ≥ 80 % busy (a model loading and
  warming up, then generating) is said so: `gpu-bound after a … start`;
- `no-gpu-activity` and `unknown` (a source without timestamps) say why there is no verdict.

`utilization` stays the device's busy time over its active span, summed over devices.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gpuscope.analysis.breakdown import DEVICE_PARTS, PART_LABELS, PARTS, Breakdown, part_text
from gpuscope.analysis.hoststate import STATES
from gpuscope.analysis.launch import LaunchStats
from gpuscope.analysis.timeline import Gap, Timeline
from gpuscope.document.units import time_ns
from gpuscope.trace.model import Trace

GPU_BOUND_UTILIZATION = 0.80  # device busy over the judged time
SYNC_BOUND_SHARE = 0.15  # sync wait over the judged time
LONE_GAP_SHARE = 0.5  # one gap holding this share of the idle time is reported on its own
QUEUE_BACKED_UP_NS = 50_000  # launch → start p50 at or above this: the launch queue is full
QUEUE_MIN_KERNELS = 20  # fewer linked (non-graph) kernels say nothing about the queue
SECOND_PART_SHARE = 0.05  # a second part with this share of the time is named too
MICRO_SHARE = 0.5  # queued time mostly in gaps under 10 µs: the device's own overhead
WARM_CANDIDATES = 8  # without steps: the ends of this many largest gaps are tried as the split
STEADY_MIN = 0.4  # ... and the steady part after it must be this share of the span

BOUND_BY_PART = {
    "compute": "gpu-bound",
    "exposed_comm": "gpu-bound",
    "copies": "copy-bound",
    "launch": "cpu-bound",
    "host_work": "cpu-bound",
    "host_late": "cpu-bound",
    "sync": "sync-bound",
    "copy_staging": "copy-bound",
    "queued": "dependency-bound",
    "startup": "startup-bound",
    "unknown": "underutilized",
}


@dataclass(frozen=True)
class Verdict:
    bound: str
    reason: str
    utilization: float
    thresholds: dict[str, float]
    cause: str = ""  # the part of the breakdown that decided it ("" for no verdict)
    largest_gap: Gap | None = None
    utilization_outside_gap: float | None = None
    queue_p50_ns: int | None = None
    steady_from_ns: int | None = None  # without steps: where the steady part begins

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
    line: Timeline, launch: LaunchStats | None, trace: Trace, parts: Breakdown, kind: str = ""
) -> Verdict:
    """The verdict over the judged part of the breakdown; `kind`: the program kind, whose terms
    the reason uses."""
    span = sum(d.span_ns for d in line.devices)
    if not line.devices or span == 0:
        return Verdict("no-gpu-activity", "the trace holds no GPU activity", 0.0, THRESHOLDS)
    base = Verdict(
        "gpu-bound",
        "",
        line.busy_ns / span,
        THRESHOLDS,
        largest_gap=line.gaps.largest,
        queue_p50_ns=_queue_p50(launch),
    )
    judged = parts.judged()
    wall = int(judged.sum())
    busy = sum(int(judged[PARTS.index(p)]) for p in DEVICE_PARTS)
    if not wall:
        return replace(base, reason="the judged steps hold no time")
    scope = _scope(parts)
    if busy >= GPU_BOUND_UTILIZATION * wall:
        return _device_bound(base, parts, busy, wall, scope)
    lone = _lone_gap(base, line, parts, kind) or _warm_start(base, parts, kind)
    if lone is not None:
        return lone
    return _idle_bound(base, parts, busy, wall, scope, line, kind)


def _scope(parts: Breakdown) -> str:
    if not parts.judged_by_steps:
        return "its active span"
    steady = len(parts.steps) - parts.warmup
    names = parts.steps.names[parts.steady]
    which = names[0] if steady == 1 else f"{names[0]} … {names[-1]}"
    warm = f"; {parts.warmup} warm-up step(s) left out" if parts.warmup else ""
    return f"the step time ({steady} step{'s' * (steady != 1)}: {which}{warm})"


def _device_bound(base: Verdict, parts: Breakdown, busy: int, wall: int, scope: str) -> Verdict:
    judged = parts.judged()
    device = {p: int(judged[PARTS.index(p)]) for p in DEVICE_PARTS}
    top = max(device, key=lambda p: device[p])
    bound = (
        BOUND_BY_PART[top]
        if top != "copies" or device["copies"] > device["compute"]
        else ("gpu-bound")
    )
    reason = (
        f"the GPU is busy {busy / wall:.1%} of {scope} (≥ {GPU_BOUND_UTILIZATION:.0%}); "
        f"{PART_LABELS[top]} {device[top] / wall:.1%}: {part_text(top)}"
        + _others(parts, wall, exclude=(top,))
        + _queue_note(base.queue_p50_ns)
    )
    return replace(base, bound=bound, reason=reason, cause=top)


def _idle_bound(
    base: Verdict, parts: Breakdown, busy: int, wall: int, scope: str, line: Timeline, kind: str
) -> Verdict:
    judged = parts.judged()
    idle = {s: int(judged[PARTS.index(s)]) for s in STATES}
    groups: dict[str, int] = {}
    for state, ns in idle.items():
        groups[BOUND_BY_PART[state]] = groups.get(BOUND_BY_PART[state], 0) + ns
    if groups["sync-bound"] < SYNC_BOUND_SHARE * wall:
        groups.pop("sync-bound")
    if sum(ns for g, ns in groups.items() if g != "underutilized"):
        groups.pop("underutilized")
    bound = max(groups, key=lambda g: groups[g])
    top = max((s for s in STATES if BOUND_BY_PART[s] == bound), key=lambda s: idle[s])
    if top == "queued" and _mostly_micro(line):
        reason = (
            f"the GPU is busy {busy / wall:.1%} of {scope} and the rest is short gaps (< 10 µs) "
            "between kernels that were already queued: the device's own kernel-to-kernel "
            "overhead, which fewer, larger (fused) kernels shorten" + _queue_note(base.queue_p50_ns)
        )
        return replace(base, reason=reason, cause=top)
    alongside = [s for s in STATES if BOUND_BY_PART[s] == bound and s != top
                 and idle[s] >= SECOND_PART_SHARE * wall]  # fmt: skip
    together = ""
    if alongside:
        named = ", ".join(f"{PART_LABELS[s]} {idle[s] / wall:.1%}" for s in alongside)
        together = f" (with {named}: {groups[bound] / wall:.1%} waiting on the host in all)"
    reason = (
        f"the GPU is busy only {busy / wall:.1%} of {scope}; {PART_LABELS[top]} "
        f"{idle[top] / wall:.1%}: {part_text(top, kind)}{together}"
        + _others(parts, wall, exclude=(top, *alongside))
    )
    return replace(base, bound=bound, reason=reason, cause=top)


def _others(parts: Breakdown, wall: int, exclude: tuple[str, ...]) -> str:
    """The next largest parts (from SECOND_PART_SHARE of the time), as `; the other parts: sync
    wait 12%`."""
    judged = parts.judged()
    rest = [(p, int(judged[i])) for i, p in enumerate(PARTS) if p not in exclude]
    shown = [f"{PART_LABELS[p]} {ns / wall:.1%}" for p, ns in sorted(rest, key=lambda x: -x[1])
             if ns >= SECOND_PART_SHARE * wall][:2]  # fmt: skip
    return f"; the other parts: {', '.join(shown)}" if shown else ""


def _lone_gap(base: Verdict, line: Timeline, parts: Breakdown, kind: str) -> Verdict | None:
    """Without steps: one gap holding most of the idle time, the device busy outside it."""
    if parts.judged_by_steps:
        return None
    gap = line.gaps.largest
    span = line.device_span_ns
    idle = line.idle_ns
    if gap is None or idle <= 0 or gap.ns < LONE_GAP_SHARE * idle or span <= gap.ns:
        return None
    outside = line.busy_ns / (span - gap.ns)
    if outside < GPU_BOUND_UTILIZATION:
        return None
    state = gap.cause if gap.cause in STATES else "unknown"
    reason = (
        f"the GPU is busy {outside:.1%} of its span outside one {time_ns(gap.ns)} idle gap "
        f"({gap.ns / span:.0%} of the span; {base.utilization:.1%} including it): "
        f"{part_text(state, kind)}"
    )
    return replace(base, reason=reason, cause=state, utilization_outside_gap=outside)


def _warm_start(base: Verdict, parts: Breakdown, kind: str) -> Verdict | None:
    """Without steps: a start that holds most of the idle time (loading, warm-up) before a
    steady part in which the device is ≥ 80 % busy. The split is the end of the latest of the
    largest gaps that leaves a steady part of STEADY_MIN of the span."""
    if parts.judged_by_steps:
        return None
    idle, (w0, w1) = parts.idle, parts.window
    inside = (idle.start >= w0) & (idle.end <= w1)
    lo, hi = idle.start[inside], idle.end[inside]
    span = w1 - w0
    total = int((hi - lo).sum())
    if not total or not span:
        return None
    candidates = hi[np.argsort(-(hi - lo))[:WARM_CANDIDATES]]
    candidates = candidates[w1 - candidates >= STEADY_MIN * span]
    for split in sorted(candidates.tolist(), reverse=True)[:1]:
        after = int(np.clip(hi - np.maximum(lo, split), 0, None).sum())
        steady = w1 - split
        if after > (1 - GPU_BOUND_UTILIZATION) * steady or total - after < LONE_GAP_SHARE * total:
            continue
        state = _state_before(parts, split)
        reason = (
            f"the GPU is busy {1 - after / steady:.1%} of its span after the first "
            f"{time_ns(split - w0)} ({(split - w0) / span:.0%} of the span; "
            f"{base.utilization:.1%} including it), which hold {(total - after) / total:.0%} of "
            f"its idle time — the start (loading, warm-up), not the steady work: "
            f"{part_text(state, kind)}"
        )
        return replace(base, reason=reason, cause=state, steady_from_ns=int(split),
                       utilization_outside_gap=1 - after / steady)  # fmt: skip
    return None


def _state_before(parts: Breakdown, split: int) -> str:
    """The host state holding most of the idle time before `split`."""
    pieces = parts.idle.pieces
    before = np.clip(np.minimum(pieces.end, split) - pieces.start, 0, None)
    sums = np.bincount(pieces.state, weights=before, minlength=len(STATES))
    return STATES[int(np.argmax(sums))]


def _mostly_micro(line: Timeline) -> bool:
    total = line.gaps.attribution_ns.get("queued", 0)
    return total > 0 and line.gaps.micro_attribution_ns.get("queued", 0) >= MICRO_SHARE * total


def _queue_p50(launch: LaunchStats | None) -> int | None:
    if launch is None or len(launch.queue_ns) < QUEUE_MIN_KERNELS:
        return None
    return int(np.median(launch.queue_ns))


def _queue_note(queue: int | None) -> str:
    if queue is None or queue < QUEUE_BACKED_UP_NS:
        return ""
    return (
        f"; launched kernels wait {time_ns(queue)} (p50) in the launch queue: the host runs ahead"
    )


def unknown_verdict(trace: Trace) -> Verdict:
    """No verdict without a timeline: say why instead of guessing."""
    if trace.provides("timestamps") and not len(trace.gpu.start):
        return Verdict("no-gpu-activity", "the trace holds no GPU activity", 0.0, THRESHOLDS)
    reason = (
        f"the {trace.meta.format} input has no timestamps: busy and idle time, and so what "
        "paces the work, cannot be told"
    )
    return Verdict("unknown", reason, 0.0, THRESHOLDS)
