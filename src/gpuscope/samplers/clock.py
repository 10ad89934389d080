"""Clocks for the samplers: the real one, and the protocol a test clock implements."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic and wall time in ns, and a sleep."""

    def monotonic_ns(self) -> int: ...

    def time_ns(self) -> int: ...

    def sleep_ns(self, duration_ns: int) -> None: ...


class SystemClock:
    """`time.monotonic_ns`, `time.time_ns` and `time.sleep` (clock_nanosleep: the kernel wakes
    the thread at the deadline — the cheapest wait Python offers, cheaper than a timed lock or
    `Event.wait`)."""

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def time_ns(self) -> int:
        return time.time_ns()

    def sleep_ns(self, duration_ns: int) -> None:
        time.sleep(duration_ns / 1e9)


# The clock every sampler uses unless a test injects one; samplers sharing it share a thread.
SYSTEM_CLOCK = SystemClock()
