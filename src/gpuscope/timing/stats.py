"""Statistics of one benchmark's raw samples: order statistics, moments and a CI of the median.

Everything here is derived from the raw samples on demand (the samples are what gets stored).
The confidence interval of the median is distribution-free: two order statistics chosen from the
binomial distribution, so it needs no normality assumption and is exact for small samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# Above this many samples the normal approximation of Binomial(n, 1/2) picks the same ranks
# (±1) and keeps the per-sample stopping check O(1).
_EXACT_UP_TO = 200
_Z = {0.90: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


@dataclass(frozen=True)
class Stats:
    """Summary of samples (all in the samples' unit, µs in gpuscope.timing)."""

    n: int
    min: float
    p10: float
    p50: float
    p90: float
    p99: float
    max: float
    mean: float
    std: float
    cv: float
    iqr: float
    ci_low: float
    ci_high: float
    level: float

    @property
    def median(self) -> float:
        return self.p50

    @property
    def ci_halfwidth(self) -> float:
        """Half-width of the median's CI relative to the median (0.01 = ±1 %); inf if unknown."""
        return relative_halfwidth(self.ci_low, self.ci_high, self.p50)


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of sorted data (numpy's default method)."""
    if not ordered:
        raise ValueError("quantile of no samples")
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@lru_cache(maxsize=1024)
def median_ci_ranks(n: int, level: float = 0.95) -> tuple[int, int] | None:
    """1-based ranks (j, k) with P(x_(j) <= median <= x_(k)) >= level; None when n is too small.

    The interval is symmetric, k = n + 1 - j, and covers with probability 1 - 2 P(B <= j - 1),
    B ~ Binomial(n, 1/2). n = 20 gives (6, 15), the textbook value.
    """
    j = _exact_rank(n, 1.0 - level) if n <= _EXACT_UP_TO else _normal_rank(n, level)
    if j < 1:
        return None
    return j, n + 1 - j


def _exact_rank(n: int, alpha: float) -> int:
    """Largest j with P(B <= j - 1) <= alpha / 2, by accumulating the binomial terms."""
    total = 2**n
    tail = 0
    j = 0
    while True:
        tail += math.comb(n, j)
        if tail / total > alpha / 2:
            return j
        j += 1


def _normal_rank(n: int, level: float) -> int:
    z = _Z.get(round(level, 2)) or _z_for(level)
    return math.floor(n / 2 - z * math.sqrt(n) / 2)


def _z_for(level: float) -> float:
    # Acklam-free fallback: bisection on the normal CDF via erf; only used for unusual levels.
    lo, hi = 0.0, 10.0
    target = (1 + level) / 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def median_ci(ordered: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """CI of the median from sorted samples; (-inf, inf) when too few samples for `level`."""
    ranks = median_ci_ranks(len(ordered), level)
    if ranks is None:
        return -math.inf, math.inf
    j, k = ranks
    return ordered[j - 1], ordered[k - 1]


def relative_halfwidth(low: float, high: float, center: float) -> float:
    """(high - low) / 2 / center; inf when the interval is unbounded or the center is 0."""
    if not (math.isfinite(low) and math.isfinite(high)) or center == 0:
        return math.inf
    return (high - low) / 2 / abs(center)


def summarize(samples: Sequence[float], level: float = 0.95) -> Stats:
    """All statistics of `samples`. Raises ValueError on an empty sequence."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        raise ValueError("no samples to summarize")
    mean = math.fsum(ordered) / n
    var = math.fsum((x - mean) ** 2 for x in ordered) / (n - 1) if n > 1 else 0.0
    std = math.sqrt(var)
    low, high = median_ci(ordered, level)
    return Stats(
        n=n,
        min=ordered[0],
        p10=quantile(ordered, 0.10),
        p50=quantile(ordered, 0.50),
        p90=quantile(ordered, 0.90),
        p99=quantile(ordered, 0.99),
        max=ordered[-1],
        mean=mean,
        std=std,
        cv=std / mean if mean else math.inf,
        iqr=quantile(ordered, 0.75) - quantile(ordered, 0.25),
        ci_low=low,
        ci_high=high,
        level=level,
    )
