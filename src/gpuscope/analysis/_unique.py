"""`np.unique` for the integer columns of a trace, in O(n): names, devices, threads and owner rows
are small non-negative integers, whose distinct values one `np.bincount` finds (~10 × faster than
the sort or hash of `np.unique` on the 255,780 operators of the ×10 benchmark trace, and the
analyses ask ~50 times). Results are exactly `np.unique`'s: sorted, in the column's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# beyond this many possible values per row, counting them costs more than sorting
_DENSE = 4


def unique(values: Any) -> Any:
    """`np.unique(values)`."""
    values = np.asarray(values)
    size = len(values) if values.ndim == 1 else 0
    if size and values.dtype.kind in "iu":
        low, high = int(values.min()), int(values.max())
        if low >= 0 and high < _DENSE * size + 4096:
            return np.flatnonzero(np.bincount(values)).astype(values.dtype)
        return sorted_unique(values)
    return np.unique(values)


def sorted_unique(values: Any) -> Any:
    """`np.unique` of a 1-d integer array by one sort: numpy ≥ 2.3 hashes instead, which on
    mostly distinct timestamps is ~50 × slower (2.6 s against 0.05 s for 1.8 M values). Arrays
    that are concatenated sorted runs sort fastest (a stable sort merges the runs)."""
    ordered = np.sort(values, kind="stable")
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def unique_inverse(values: Any) -> tuple[Any, Any]:
    """`np.unique(values, return_inverse=True)` of a 1-d array (the inverse 1-d)."""
    values = np.asarray(values)
    size = len(values) if values.ndim == 1 else 0
    if size and values.dtype.kind in "iu":
        low, high = int(values.min()), int(values.max())
        if high - low < 16 * size + 65536:
            offset = values.astype(np.int64) - low
            present = np.zeros(high - low + 1, bool)
            present[offset] = True
            rank = np.cumsum(present) - 1
            return (np.flatnonzero(present) + low).astype(values.dtype), rank[offset]
    found, inverse = np.unique(values, return_inverse=True)
    return found, inverse.reshape(-1)


def sort_by(primary: Any, secondary: Any) -> Any:
    """`np.lexsort((secondary, primary))` of two integer columns: one stable sort of a combined
    key where it fits in int64 (half the passes)."""
    if len(primary):
        low, high = int(primary.min()), int(primary.max())
        second_low, second_high = int(secondary.min()), int(secondary.max())
        span = second_high - second_low + 1
        if (high - low + 1) * span < 2**62:
            key = (primary.astype(np.int64) - low) * span + (
                secondary.astype(np.int64) - second_low
            )
            return np.argsort(key, kind="stable")
    return np.lexsort((secondary, primary))


def unique_rows(keys: Any) -> tuple[Any, Any]:
    """`np.unique(keys, axis=0, return_index=True, return_inverse=True)[1:]` of a 2-d integer
    array: the index of each distinct row's first occurrence, in sorted (lexicographic) order,
    and each row's position in that order. One `np.lexsort` (`np.unique(axis=0)` sorts
    structured rows, ~10 × slower)."""
    order, starts = _sorted_rows(keys)
    new = np.zeros(len(order), np.int64)
    new[starts] = 1
    inverse = np.empty(len(order), np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[starts], inverse


def row_groups(keys: Any) -> tuple[list[int], list[Any]]:
    """The distinct rows of a 2-d integer array as `unique_rows` orders them: the index of each
    one's first occurrence and the indices of all its occurrences, ascending."""
    order, starts = _sorted_rows(keys)
    return order[starts].tolist(), np.split(order, starts[1:])


def _sorted_rows(keys: Any) -> tuple[Any, Any]:
    order = np.lexsort(keys.T[::-1])  # stable: equal rows keep their order
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)])
    return order, starts
