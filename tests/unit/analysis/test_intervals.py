from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize("seed", range(5))
def test_the_unique_helpers_are_numpys(seed: int) -> None:
    """`unique` / `sorted_unique` (one sort, not numpy ≥ 2.3's slow hash on timestamps) give
    exactly `np.unique`, on small ids, large timestamps, concatenated sorted runs and edge sizes."""
    from gpuscope.analysis._unique import sorted_unique, unique

    rng = np.random.default_rng(seed)
    cases = [
        rng.integers(0, 50, 1000),
        rng.integers(10**15, 10**15 + 10**9, 5000),
        np.concatenate([np.sort(rng.integers(0, 10**12, 300)) for _ in range(4)]),
        np.zeros(0, np.int64),
        np.array([7], np.int64),
        np.array([-3, 5, -3], np.int64),
    ]
    for values in cases:
        want = np.unique(values)
        for got in (unique(values), sorted_unique(values)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
