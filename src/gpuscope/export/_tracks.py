"""Processes and threads of the exported timeline, and the lanes that keep slices nested.

A viewer draws one row per (pid, tid) and needs the slices of a row to nest: a slice that
starts inside another must end inside it. Real traces break that (kernels of one stream that
overlap under programmatic dependent launch, ROCTX start/stop ranges that cross API calls), so
such a slice moves to an extra row of the same thread, `stream 7 (overlap 1)`, rather than being
cut or dropped by the viewer.

Every pid and tid is allocated here and is unique in the file: Perfetto matches a tid to its
process, and two processes sharing a tid would share a row.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import numpy as np

from gpuscope.trace.model import I64


@dataclass
class Tracks:
    """Allocates pids and tids and remembers their names (written as `M` metadata events)."""

    metadata: list[str] = field(default_factory=list)
    _next_pid: int = 1
    _next_tid: int = 1
    _threads: dict[tuple[int, str], int] = field(default_factory=dict)

    def process(self, name: str) -> int:
        pid = self._next_pid
        self._next_pid += 1
        self._meta("process_name", pid, 0, name)
        self._meta("process_sort_index", pid, 0, pid, key="sort_index")
        return pid

    def thread(self, pid: int, name: str) -> int:
        """The tid of the thread `name` of `pid` (allocated on first use)."""
        key = (pid, name)
        found = self._threads.get(key)
        if found is not None:
            return found
        tid = self._next_tid
        self._next_tid += 1
        self._threads[key] = tid
        self._meta("thread_name", pid, tid, name)
        self._meta("thread_sort_index", pid, tid, tid, key="sort_index")
        return tid

    def lane_tids(self, pid: int, name: str, lanes: int) -> list[int]:
        """tids for lane 0 (`name`) and the overlap lanes of one track."""
        return [self.thread(pid, name if k == 0 else f"{name} (overlap {k})") for k in range(lanes)]

    def _meta(self, what: str, pid: int, tid: int, value: object, key: str = "name") -> None:
        args = json.dumps({key: value}, ensure_ascii=False)
        self.metadata.append(f'{{"ph":"M","name":"{what}","pid":{pid},"tid":{tid},"args":{args}}}')


def nested_order(group: I64, start: I64, dur: I64) -> I64:
    """Row order by (group, start, longest first): a parent comes before the slices it holds."""
    order: I64 = np.lexsort((-dur, start, group)).astype(np.int64)
    return order


def lanes(start: I64, end: I64) -> I64:
    """The lane of each slice of one track (rows already in `nested_order`); 0 when they nest.

    A slice goes to the first lane where it nests inside the open slice or starts after it ends.
    """
    size = len(start)
    if size < 2:
        return np.zeros(size, np.int64)
    running_end = np.maximum.accumulate(end)
    if (start[1:] >= running_end[:-1]).all():
        return np.zeros(size, np.int64)  # nothing overlaps: the usual GPU stream
    return np.asarray(_pack(start.tolist(), end.tolist()), np.int64)


def _pack(starts: list[int], ends: list[int]) -> list[int]:
    stacks: list[list[int]] = []
    out: list[int] = []
    for begin, finish in zip(starts, ends, strict=True):
        for lane, stack in enumerate(stacks):
            while stack and stack[-1] <= begin:
                stack.pop()
            if not stack or finish <= stack[-1]:
                stack.append(finish)
                out.append(lane)
                break
        else:
            stacks.append([finish])
            out.append(len(stacks) - 1)
    return out


def group_bounds(keys: I64) -> list[tuple[int, int]]:
    """[start, end) of each run of equal keys in a sorted array."""
    if len(keys) == 0:
        return []
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    edges = [0, *cuts.tolist(), len(keys)]
    return list(itertools.pairwise(edges))
