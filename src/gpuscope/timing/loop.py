"""The sampling loop: calibrate calls per sample, warm up until timings converge, then sample
until the median's confidence interval is tight enough or the time budget is spent.

Pure logic over a `Timer` and a `Clock`, so every rule here is tested with scripted values.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from gpuscope.timing.stats import median_ci, quantile, relative_halfwidth
from gpuscope.timing.timer import Clock, Timer

Tick = Callable[[], None]

STOP_CI = "ci"  # the CI half-width of the median reached the target
STOP_BUDGET = "budget"  # the time budget ran out first
STOP_MAX = "max-samples"  # the sample cap was hit first
STOP_FIXED = "fixed-count"  # a fixed number of calls was recorded (kernel mode)


@dataclass(frozen=True)
class StopRule:
    """When warm-up and sampling end. Times in seconds, target as a fraction (0.01 = ±1 %)."""

    target_ci: float = 0.01
    level: float = 0.95
    min_samples: int = 10
    max_samples: int = 10_000
    budget_s: float = 1.0
    warmup_window: int = 5
    warmup_tol: float = 0.02
    warmup_budget_s: float = 0.5
    max_warmup: int = 500
    min_s: float = 0.0  # sample at least this long (sustained state: one load window)


@dataclass(frozen=True)
class Sampled:
    """What the loop collected; per-call µs."""

    samples: tuple[float, ...]
    warmup: tuple[float, ...]
    warmup_converged: bool
    calls: int
    stop_reason: str
    elapsed_s: float


def calls_for(per_call_us: float, min_sample_us: float, max_calls: int) -> int:
    """Calls per sample so that one sample lasts at least `min_sample_us`."""
    if per_call_us <= 0:
        return max_calls
    return max(1, min(max_calls, math.ceil(min_sample_us / per_call_us)))


def calibrate(timer: Timer) -> tuple[int, list[float]]:
    """Pick calls per sample; return it with the per-call values seen while calibrating."""
    if timer.fixed_calls is not None:
        return timer.fixed_calls, []
    calls, seen = 1, []
    for _ in range(4):
        seen.append(timer.sample(calls))
        need = calls_for(seen[-1], timer.min_sample_us, timer.max_calls)
        if need <= calls:
            break
        calls = need
    return calls, seen


def converged(values: list[float], window: int, tol: float) -> bool:
    """The medians of the last two windows agree within `tol` (relative)."""
    if len(values) < 2 * window:
        return False
    last = statistics.median(values[-window:])
    before = statistics.median(values[-2 * window : -window])
    if before == 0:
        return last == 0
    return abs(last - before) <= tol * abs(before)


def warm_up(
    timer: Timer, calls: int, rule: StopRule, clock: Clock, tick: Tick
) -> tuple[list[float], bool]:
    """Sample until two consecutive windows agree; False when the warm-up budget ran out."""
    values: list[float] = []
    start = clock()
    while len(values) < rule.max_warmup:
        values.append(timer.sample(calls))
        tick()
        if converged(values, rule.warmup_window, rule.warmup_tol):
            return values, True
        if clock() - start >= rule.warmup_budget_s:
            break
    return values, False


def ci_halfwidth(ordered: list[float], level: float) -> float:
    """Relative half-width of the median's CI for sorted samples."""
    low, high = median_ci(ordered, level)
    return relative_halfwidth(low, high, quantile(ordered, 0.5))


def collect(
    timer: Timer, calls: int, rule: StopRule, clock: Clock, tick: Tick
) -> tuple[list[float], str]:
    """Sample until the CI target, the budget or the sample cap; return samples and why it ended."""
    values: list[float] = []
    ordered: list[float] = []
    start = clock()
    while True:
        value = timer.sample(calls)
        tick()
        values.append(value)
        bisect.insort(ordered, value)
        enough = len(values) >= rule.min_samples and clock() - start >= rule.min_s
        if enough and ci_halfwidth(ordered, rule.level) <= rule.target_ci:
            return values, STOP_CI
        if enough and clock() - start >= rule.budget_s:
            return values, STOP_BUDGET
        if len(values) >= rule.max_samples:
            return values, STOP_MAX


def run(timer: Timer, rule: StopRule, clock: Clock, tick: Tick | None = None) -> Sampled:
    """Calibrate, warm up and collect. The first call is the caller's business (timed apart)."""
    tick = tick or (lambda: None)
    start = clock()
    calls, seen = calibrate(timer)
    warm, ok = warm_up(timer, calls, rule, clock, tick)
    values, reason = collect(timer, calls, rule, clock, tick)
    return Sampled(
        samples=tuple(values),
        warmup=tuple(seen + warm),
        warmup_converged=ok,
        calls=calls,
        stop_reason=reason,
        elapsed_s=clock() - start,
    )
