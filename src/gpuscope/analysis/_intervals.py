"""Interval arithmetic on int64 ns arrays (sorted merges, unions, gaps)."""

from __future__ import annotations

import numpy as np

from gpuscope.analysis._unique import sorted_unique
from gpuscope.trace.model import I64


def merge(start: I64, end: I64) -> tuple[I64, I64]:
    """The union of [start, end) intervals as sorted, disjoint intervals."""
    if len(start) == 0:
        return start.copy(), end.copy()
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    running_end = np.maximum.accumulate(e)
    # a new merged interval begins where the start is past everything before it
    new = np.empty(len(s), bool)
    new[0] = True
    new[1:] = s[1:] > running_end[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], running_end[last]


def union_length(start: I64, end: I64) -> int:
    merged_start, merged_end = merge(start, end)
    return int((merged_end - merged_start).sum())


def overlap_with(start: I64, end: I64, lo: I64, hi: I64) -> I64:
    """For each [lo, hi) window, how much of the (disjoint, sorted) intervals it covers."""
    if len(start) == 0 or len(lo) == 0:
        return np.zeros(len(lo), np.int64)
    covered = np.concatenate([[0], np.cumsum(end - start)])

    def covered_until(t: I64) -> I64:
        i = np.searchsorted(start, t, side="right")  # intervals starting at or before t
        full = covered[np.maximum(i - 1, 0)]
        prev = np.maximum(i - 1, 0)
        partial = np.clip(t - start[prev], 0, end[prev] - start[prev])
        result: I64 = np.where(i > 0, full + partial, 0)
        return result

    return covered_until(hi) - covered_until(lo)


def take(values: I64, index: I64, missing: I64 | int) -> I64:
    """values[index] where index >= 0, else `missing` (also when `values` is empty)."""
    if len(values) == 0:
        filled: I64 = np.full(index.shape, missing, np.int64)
        return filled
    result: I64 = np.where(index >= 0, values[np.maximum(index, 0)], missing)
    return result


def paint(layers: list[tuple[I64, I64]]) -> tuple[I64, I64, I64]:
    """Cut time at every boundary of the layers (each a merged, sorted, disjoint set of
    intervals) into disjoint segments from the first boundary to the last, each coded with the
    highest layer that covers it (layers count from 1; 0: none covers it)."""
    points = sorted_unique(np.concatenate([np.concatenate(layer) for layer in layers]))
    if len(points) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    s, e = points[:-1], points[1:]
    code = np.zeros(len(s), np.int64)
    for level, (start, end) in enumerate(layers, start=1):
        if len(start) == 0:
            continue
        pos = np.searchsorted(start, s, side="right") - 1
        inside = (pos >= 0) & (s < end[np.maximum(pos, 0)])
        code[inside] = level
    return s, e, code
