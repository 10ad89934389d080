"""Properly nested intervals per thread (Python frames, operator stacks), queried in bulk, and
the user's Python line behind an operator (torch.profiler's `with_stack` frames).

`Nesting` sorts the intervals of each thread by start (outer first on ties), finds each one's
parent from its depth, and answers "which interval most tightly encloses this one" by walking up
parents from the last interval that started before it: siblings that ended earlier are skipped in
one step, so the walk is as long as the nesting is deep. Everything is vectorised over queries.

A Python frame is "user" code unless it is PyTorch itself, the interpreter (`<built-in …>`,
`<frozen …>`) or a standard-library module: the innermost user frame enclosing an op on its
thread is the line that asked for it (`modeling_llama.py(62): forward`, not `module.py`).
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from gpuscope.analysis._unique import unique
from gpuscope.trace.model import I64, PYTHON, Trace


class Nesting:
    def __init__(self, start: I64, end: I64, tid: I64) -> None:
        self.order = np.lexsort((-end, start, tid))
        self.start, self.end, self.tid = start[self.order], end[self.order], tid[self.order]
        self.parent = np.full(len(self.order), -1, np.int64)
        self.blocks = _blocks(self.tid)
        for lo, hi in self.blocks.values():
            parent = _parents(self.start[lo:hi], self.end[lo:hi])
            self.parent[lo:hi] = np.where(parent >= 0, parent + lo, -1)

    def innermost(self, tid: I64, start: I64, end: I64) -> I64:
        """For each query interval: the index (into the constructor's arrays) of the innermost
        interval on the same thread that encloses it, else -1."""
        cand = np.full(len(tid), -1, np.int64)
        for thread in unique(tid).tolist():
            if thread not in self.blocks:
                continue
            lo, hi = self.blocks[thread]
            mine = tid == thread
            cand[mine] = np.searchsorted(self.start[lo:hi], start[mine], "right") - 1 + lo
            cand[mine & (cand < lo)] = -1
        while True:
            outside = (cand >= 0) & (self.end[np.maximum(cand, 0)] < end)
            if not outside.any():
                break
            cand[outside] = self.parent[cand[outside]]
        return np.where(cand >= 0, self.order[np.maximum(cand, 0)], -1)

    def outermost(self, index: I64) -> I64:
        """The outermost interval enclosing each given one (itself at top level); `index` and
        the result index the constructor's arrays, -1 passes through."""
        rank = np.empty(len(self.order), np.int64)
        rank[self.order] = np.arange(len(self.order))
        cur = np.where(index >= 0, rank[np.maximum(index, 0)], -1)
        while True:
            up = (cur >= 0) & (self.parent[np.maximum(cur, 0)] >= 0)
            if not up.any():
                break
            cur[up] = self.parent[cur[up]]
        return np.where(cur >= 0, self.order[np.maximum(cur, 0)], -1)


def _blocks(tid: I64) -> dict[int, tuple[int, int]]:
    """[lo, hi) of each thread's run in the sorted arrays."""
    if len(tid) == 0:
        return {}
    edges = np.r_[0, np.flatnonzero(tid[1:] != tid[:-1]) + 1, len(tid)]
    return {int(tid[lo]): (int(lo), int(hi)) for lo, hi in itertools.pairwise(edges.tolist())}


def _parents(start: I64, end: I64) -> I64:
    """Parent index of each interval of one thread (sorted by start, outer first), -1 at top.

    Depth = intervals started before it minus those already closed; the parent is the last
    interval one level up that started before it.
    """
    n = len(start)
    closed = np.searchsorted(np.sort(end), start, "right")
    depth = np.maximum(np.arange(n) - closed, 0)
    parent = np.full(n, -1, np.int64)
    by_depth = np.argsort(depth, kind="stable")  # positions grouped by depth, in start order
    cuts = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
    for level in range(1, len(cuts) - 1):
        above = by_depth[cuts[level - 1] : cuts[level]]
        here = by_depth[cuts[level] : cuts[level + 1]]
        pos = np.searchsorted(above, here) - 1
        parent[here] = np.where(pos >= 0, above[np.maximum(pos, 0)], -1)
    return parent


_FRAME = re.compile(r"^[^<].*\(\d+\): ")
_LIBRARY = (
    "torch/", "contextlib.py", "functools.py", "dataclasses.py", "typing.py", "abc.py",
    "threading.py", "enum.py", "copy.py", "weakref.py", "collections/", "importlib/", "asyncio/",
    "concurrent/", "queue.py", "selectors.py", "multiprocessing/", "runpy.py",
)  # fmt: skip


def is_user_frame(name: str) -> bool:
    """'model.py(12): forward' is; 'torch/nn/modules/module.py(1783): _call_impl' is not."""
    return bool(_FRAME.match(name)) and not name.startswith(_LIBRARY)


class PythonLines:
    """Answers "which user line launched these ops" for one trace (empty without frames)."""

    def __init__(self, trace: Trace) -> None:
        ops = trace.ops
        python = np.flatnonzero(ops.kind == PYTHON)
        user = {int(i) for i in unique(ops.name[python]) if is_user_frame(trace.names[i])}
        self.rows = python[np.isin(ops.name[python], list(user))] if user else python[:0]
        self.trace = trace
        self.nesting = Nesting(ops.start[self.rows], ops.end[self.rows], ops.tid[self.rows])

    @property
    def available(self) -> bool:
        return len(self.rows) > 0

    def lines(self, op_rows: I64) -> list[str]:
        """The innermost user frame ('file.py(N): function') of each op row, '' when none."""
        if not self.available or len(op_rows) == 0:
            return [""] * len(op_rows)
        ops = self.trace.ops
        found = self.nesting.innermost(ops.tid[op_rows], ops.start[op_rows], ops.end[op_rows])
        names = self.trace.names
        return [names[ops.name[self.rows[i]]] if i >= 0 else "" for i in found.tolist()]
