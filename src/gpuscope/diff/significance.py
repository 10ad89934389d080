"""Is a difference larger than the noise? Welch's t-test on two independent samples.

    >>> result = welch([100.0, 102.0, 99.0, 101.0], [110.0, 112.0, 109.0, 111.0])
    >>> result.significant(), f"{result.p_value:.1e}", result.df
    (True, '3.4e-05', 6.0)

Welch's test does not assume equal variances (a change often changes the spread too). The
two-sided p-value comes from Student's t distribution with the Welch–Satterthwaite degrees of
freedom, through the regularised incomplete beta function (Numerical Recipes' continued fraction,
Lentz's method): no SciPy needed. The samples are kept (`before`, `after`); every statistic is
derived from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05  # two-sided: a difference is called significant below this p-value
MIN_SAMPLES = 3  # per side: fewer cannot estimate a variance worth testing with
_EPS = 1e-15
_TINY = 1e-300
_MAX_ITERATIONS = 300


@dataclass(frozen=True)
class Welch:
    """Welch's t-test of mean(after) − mean(before) on the raw samples."""

    before: tuple[float, ...]
    after: tuple[float, ...]

    @property
    def mean_before(self) -> float:
        return math.fsum(self.before) / len(self.before)

    @property
    def mean_after(self) -> float:
        return math.fsum(self.after) / len(self.after)

    @property
    def difference(self) -> float:
        return self.mean_after - self.mean_before

    @property
    def stderr(self) -> float:
        return math.sqrt(
            _variance(self.before) / len(self.before) + _variance(self.after) / len(self.after)
        )

    @property
    def t(self) -> float:
        if self.stderr == 0:
            return 0.0 if self.difference == 0 else math.copysign(math.inf, self.difference)
        return self.difference / self.stderr

    @property
    def df(self) -> float:
        """Welch–Satterthwaite degrees of freedom (n₁ + n₂ − 2 when neither side varies)."""
        va = _variance(self.before) / len(self.before)
        vb = _variance(self.after) / len(self.after)
        if va + vb == 0:
            return float(len(self.before) + len(self.after) - 2)
        denominator = va * va / (len(self.before) - 1) + vb * vb / (len(self.after) - 1)
        return (va + vb) ** 2 / denominator

    @property
    def p_value(self) -> float:
        """Two-sided: the chance of a |t| this large if the means were equal."""
        return two_sided_p(self.t, self.df)

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p_value < alpha

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Confidence interval of mean(after) − mean(before)."""
        if self.stderr == 0:
            return self.difference, self.difference
        half = t_quantile(1 - (1 - level) / 2, self.df) * self.stderr
        return self.difference - half, self.difference + half


def welch(before: Sequence[float], after: Sequence[float]) -> Welch | None:
    """The test, or None when a side has fewer than 2 samples (no variance to estimate)."""
    if len(before) < 2 or len(after) < 2:
        return None
    return Welch(tuple(float(v) for v in before), tuple(float(v) for v in after))


def _variance(values: tuple[float, ...]) -> float:
    """Sample variance (n − 1)."""
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)."""
    if math.isinf(t):
        return 0.0
    return incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t)."""
    tail = two_sided_p(t, df) / 2
    return 1 - tail if t > 0 else tail


def t_quantile(q: float, df: float) -> float:
    """The t with P(T ≤ t) = q (bisection on `t_cdf`; q in (0, 1))."""
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 ≤ x ≤ 1."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1) / (a + b + 2):
        return front * _continued_fraction(a, b, x) / a
    return 1 - front * _continued_fraction(b, a, 1 - x) / b


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) by Lentz's method (Numerical Recipes `betacf`)."""
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _MAX_ITERATIONS + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > _TINY else _TINY)
            c = 1 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return result
