"""Synchronization: host calls that block on the device, and Kineto's `cuda_sync` events."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpuscope.analysis._intervals import merge
from gpuscope.trace.model import I64, Trace

SYNC_API = re.compile(
    r"^(cuda|hip|cu)(Device|Stream|Event|Ctx)Synchronize|^(cuda|hip)StreamWaitEvent$|"
    r"^(cuda|hip)Memcpy(2D|3D)?(FromSymbol|ToSymbol)?$|^cuMemcpy(DtoH|HtoD)(_v2)?$"
)
SYNC_TARGET_SHARE = 0.05  # the guides' target: synchronization under 5 % of the time


@dataclass(frozen=True)
class SyncStats:
    count: int
    time_ns: int  # union of all blocking intervals (host calls and cuda_sync events)
    window_ns: int  # the time the share is taken of
    by_name: dict[str, tuple[int, int]]  # name -> (count, total ns)
    start: I64  # merged blocking intervals, for gap attribution
    end: I64

    @property
    def share(self) -> float:
        return self.time_ns / self.window_ns if self.window_ns else 0.0


def sync_stats(trace: Trace, window_ns: int) -> SyncStats:
    host = trace.host
    names = trace.names
    sync_names = [i for i in np.unique(host.name) if SYNC_API.match(names[i])]
    blocking = np.isin(host.name, sync_names)
    starts = np.concatenate([host.start[blocking], trace.syncs.start])
    ends = np.concatenate([host.end[blocking], trace.syncs.end])
    merged_start, merged_end = merge(starts, ends)
    by_name: dict[str, tuple[int, int]] = {}
    for table_names, durations in (
        (host.name[blocking], host.dur[blocking]),
        (trace.syncs.name, trace.syncs.dur),
    ):
        for name in np.unique(table_names):
            chosen = table_names == name
            by_name[names[name]] = (int(chosen.sum()), int(durations[chosen].sum()))
    return SyncStats(
        count=int(blocking.sum()) + len(trace.syncs),
        time_ns=int((merged_end - merged_start).sum()),
        window_ns=window_ns,
        by_name=by_name,
        start=merged_start,
        end=merged_end,
    )
