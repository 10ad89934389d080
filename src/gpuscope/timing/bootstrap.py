"""Bootstrap confidence interval of the ratio of medians, resampling whole rounds.

A/B samples are taken in interleaved rounds (a block of A, a block of B, order alternating), so
neighbouring samples share clock and thermal state. Resampling rounds — the same rounds for
both arms — keeps that pairing and the autocorrelation inside a block, which resampling single
samples would wrongly treat as independent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class RatioCI:
    """ratio = median(B) / median(A) with its percentile-bootstrap CI at `level`."""

    ratio: float
    low: float
    high: float
    level: float


def ratio_ci(
    a_rounds: Sequence[Sequence[float]],
    b_rounds: Sequence[Sequence[float]],
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> RatioCI:
    """CI of median(B)/median(A); rounds are paired by index and must have equal block sizes."""
    a = np.asarray(a_rounds, dtype=np.float64)
    b = np.asarray(b_rounds, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] == 0:
        raise ValueError(f"need equal, non-empty rounds × block arrays, got {a.shape}, {b.shape}")
    point = float(np.median(b) / np.median(a))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, a.shape[0], size=(resamples, a.shape[0]))
    med_a = np.median(a[picks].reshape(resamples, -1), axis=1)
    med_b = np.median(b[picks].reshape(resamples, -1), axis=1)
    ratios = med_b / med_a
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return RatioCI(ratio=point, low=float(low), high=float(high), level=level)


def ratio_ci_unpaired(
    a: Sequence[float],
    b: Sequence[float],
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> RatioCI:
    """CI of median(B)/median(A) for two independent runs (e.g. against a stored baseline)."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.size == 0 or xb.size == 0:
        raise ValueError("need samples on both sides")
    rng = np.random.default_rng(seed)
    med_a = np.median(xa[rng.integers(0, xa.size, size=(resamples, xa.size))], axis=1)
    med_b = np.median(xb[rng.integers(0, xb.size, size=(resamples, xb.size))], axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(med_b / med_a, [tail, 100 - tail])
    point = float(np.median(xb) / np.median(xa))
    return RatioCI(ratio=point, low=float(low), high=float(high), level=level)
