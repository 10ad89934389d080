"""How late a rank's host is to launch: the device idle time its host is to blame for.

- **after a sync**: from a blocking sync's return (`analysis.sync`: the merged blocking intervals
  that do not close the window) to the host's next launch call, the part the device spends
  idle — the host's own time (Python, data, a sleep) before it launches again. The gap analysis
  files such a gap under `sync_drain` whole; here the sync's own wait (until it returned) is left
  out, and so is idle time before the first kernel of the trace when a sync returned there.
- **host wait**: in the other idle gaps, from the gap's start to the launch call of the work that
  ends it, when that call came after the device went idle (the gap analysis' `host_wait`).

Idle = no GPU op on any of the rank's devices. Both are taken per ProfilerStep range (the part
inside it) and over the whole trace; times stay on the rank's own clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis import merge, overlap_with, take
from gpuscope.analysis.communication.exposure import subtract
from gpuscope.trace.model import I64

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis


@dataclass(frozen=True)
class HostLate:
    after_sync: I64  # per step: idle from a sync's return to the next launch
    host_wait: I64  # per step: idle from the gap's start to a launch made after it began
    after_sync_ns: int  # over the whole trace
    host_wait_ns: int


def host_late(a: Analysis, lo: I64, hi: I64) -> HostLate:
    """Per step [lo, hi) and in total."""
    gpu, host = a.trace.gpu, a.trace.host
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    busy = merge(gpu.start[timed], gpu.end[timed])
    launched = a.links.host_index
    calls = np.unique(launched[launched >= 0])
    launches = np.sort(host.start[calls]) if len(calls) else np.zeros(0, np.int64)
    none = np.zeros(0, np.int64)
    sync_start, sync_end = (a.sync.start, a.sync.end) if a.sync is not None else (none, none)
    blocked = merge(np.concatenate([busy[0], sync_start]), np.concatenate([busy[1], sync_end]))
    after = subtract(*_until_next(sync_end, launches), *blocked)
    waits = subtract(*_host_waits(a, busy, timed, sync_end), *after)
    return HostLate(
        after_sync=overlap_with(*after, lo, hi),
        host_wait=overlap_with(*waits, lo, hi),
        after_sync_ns=int((after[1] - after[0]).sum()),
        host_wait_ns=int((waits[1] - waits[0]).sum()),
    )


def _until_next(ends: I64, launches: I64) -> tuple[I64, I64]:
    """[sync end, next launch call) for every sync followed by a launch."""
    i = np.searchsorted(launches, ends, side="left")
    followed = i < len(launches)
    return merge(ends[followed], launches[i[followed]])


def _host_waits(
    a: Analysis, busy: tuple[I64, I64], timed: np.ndarray, sync_end: I64
) -> tuple[I64, I64]:
    """[gap start, launch of the op ending the gap) where that launch came after the gap began
    and no sync returned inside the gap."""
    gpu = a.trace.gpu
    lo, hi = busy[1][:-1], busy[0][1:]
    if len(lo) == 0:
        return lo, hi
    rows = np.flatnonzero(timed)
    order = rows[np.argsort(gpu.start[rows], kind="stable")]
    nxt = order[np.clip(np.searchsorted(gpu.start[order], hi), 0, len(order) - 1)]
    host_row = a.links.host_index[nxt]
    launched_at = take(a.trace.host.start, host_row, -1)
    synced = np.searchsorted(sync_end, hi, side="right") > np.searchsorted(sync_end, lo, "left")
    late = (host_row >= 0) & (launched_at >= lo) & ~synced
    return lo[late], np.minimum(launched_at[late], hi[late])
