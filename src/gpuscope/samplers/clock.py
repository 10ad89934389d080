"""Clocks for the samplers: the real one, and the protocol a test clock implements."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic and wall time in ns, and a wait that an event can cut short."""

    def monotonic_ns(self) -> int: ...

    def time_ns(self) -> int: ...

    def wait(self, event: threading.Event, timeout_ns: int) -> bool:
        """Wait up to `timeout_ns` or until `event` is set; True when the event is set."""
        ...


class SystemClock:
    """`time.monotonic_ns`, `time.time_ns`, and `Event.wait` (a timed futex wait, no polling)."""

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def time_ns(self) -> int:
        return time.time_ns()

    def wait(self, event: threading.Event, timeout_ns: int) -> bool:
        return event.wait(max(timeout_ns, 0) / 1e9)
