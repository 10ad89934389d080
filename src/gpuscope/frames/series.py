"""Time series of one trace, as columns: the launch queue per stream, the copy bandwidth per
kind, the allocator's memory. What `TraceFrame.queue_length()`, `.memory_bandwidth()` and
`.memory()` return as DataFrames.

Each series has one row per moment its value changes (per device and stream, or device and copy
kind), holding the value from that moment on: a step function. Changes at the same nanosecond
are one row (their net), so a row's value is what holds just after it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuscope.frames._columns import Columns, Labels, Maybe, Text
from gpuscope.trace.model import COPY_KINDS, I64, MEMCPY, MEMSET, Trace

COPY_LABELS = (*COPY_KINDS, "memset")
NO_MEMORY = (
    "no allocator events in this trace: record with torch.profiler's profile_memory=True "
    "(Kineto `[memory]` events) to get the memory timeline"
)


def launch_called(trace: Trace, host_index: I64) -> I64:
    """When each device op was launched: the start of its host launch call (`host_index`: the
    trace's launch links, a row of `trace.host` per row of `trace.gpu`), else its own start."""
    called: I64 = trace.gpu.start.copy()
    found = host_index >= 0
    called[found] = trace.host.start[host_index[found]]
    return called


def queue_columns(trace: Trace, host_index: I64) -> Columns:
    """Per (device, stream): how many device ops (kernels, copies, memsets) were launched and
    not yet finished, from each moment that number changes."""
    gpu = trace.gpu
    rows = np.flatnonzero((gpu.start >= 0) & (gpu.dur >= 0))
    launched = np.minimum(launch_called(trace, host_index), gpu.start)[rows]  # clocks disagree
    device = np.tile(gpu.device[rows].astype(np.int64), 2)
    stream = np.tile(gpu.stream[rows], 2)
    time = np.concatenate([launched, gpu.end[rows]])
    delta = np.repeat(np.array([1, -1], np.int64), len(rows))
    first, net = _steps(device, stream, time, delta)
    return {
        "device": device[first].astype(np.int32),
        "stream": Maybe.of(stream[first]),
        "time_ns": time[first],
        "queued": np.cumsum(net),  # each lane's changes sum to 0: the sum starts at 0 in each
    }


def bandwidth_columns(trace: Trace) -> Columns:
    """Per (device, copy kind): the bytes per second of the copies (memsets as "memset")
    running at each moment, each copy at its own size ÷ duration, and how many run."""
    gpu = trace.gpu
    copy = (gpu.kind == MEMCPY) | (gpu.kind == MEMSET)
    rows = np.flatnonzero(copy & (gpu.start >= 0) & (gpu.dur > 0) & (gpu.bytes >= 0))
    kind = np.where(gpu.kind[rows] == MEMSET, len(COPY_KINDS), gpu.copy[rows]).astype(np.int64)
    rate = gpu.bytes[rows] / gpu.dur[rows] * 1e9
    device = np.tile(gpu.device[rows].astype(np.int64), 2)
    kinds = np.tile(kind, 2)
    time = np.concatenate([gpu.start[rows], gpu.end[rows]])
    count = np.repeat(np.array([1, -1], np.int64), len(rows))
    first, running = _steps(device, kinds, time, count)
    _, flow = _steps(device, kinds, time, np.concatenate([rate, -rate]))
    active = np.cumsum(running)
    total = np.cumsum(flow)
    new_lane = np.ones(len(first), bool)
    new_lane[1:] = (np.diff(device[first]) != 0) | (np.diff(kinds[first]) != 0)
    before = np.r_[0.0, total][np.flatnonzero(new_lane)][np.cumsum(new_lane) - 1]
    return {
        "device": device[first].astype(np.int32),
        "kind": Text(kinds[first].astype(np.int32), Labels(COPY_LABELS)),
        "time_ns": time[first],
        "bytes_per_s": np.where(active > 0, np.maximum(total - before, 0.0), 0.0),
        "copies": active,
    }


def memory_columns(trace: Trace) -> Columns:
    """The allocator's events by time: allocations (`bytes` > 0) and frees (< 0) with its
    totals on that device after each; `device` missing for host (CPU) memory."""
    memory = trace.memory
    order = np.argsort(memory.start, kind="stable")
    device = memory.device[order].astype(np.int64)
    size = memory.bytes[order]
    return {
        "time_ns": memory.start[order],
        "device": Maybe.of(device),
        "action": Text((size < 0).astype(np.int32), Labels(("alloc", "free"))),
        "bytes": size,
        "allocated_bytes": Maybe.of(memory.allocated[order]),
        "reserved_bytes": Maybe.of(memory.reserved[order]),
        "addr": Maybe.of(memory.addr[order]),
        "tid": memory.tid[order],
    }


def _steps(lane: I64, sub: I64, time: I64, delta: Any) -> tuple[I64, Any]:
    """Sort the changes by (lane, sub-lane, time); the first change of each distinct
    (lane, sub-lane, time) and the net of the changes there."""
    order = np.lexsort((time, sub, lane))
    lane, sub, time, delta = lane[order], sub[order], time[order], delta[order]
    new = np.ones(len(time), bool)
    new[1:] = (lane[1:] != lane[:-1]) | (sub[1:] != sub[:-1]) | (time[1:] != time[:-1])
    starts = np.flatnonzero(new)
    net = np.add.reduceat(delta, starts) if len(starts) else delta[:0]
    first: I64 = order[starts]
    return first, net
