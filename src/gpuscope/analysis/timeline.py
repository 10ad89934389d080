"""The device timeline: busy time (interval union per device), idle time, span, and the gaps
between GPU work with what they were waiting on.

Busy time counts kernels, memcpys and memsets; `gpu_user_annotation` spans lie over kernels and
are never counted. Overlapping work on one stream (seen on ROCm and with programmatic dependent
launch) is reported as clipped time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with, take
from gpuscope.analysis._unique import unique
from gpuscope.analysis.launch import Links
from gpuscope.analysis.strip import Strip, busy_strip
from gpuscope.analysis.sync import SyncStats
from gpuscope.trace.model import I64, Trace

MICRO_GAP_NS = 10_000  # gaps under 10 µs: launch-overhead scale ("micro"); others "macro"
GAP_BINS_US = (0, 1, 2, 5, 10, 20, 50, 100, 1000)
LONGEST = 5  # gaps marked on the busy / idle strip


@dataclass(frozen=True)
class DeviceTimeline:
    device: int
    busy_ns: int
    span_ns: int
    first_ns: int
    last_ns: int

    @property
    def idle_ns(self) -> int:
        return self.span_ns - self.busy_ns


@dataclass(frozen=True)
class Gap:
    """One idle interval of a device: [start, end), why, and the GPU ops on either side."""

    start: int
    end: int
    device: int
    cause: str
    before: int  # row of trace.gpu that ended at `start` (-1 if unknown)
    after: int  # row of trace.gpu that started at `end`

    @property
    def ns(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Gaps:
    count: int
    total_ns: int
    micro_count: int
    micro_ns: int
    histogram: list[tuple[float, float | None, int, int]]  # (lo µs, hi µs, count, ns)
    attribution_ns: dict[str, int] = field(default_factory=dict)
    attribution_count: dict[str, int] = field(default_factory=dict)
    largest: Gap | None = None
    causes: I64 | None = None  # per gap, index into CAUSES (the order of the columns above)
    micro_attribution_ns: dict[str, int] = field(default_factory=dict)  # gaps < MICRO_GAP_NS
    after_sync_ns: int = 0  # host_wait time in gaps that began with a blocking sync returning
    after_sync_count: int = 0
    longest: tuple[Gap, ...] = ()  # the LONGEST longest gaps, longest first


@dataclass(frozen=True)
class Timeline:
    devices: list[DeviceTimeline]
    gaps: Gaps
    overlap_clipped_ns: int
    overlap_count: int
    strip: Strip | None = None  # busy fraction per bin of the window, per device

    @property
    def busy_ns(self) -> int:
        return sum(d.busy_ns for d in self.devices)

    @property
    def span_ns(self) -> int:
        if not self.devices:
            return 0
        return max(d.last_ns for d in self.devices) - min(d.first_ns for d in self.devices)

    @property
    def idle_ns(self) -> int:
        return sum(d.idle_ns for d in self.devices)

    @property
    def device_span_ns(self) -> int:
        """The devices' spans summed: what time summed over devices (idle, gaps, copies) is a
        share of — `span_ns` (first start to last end of any device) is not, with several."""
        return sum(d.span_ns for d in self.devices)

    def span_of(self, device: int) -> int:
        return next((d.span_ns for d in self.devices if d.device == device), self.span_ns)


def timeline(trace: Trace, links: Links, sync: SyncStats | None) -> Timeline:
    gpu = trace.gpu
    devices: list[DeviceTimeline] = []
    gap_lo: list[I64] = []
    gap_hi: list[I64] = []
    gap_next: list[I64] = []
    gap_prev: list[I64] = []
    gap_device: list[I64] = []
    busy: list[tuple[int, I64, I64]] = []
    for device in unique(gpu.device):
        rows = np.flatnonzero(gpu.device == device)
        start, end = gpu.start[rows], gpu.end[rows]
        merged_start, merged_end = merge(start, end)
        busy.append((int(device), merged_start, merged_end))
        devices.append(
            DeviceTimeline(
                device=int(device),
                busy_ns=int((merged_end - merged_start).sum()),
                span_ns=int(merged_end[-1] - merged_start[0]),
                first_ns=int(merged_start[0]),
                last_ns=int(merged_end[-1]),
            )
        )
        gap_lo.append(merged_end[:-1])
        gap_hi.append(merged_start[1:])
        gap_next.append(_first_row_at(rows, start, merged_start[1:]))
        gap_prev.append(_last_row_at(rows, gpu.end[rows], merged_end[:-1]))
        gap_device.append(np.full(len(merged_end) - 1, device, np.int64))
    clipped, overlaps = _same_stream_overlap(trace)
    gaps = _gaps(trace, links, sync, _cat(gap_lo), _cat(gap_hi), _cat(gap_next))
    longest = _longest(gaps, gap_lo, gap_hi, gap_next, gap_prev, gap_device)
    gaps = replace(gaps, largest=longest[0] if longest else None, longest=longest)
    return Timeline(devices, gaps, clipped, overlaps, busy_strip(busy))


def _cat(parts: list[I64]) -> I64:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _longest(gaps: Gaps, *columns: list[I64]) -> tuple[Gap, ...]:
    """The LONGEST longest gaps, longest first (the first of equals in time order first)."""
    lo, hi, nxt, prev, device = (_cat(c) for c in columns)
    order = np.argsort(-(hi - lo), kind="stable")[:LONGEST]
    causes = [CAUSES[int(gaps.causes[i])] if gaps.causes is not None else "unknown" for i in order]
    return tuple(Gap(int(lo[i]), int(hi[i]), int(device[i]), cause, int(prev[i]), int(nxt[i]))
                 for i, cause in zip(order, causes, strict=True))  # fmt: skip


def _last_row_at(rows: I64, end: I64, times: I64) -> I64:
    """The GPU op (row of trace.gpu) that ends each merged interval."""
    order = np.argsort(end, kind="stable")
    pos = np.searchsorted(end[order], times, side="right") - 1
    result: I64 = rows[order[np.clip(pos, 0, len(rows) - 1)]]
    return result


def _first_row_at(rows: I64, start: I64, times: I64) -> I64:
    """The GPU op (row of trace.gpu) that starts each merged interval."""
    order = np.argsort(start, kind="stable")
    pos = np.searchsorted(start[order], times)
    result: I64 = rows[order[np.clip(pos, 0, len(rows) - 1)]]
    return result


def _same_stream_overlap(trace: Trace) -> tuple[int, int]:
    """Time by which ops on one (device, stream) overlap their predecessor, and how often."""
    gpu = trace.gpu
    if len(gpu) < 2:
        return 0, 0
    order = np.lexsort((gpu.start, gpu.stream, gpu.device))
    device, stream = gpu.device[order], gpu.stream[order]
    start, end = gpu.start[order], gpu.end[order]
    same = (device[1:] == device[:-1]) & (stream[1:] == stream[:-1])
    boundaries = np.flatnonzero(~same) + 1
    clipped = 0
    count = 0
    for lo, hi in zip(np.r_[0, boundaries], np.r_[boundaries, len(order)], strict=True):
        previous_end = np.maximum.accumulate(end[lo:hi])
        overlap = previous_end[:-1] - start[lo + 1 : hi]
        positive = overlap > 0
        own = (end[lo + 1 : hi] - start[lo + 1 : hi])[positive]
        count += int(positive.sum())
        clipped += int(np.minimum(overlap[positive], own).sum())
    return clipped, count


def _gaps(trace: Trace, links: Links, sync: SyncStats | None, lo: I64, hi: I64, nxt: I64) -> Gaps:
    length = hi - lo
    histogram = []
    for i, low in enumerate(GAP_BINS_US):
        high = GAP_BINS_US[i + 1] if i + 1 < len(GAP_BINS_US) else None
        inside = (length >= low * 1000) & (length < (high * 1000 if high is not None else 2**62))
        upper = float(high) if high is not None else None
        histogram.append((float(low), upper, int(inside.sum()), int(length[inside].sum())))
    cause, after_sync = _attribute(trace, links, sync, lo, hi, nxt)
    attribution_ns = {name: int(length[cause == i].sum()) for i, name in enumerate(CAUSES)}
    attribution_count = {name: int((cause == i).sum()) for i, name in enumerate(CAUSES)}
    micro = length < MICRO_GAP_NS
    micro_ns = {name: int(length[(cause == i) & micro].sum()) for i, name in enumerate(CAUSES)}
    return Gaps(
        count=len(length),
        total_ns=int(length.sum()),
        micro_count=int(micro.sum()),
        micro_ns=int(length[micro].sum()),
        histogram=histogram,
        attribution_ns=attribution_ns,
        attribution_count=attribution_count,
        causes=cause,
        micro_attribution_ns=micro_ns,
        after_sync_ns=int(length[after_sync].sum()),
        after_sync_count=int(after_sync.sum()),
    )


CAUSES = ("sync_drain", "host_wait", "kernel_wait", "startup", "unknown")
STARTUP_SHARE = 0.5  # start-up calls covering this share of a gap make it a start-up gap
# host calls that are start-up work: module / code-object loads, library initialisation,
# allocations, run-time compilation
STARTUP_CALLS = re.compile(
    r"^(?:cu|hip)Module(?:Load|GetFunction|GetGlobal)|^cuLibrary(?:Load|GetKernel)|"
    r"^__(?:cuda|hip)Register(?:FatBinary|Function)|^hsa_(?:executable|code_object)_|"
    r"^(?:cublas|cublasLt|cudnn|hipblas|hipblasLt|rocblas|miopen|cufft|hipfft)_?[Cc]reate|"
    r"^(?:nccl|rccl)CommInit|^(?:cuda|hip)Malloc(?:Managed|Host|Async)?$|^cuMem(?:Alloc|Create)|"
    r"^(?:nvrtc|hiprtc)|^(?:cuda|hip)(?:Set)?Device(?:Reset|PrimaryCtx)|^cuCtxCreate|^cuInit$"
)


def _attribute(
    trace: Trace, links: Links, sync: SyncStats | None, lo: I64, hi: I64, nxt: I64
) -> tuple[I64, Any]:
    """Why the device idled in each gap.

    startup: start-up calls (module / code-object loads, library initialisation, allocations,
    run-time compilation) fill at least half of the gap, or lie in a gap that ends in a
    kernel's first launch (a library loading its code, e.g. rocBLAS's Tensile kernels: the time
    before the load is the library reading its files) — cold start, not the steady loop.
    sync_drain: a blocking sync returned inside the gap and the next launch followed soon after —
    the queue was empty because the host waited. When the host instead spent longer after the
    sync returned than the device took to drain, the gap is that host time: host_wait.
    host_wait: the next op's launch call began after the gap began — the device waited for the
    host. kernel_wait: the next op was already launched — it waited on a dependency, an event or
    the launch queue. unknown: the next op has no linked launch.
    """
    cause = np.full(len(lo), CAUSES.index("unknown"), np.int64)
    after_sync = np.zeros(len(lo), bool)
    if len(lo) == 0:
        return cause, after_sync
    host_index = links.host_index[nxt]
    launched_at = take(trace.host.start, host_index, -1)
    linked = host_index >= 0
    cause[linked & (launched_at >= lo)] = CAUSES.index("host_wait")
    cause[linked & (launched_at < lo)] = CAUSES.index("kernel_wait")
    if sync is not None and len(sync.end):
        # a sync interval ending within [lo, hi]
        pos = np.minimum(np.searchsorted(sync.end, lo, side="left"), len(sync.end) - 1)
        returned = sync.end[pos]
        ended = (returned >= lo) & (returned <= hi)
        next_launch = np.where(linked & (launched_at >= returned), launched_at, hi)
        host_after = next_launch - returned  # the host's own time once the sync had returned
        drained = ended & (host_after <= returned - lo)
        cause[drained] = CAUSES.index("sync_drain")
        after_sync = ended & ~drained
        cause[after_sync] = CAUSES.index("host_wait")
    share = _startup_share(trace, lo, hi)
    first = _first_dispatch(trace, nxt)  # a library loads a kernel's code on its first launch
    startup = (share >= STARTUP_SHARE) | ((share > 0) & first)
    cause[startup] = CAUSES.index("startup")
    return cause, after_sync & ~startup


def _first_dispatch(trace: Trace, rows: I64) -> Any:
    """Per row of trace.gpu in `rows`: is it the first dispatch of its kernel in the trace?"""
    gpu = trace.gpu
    order = np.argsort(gpu.start, kind="stable")
    _, first = np.unique(gpu.name[order], return_index=True)
    is_first = np.zeros(len(gpu), bool)
    is_first[order[first]] = True
    return is_first[rows]


def _startup_share(trace: Trace, lo: I64, hi: I64) -> Any:
    """Per gap: the share of it covered by start-up host calls (their union, any thread)."""
    host = trace.host
    share = np.zeros(len(lo))
    if not len(host) or not len(lo):
        return share
    names = unique(host.name)
    wanted = names[[bool(STARTUP_CALLS.search(trace.names[int(n)])) for n in names]]
    rows = np.flatnonzero(np.isin(host.name, wanted))
    if not len(rows):
        return share
    starts, ends = merge(host.start[rows], host.end[rows])  # sorted, disjoint
    covered = overlap_with(starts, ends, lo, hi)
    length = np.maximum(hi - lo, 1)
    return covered / length
