"""Synchronization: the host calls that block until the device has done something.

Blocking: `*Synchronize` (device, stream, event, context), synchronous copies (`cudaMemcpy`,
`hipMemcpy`, `hipMemcpyWithStream` — PyTorch's synchronous copy on ROCm — `cuMemcpyDtoH`, ...),
`*MemcpyAsync` whose host side is pageable memory (the call returns only when the copy is done),
and the tracer's own sync records (Kineto `cuda_sync`: Stream / Event / Context Sync).
Not blocking: `cudaStreamWaitEvent` / `hipStreamWaitEvent` and CUPTI's "Stream Wait Event" — they
order two device streams and return at once.

What a sync costs is not the time the host waits: while it waits the GPU may be busy with real
work. The cost is the device idle time after it (the queue drained, the host must launch again):
that is the timeline's `sync_drain` gap time. A sync after which the trace launches no more device
work closes the profiled window (the harness's final `synchronize()`): it is kept apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis._unique import unique
from gpuscope.analysis.links import Links
from gpuscope.trace.model import I64, MEMCPY, PAGEABLE, Mask, Syncs, Trace

SYNC_API = re.compile(
    r"^(cuda|hip|cu)(Device|Stream|Event|Ctx)Synchronize|"
    r"^(cuda|hip)Memcpy(2D|3D)?(FromSymbol|ToSymbol|Peer)?$|^hipMemcpyWithStream$|"
    r"^(cuMemcpy|cuMemcpyDtoH|cuMemcpyHtoD|cuMemcpyDtoD|cuMemcpyPeer)(_v2)?$|"
    r"^hipMemcpy(DtoH|HtoD|DtoD|2DFromArray|ToArray|FromArray)$"
)
ASYNC_COPY_API = re.compile(r"^(cuda|hip|cu)Memcpy\w*Async(_v2|_ptsz)?$")
NOT_BLOCKING = re.compile(r"Wait ?Event", re.IGNORECASE)  # CUPTI / Kineto "Stream Wait Event"
SYNC_TARGET_SHARE = 0.05  # the guides' target: synchronization under 5 % of the time


@dataclass(frozen=True)
class SyncStats:
    count: int  # blocking calls and sync records (one blocking interval may hold both)
    time_ns: int  # union of all blocking intervals
    window_ns: int  # the time the share is taken of
    by_name: dict[str, tuple[int, int]]  # name -> (count, total ns)
    start: I64  # merged blocking intervals that do not close the window (gap attribution)
    end: I64
    closing_count: int  # blocking intervals after which no device work is launched
    closing_ns: int
    gpu_busy_ns: int  # device busy time while the host was blocked (in-loop syncs)
    pageable_copies: int  # *MemcpyAsync calls that blocked because the host side is pageable

    @property
    def share(self) -> float:
        return self.time_ns / self.window_ns if self.window_ns else 0.0

    @property
    def loop_ns(self) -> int:
        """Blocking time of the syncs inside the window (not the closing ones)."""
        return int((self.end - self.start).sum())

    @property
    def loop_share(self) -> float:
        return self.loop_ns / self.window_ns if self.window_ns else 0.0


def sync_stats(trace: Trace, links: Links, window_ns: int) -> SyncStats:
    host, names = trace.host, trace.names
    blocking = _blocking_calls(trace, links)
    counted = np.array([not NOT_BLOCKING.search(names[i]) for i in trace.syncs.name], bool)
    records: Syncs = trace.syncs.take(counted)
    starts = np.concatenate([host.start[blocking], records.start])
    ends = np.concatenate([host.end[blocking], records.end])
    merged_start, merged_end = merge(starts, ends)
    closing = _closing(trace, merged_start, merged_end)
    loop_start, loop_end = merged_start[~closing], merged_end[~closing]
    busy_start, busy_end = _busy(trace)
    return SyncStats(
        count=int(blocking.sum()) + len(records),
        time_ns=int((merged_end - merged_start).sum()),
        window_ns=window_ns,
        by_name=_by_name(trace, blocking, records),
        start=loop_start,
        end=loop_end,
        closing_count=int(closing.sum()),
        closing_ns=int((merged_end - merged_start)[closing].sum()),
        gpu_busy_ns=int(overlap_with(busy_start, busy_end, loop_start, loop_end).sum()),
        pageable_copies=int((blocking & _async_copies(trace)).sum()),
    )


def _blocking_calls(trace: Trace, links: Links) -> Mask:
    host, names = trace.host, trace.names
    sync_names = [i for i in unique(host.name) if SYNC_API.match(names[i])]
    blocking = np.isin(host.name, sync_names)
    gpu = trace.gpu
    pageable = (gpu.kind == MEMCPY) & (gpu.host_memory == PAGEABLE) & (links.host_index >= 0)
    if pageable.any():
        launched = np.zeros(len(host), bool)
        launched[links.host_index[pageable]] = True
        blocking |= launched & _async_copies(trace)
    return blocking


def _async_copies(trace: Trace) -> Mask:
    names = trace.names
    copy_names = [i for i in unique(trace.host.name) if ASYNC_COPY_API.match(names[i])]
    return np.isin(trace.host.name, copy_names)


def _closing(trace: Trace, start: I64, end: I64) -> Mask:
    """Blocking intervals after which no device op starts: they close the profiled window."""
    gpu_start = trace.gpu.start[trace.gpu.start >= 0]
    if len(gpu_start) == 0:
        return np.ones(len(start), bool)
    closing: Mask = end >= gpu_start.max()
    return closing


def _busy(trace: Trace) -> tuple[I64, I64]:
    gpu = trace.gpu
    timed = gpu.start >= 0
    return merge(gpu.start[timed], gpu.end[timed])


def _by_name(trace: Trace, blocking: Mask, records: Syncs) -> dict[str, tuple[int, int]]:
    host, names = trace.host, trace.names
    result: dict[str, tuple[int, int]] = {}
    for table_names, durations in (
        (host.name[blocking], host.dur[blocking]),
        (records.name, records.dur),
    ):
        for name in unique(table_names):
            chosen = table_names == name
            count, total = result.get(names[name], (0, 0))
            result[names[name]] = (count + int(chosen.sum()), total + int(durations[chosen].sum()))
    return result
