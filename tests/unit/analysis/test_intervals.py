from __future__ import annotations

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with, take, union_length


def a(*values: int) -> np.ndarray:  # type: ignore[type-arg]
    return np.array(values, np.int64)


def test_merge_and_union() -> None:
    start, end = merge(a(5, 0, 20, 8), a(10, 6, 30, 9))
    assert start.tolist() == [0, 20] and end.tolist() == [10, 30]
    assert union_length(a(5, 0, 20, 8), a(10, 6, 30, 9)) == 20
    assert union_length(a(), a()) == 0


def test_overlap_with_windows() -> None:
    start, end = a(0, 20), a(10, 30)
    assert overlap_with(start, end, a(5, 0, 12), a(25, 40, 18)).tolist() == [10, 20, 0]


def test_take_with_missing_rows() -> None:
    assert take(a(7, 8), a(1, -1), -5).tolist() == [8, -5]
    assert take(a(), a(-1, -1), 3).tolist() == [3, 3]
