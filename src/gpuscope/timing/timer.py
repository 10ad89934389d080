"""The `Timer` contract (one timed sample of N back-to-back calls) and the CPU wall-clock one.

A timer knows *how* to time; the loop in `loop.py` decides *how often*. Tests drive the loop
with scripted timers and a fake clock, so the stopping rules are checked exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

Clock = Callable[[], float]
"""Seconds from an arbitrary origin (time.perf_counter in real runs)."""


class Timer(Protocol):
    """Times calls of one function. Values are µs per call."""

    mode: str
    name: str  # what times, as Measurement.timer records it
    fixed_calls: int | None  # calls per sample this mode requires (cold: 1), else None
    min_sample_us: float  # calibrate calls per sample until one sample lasts this long
    max_calls: int

    def first_call(self) -> float:
        """Run the very first call and return its wall time in µs (compile, lazy load)."""
        ...

    def sample(self, calls: int) -> float:
        """Time `calls` back-to-back calls; return µs per call."""
        ...

    def host_us_per_call(self) -> float | None:
        """Median host time to enqueue one call, where the timer measures it."""
        ...

    def guard_underruns(self) -> int:
        """Samples where the GPU went idle before the timed calls were enqueued."""
        ...


class CpuTimer:
    """Host wall clock around `calls` calls: the labelled fallback where there is no GPU.

    It times whatever the callable does on the host; GPU work it launches asynchronously is
    not waited for, which is why GPU modes never fall back to it silently.
    """

    mode = "cpu"
    name = "cpu-wallclock"
    fixed_calls: int | None = None
    min_sample_us = 1000.0
    max_calls = 1_000_000

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        now: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self._fn = fn
        self._args = args
        self._kwargs = kwargs or {}
        self._now = now

    def first_call(self) -> float:
        return self.sample(1)

    def sample(self, calls: int) -> float:
        fn, args, kwargs = self._fn, self._args, self._kwargs
        start = self._now()
        for _ in range(calls):
            fn(*args, **kwargs)
        return (self._now() - start) / 1000.0 / calls

    def host_us_per_call(self) -> float | None:
        return None

    def guard_underruns(self) -> int:
        return 0
