"""Statistics from raw samples, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from gpuscope.timing.stats import (
    _exact_rank,
    median_ci,
    median_ci_ranks,
    quantile,
    relative_halfwidth,
    summarize,
)


def _coverage(n: int, j: int) -> float:
    below = sum(math.comb(n, i) for i in range(j)) / 2**n
    return 1 - 2 * below


def test_quantile_interpolates_linearly() -> None:
    data = [1.0, 2.0, 3.0, 4.0]
    assert quantile(data, 0.0) == 1.0
    assert quantile(data, 0.5) == 2.5
    assert quantile(data, 0.1) == pytest.approx(1.3)
    assert quantile(data, 1.0) == 4.0


def test_summarize_one_to_ten() -> None:
    s = summarize([7.0, 3.0, 10.0, 1.0, 5.0, 2.0, 9.0, 4.0, 8.0, 6.0])
    assert (s.n, s.min, s.max, s.p50, s.mean) == (10, 1.0, 10.0, 5.5, 5.5)
    assert s.std == pytest.approx(math.sqrt(55 / 6))  # sample variance of 1..10 is 9.1667
    assert s.cv == pytest.approx(math.sqrt(55 / 6) / 5.5)
    assert s.iqr == pytest.approx(7.75 - 3.25)
    assert (s.p10, s.p90, s.p99) == (pytest.approx(1.9), pytest.approx(9.1), pytest.approx(9.91))
    assert (s.ci_low, s.ci_high) == (2.0, 9.0)  # ranks (2, 9) for n = 10
    assert s.ci_halfwidth == pytest.approx((9 - 2) / 2 / 5.5)


@pytest.mark.parametrize(("n", "ranks"), [(5, None), (6, (1, 6)), (10, (2, 9)), (20, (6, 15))])
def test_median_ci_ranks_textbook_values(n: int, ranks: tuple[int, int] | None) -> None:
    assert median_ci_ranks(n) == ranks


@pytest.mark.parametrize("n", range(6, 201))
def test_exact_ranks_are_the_tightest_with_95_percent_coverage(n: int) -> None:
    ranks = median_ci_ranks(n)
    assert ranks is not None
    j, k = ranks
    assert k == n + 1 - j
    assert _coverage(n, j) >= 0.95
    assert _coverage(n, j + 1) < 0.95


@pytest.mark.parametrize("n", [201, 250, 500, 1000, 4001])
def test_large_n_approximation_is_conservative_and_close(n: int) -> None:
    ranks = median_ci_ranks(n)
    assert ranks is not None
    exact = _exact_rank(n, 0.05)
    assert exact - 1 <= ranks[0] <= exact


def test_single_sample_and_too_few_for_a_ci() -> None:
    s = summarize([3.0])
    assert (s.n, s.std, s.p50) == (1, 0.0, 3.0)
    assert math.isinf(s.ci_halfwidth)
    assert median_ci([1.0, 2.0, 3.0]) == (-math.inf, math.inf)


def test_relative_halfwidth_edges() -> None:
    assert relative_halfwidth(9.0, 11.0, 10.0) == pytest.approx(0.1)
    assert math.isinf(relative_halfwidth(1.0, 2.0, 0.0))
    assert math.isinf(relative_halfwidth(-math.inf, 2.0, 1.0))


def test_summarize_refuses_no_samples() -> None:
    with pytest.raises(ValueError, match="no samples"):
        summarize([])
