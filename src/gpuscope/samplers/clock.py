"""Clocks for the samplers: the real one, and the protocol a test clock implements."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic and wall time in ns, and a wait that an event can cut short."""

    def monotonic_ns(self) -> int: ...

    def time_ns(self) -> int: ...

    def wait(self, signal: threading.Lock, timeout_ns: int) -> bool:
        """Wait up to `timeout_ns` for `signal` (a held lock) to be released; True if it was.

        A returning True has taken the lock again, so each release wakes one wait.
        """
        ...


class SystemClock:
    """`time.monotonic_ns`, `time.time_ns`, and a timed lock acquire (a futex wait: the kernel
    wakes the thread at the deadline; cheaper than `Event.wait`, which builds a Condition)."""

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def time_ns(self) -> int:
        return time.time_ns()

    def wait(self, signal: threading.Lock, timeout_ns: int) -> bool:
        if timeout_ns <= 0:
            return signal.acquire(blocking=False)
        return signal.acquire(timeout=timeout_ns / 1e9)
