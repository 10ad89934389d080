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

from gpuscope.timing import tdist

ALPHA = 0.05  # two-sided: a difference is called significant below this p-value
MIN_SAMPLES = 3  # per side: fewer cannot estimate a variance worth testing with


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
        return tdist.two_sided_p(self.t, self.df)

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p_value < alpha

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Confidence interval of mean(after) − mean(before)."""
        if self.stderr == 0:
            return self.difference, self.difference
        half = tdist.ppf(1 - (1 - level) / 2, self.df) * self.stderr
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
