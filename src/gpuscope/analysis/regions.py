"""User ranges (record_function, NVTX, ROCTX): how long each region ran and how much GPU work
ran inside it.

Instances of one name are grouped; numbered names (`ProfilerStep#12`, `layer#3`) are grouped as
`ProfilerStep#N`. Nesting depth is that of the shallowest instance on its thread. "GPU time inside"
is the device busy time (union over devices) that falls within the region's wall-clock interval:
it needs the host and device timestamps on one clock, which every supported tracer gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.trace.model import ANNOTATION, I64, Trace

_NUMBERED = re.compile(r"^(.*#)\d+$")
MAX_REGIONS = 40


@dataclass(frozen=True)
class Region:
    name: str
    depth: int
    count: int
    total_ns: int
    min_ns: int
    max_ns: int
    gpu_ns: int  # device busy time inside the region's instances

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0


def regions(trace: Trace) -> list[Region]:
    """Regions by total time, largest first (at most MAX_REGIONS)."""
    ops = trace.ops
    rows = np.flatnonzero(ops.kind == ANNOTATION)
    if len(rows) == 0:
        return []
    start, end = ops.start[rows], ops.end[rows]
    depth = _depths(ops.tid[rows], start, end)
    gpu = trace.gpu
    timed = gpu.start >= 0
    busy_start, busy_end = merge(gpu.start[timed], gpu.end[timed])
    inside = overlap_with(busy_start, busy_end, start, end)
    labels = [_label(trace.names[i]) for i in ops.name[rows]]
    keys, inverse = np.unique(np.array(labels, dtype=object), return_inverse=True)
    return _grouped(keys, inverse, depth, end - start, inside)[:MAX_REGIONS]


def _label(name: str) -> str:
    numbered = _NUMBERED.match(name)
    return numbered.group(1) + "N" if numbered else name


def _grouped(keys: object, inverse: I64, depth: I64, dur: I64, inside: I64) -> list[Region]:
    names = list(keys)  # type: ignore[call-overload]
    count = np.bincount(inverse, minlength=len(names))
    total = np.bincount(inverse, weights=dur, minlength=len(names))
    gpu = np.bincount(inverse, weights=inside, minlength=len(names))
    low = np.full(len(names), np.iinfo(np.int64).max)
    high = np.zeros(len(names), np.int64)
    shallow = np.full(len(names), np.iinfo(np.int64).max)
    np.minimum.at(low, inverse, dur)
    np.maximum.at(high, inverse, dur)
    np.minimum.at(shallow, inverse, depth)
    found = [
        Region(
            name=str(names[i]),
            depth=int(shallow[i]),
            count=int(count[i]),
            total_ns=int(total[i]),
            min_ns=int(low[i]),
            max_ns=int(high[i]),
            gpu_ns=int(gpu[i]),
        )
        for i in range(len(names))
    ]
    return sorted(found, key=lambda r: (-r.total_ns, r.name))


def _depths(tid: I64, start: I64, end: I64) -> I64:
    """Nesting depth of each range among the ranges of its thread (0 = outermost)."""
    depth = np.zeros(len(start), np.int64)
    order = np.lexsort((-end, start, tid))
    stack: list[tuple[int, int]] = []  # (tid, end) of the open ranges
    for i in order:
        while stack and (stack[-1][0] != tid[i] or stack[-1][1] <= start[i]):
            stack.pop()
        depth[i] = len(stack)
        stack.append((int(tid[i]), int(end[i])))
    return depth
