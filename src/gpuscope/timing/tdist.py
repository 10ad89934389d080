"""Student's t distribution (CDF, two-sided p, quantile) with the standard library alone: the
regularized incomplete beta function by its continued fraction (Numerical Recipes §6.4), the
quantile by bisection. Accurate to ~1e-10, enough for a p-value; no scipy at start-up or at all.
One copy for every test gpuscope makes: diff's Welch test on step times, check's run-to-run
test."""

from __future__ import annotations

import math

_EPS = 1e-14
_TINY = 1e-300


def cdf(t: float, df: float) -> float:
    """P(T <= t) for T ~ Student's t with `df` degrees of freedom (df may be fractional)."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if df <= 0 or math.isnan(t):
        return math.nan
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2, 0.5, x)  # P(T > |t|)
    return 1 - tail if t > 0 else tail


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|)."""
    if math.isinf(t):
        return 0.0
    if df <= 0 or math.isnan(t):
        return math.nan
    return betainc(df / 2, 0.5, df / (df + t * t))


def ppf(p: float, df: float) -> float:
    """The t with P(T <= t) = p."""
    if not 0 < p < 1:
        raise ValueError(f"quantile of p={p}")
    lo, hi = -1.0, 1.0
    while cdf(lo, df) > p:
        lo *= 2
    while cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > _TINY else _TINY)
            c = 1 + aa / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return h
