"""Welch's test and Student's t distribution against closed forms and printed t tables."""

from __future__ import annotations

import math

import pytest

from gpuscope.diff.significance import welch
from gpuscope.timing.tdist import betainc as incomplete_beta
from gpuscope.timing.tdist import ppf as t_quantile
from gpuscope.timing.tdist import two_sided_p

# two-sided 5 % and 1 % critical values of Student's t (any statistics textbook's t table)
T_TABLE = {1: (12.706, 63.657), 4: (2.776, 4.604), 10: (2.228, 3.169), 30: (2.042, 2.750)}


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_p_value_at_the_tabulated_critical_values(df: int) -> None:
    five, one = T_TABLE[df]
    assert two_sided_p(five, df) == pytest.approx(0.05, abs=2e-4)
    assert two_sided_p(one, df) == pytest.approx(0.01, abs=1e-4)
    assert t_quantile(0.975, df) == pytest.approx(five, abs=1e-3)


@pytest.mark.parametrize("x", [0.05, 0.3, 0.5, 0.77, 0.99])
def test_incomplete_beta_closed_forms(x: float) -> None:
    assert incomplete_beta(1, 1, x) == pytest.approx(x, rel=1e-12)
    assert incomplete_beta(3.5, 1, x) == pytest.approx(x**3.5, rel=1e-10)
    assert incomplete_beta(1, 2.5, x) == pytest.approx(1 - (1 - x) ** 2.5, rel=1e-10)


def test_normal_limit() -> None:
    """With very many degrees of freedom t is normal: P(|Z| ≥ 1.96) = erfc(1.96 / √2)."""
    assert two_sided_p(1.96, 1e7) == pytest.approx(math.erfc(1.96 / math.sqrt(2)), rel=1e-5)


def test_welch_statistics_by_hand() -> None:
    before, after = [10.0, 12.0, 11.0, 13.0], [20.0, 26.0, 23.0, 21.0, 25.0]
    # means 11.5 and 23; sample variances 5/3 and 6.5; n 4 and 5
    va, vb = (5 / 3) / 4, 6.5 / 5
    result = welch(before, after)
    assert result is not None
    assert result.difference == pytest.approx(11.5)
    assert result.t == pytest.approx(11.5 / math.sqrt(va + vb))
    assert result.df == pytest.approx((va + vb) ** 2 / (va**2 / 3 + vb**2 / 4))
    low, high = result.interval()
    assert (low + high) / 2 == pytest.approx(11.5)
    assert low > 0 and result.significant()


def test_degenerate_samples() -> None:
    assert welch([1.0], [1.0, 2.0]) is None
    same = welch([5.0, 5.0, 5.0], [5.0, 5.0, 5.0])
    assert same is not None and same.p_value == 1.0 and not same.significant()
    apart = welch([5.0, 5.0, 5.0], [6.0, 6.0, 6.0])
    assert apart is not None and apart.p_value == 0.0 and math.isinf(apart.t)
