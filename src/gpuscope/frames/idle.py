"""Idle time per stream: what `TraceFrame.idle_time()` returns, as columns.

A stream is idle between the end of its work and the start of its next op, from its first op's
start to its last op's end (its own span; the work of other streams does not fill it). Each gap
is put down to what the op after it was waiting for, read from the launch links:

- `host_wait`: its launch call began after the gap began — the stream waited for the host;
- `kernel_wait`: it was launched before the gap began — it waited on something else (work on
  another stream, an event, a dependency, the launch queue);
- `unknown`: it has no linked launch call.

(The report's device-level gaps refine these with syncs and start-up; a stream is not a device.)
"""

from __future__ import annotations

import numpy as np

from gpuscope.frames._columns import Columns, Maybe
from gpuscope.frames.series import launch_called
from gpuscope.trace.model import I64, Trace


def stream_idle_columns(trace: Trace, host_index: I64) -> Columns:
    """One row per (device, stream): ops, first start, last end, span, busy (the union of its
    ops), idle (span − busy), idle share, gaps and idle time by cause."""
    gpu = trace.gpu
    rows = np.flatnonzero((gpu.start >= 0) & (gpu.dur >= 0))
    rows = rows[np.lexsort((gpu.start[rows], gpu.stream[rows], gpu.device[rows]))]
    called = launch_called(trace, host_index)
    lane = np.stack([gpu.device[rows].astype(np.int64), gpu.stream[rows]], 1)
    cut = np.flatnonzero((lane[1:] != lane[:-1]).any(axis=1)) + 1
    lanes = [_lane(trace, part, called, host_index) for part in np.split(rows, cut)]
    lanes = [row for row in lanes if row is not None]
    table = np.array(lanes, np.int64).reshape(-1, 10)
    span, busy, host, kernel = table[:, 5], table[:, 6], table[:, 8], table[:, 9]
    return {
        "device": table[:, 0].astype(np.int32),
        "stream": Maybe.of(table[:, 1]),
        "ops": table[:, 2],
        "start_ns": table[:, 3],
        "end_ns": table[:, 4],
        "span_ns": span,
        "busy_ns": busy,
        "idle_ns": span - busy,
        "idle_share": np.where(span > 0, (span - busy) / np.maximum(span, 1), 0.0),
        "gaps": table[:, 7],
        "host_wait_ns": host,
        "kernel_wait_ns": kernel,
        "unknown_ns": span - busy - host - kernel,
    }


def _lane(trace: Trace, rows: I64, called: I64, host_index: I64) -> list[int] | None:
    """[device, stream, ops, first, last, span, busy, gaps, host wait, kernel wait] of the ops
    of one stream (`rows`, by start)."""
    if not len(rows):
        return None
    gpu = trace.gpu
    start, end = gpu.start[rows], gpu.end[rows]
    reach = np.maximum.accumulate(end)
    opens = np.flatnonzero(np.r_[True, start[1:] > reach[:-1]])  # first op of each busy run
    closes = np.r_[opens[1:] - 1, len(rows) - 1]
    busy = int((reach[closes] - start[opens]).sum())
    lo, after = reach[closes[:-1]], rows[opens[1:]]  # each gap's start, the op that ends it
    hi = gpu.start[after]
    linked = host_index[after] >= 0
    waited_host = linked & (called[after] >= lo)
    waited_kernel = linked & (called[after] < lo)
    return [
        int(gpu.device[rows[0]]), int(gpu.stream[rows[0]]), len(rows), int(start[0]),
        int(reach[-1]), int(reach[-1] - start[0]), busy, len(lo),
        int((hi - lo)[waited_host].sum()), int((hi - lo)[waited_kernel].sum()),
    ]  # fmt: skip
