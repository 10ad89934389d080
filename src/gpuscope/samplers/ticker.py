"""`Ticker`: one thread that wakes on a fixed-rate grid and runs every sampler subscribed to it.

The power and VRAM samplers of a run share one ticker when they have the same period (and clock):
each wakeup of a Python thread costs tens of µs of CPU, as much as taking a sample, so one thread
for both halves the samplers' CPU use at 100 Hz (benchmarks/bench_samplers.py). The shared tickers
live in a small registry guarded by a lock; a ticker stops when its last sampler leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from gpuscope.samplers.clock import Clock
from gpuscope.samplers.schedule import deadline, next_slot

# Called with (slot, deadline_ns) when a slot is due.
Member = Callable[[int, int], None]
# The thread sleeps at most this long at a time, so that stopping never waits longer for it.
MAX_NAP_NS = 50_000_000


class Ticker:
    """Slot k is due at `start_ns + k·period_ns` (monotonic clock); a slot whose deadline passed
    while the members were sampling is skipped, so the grid never drifts."""

    def __init__(self, period_ns: int, clock: Clock) -> None:
        self.period_ns = period_ns
        self.clock = clock
        self.start_ns = clock.monotonic_ns()
        self.slot = 0
        self._members: list[Member] = []
        self._stop = False
        self._thread: threading.Thread | None = None

    @property
    def members(self) -> int:
        return len(self._members)

    def add(self, member: Member) -> None:
        self._members = [*self._members, member]  # copy on write: the loop iterates a snapshot

    def remove(self, member: Member) -> None:
        self._members = [m for m in self._members if m is not member]

    def start(self) -> None:
        """Run the loop in a daemon thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="gpuscope-sampler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """End the loop and wait for the thread."""
        self._stop = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        self._thread = None

    def run(self, until_ns: int | None = None) -> None:
        """The loop (the thread's body; tests call it with a fake clock and `until_ns`)."""
        while not self._stop:
            due = deadline(self.start_ns, self.period_ns, self.slot)
            if until_ns is not None and due > until_ns:
                break
            now = self.clock.monotonic_ns()
            if now < due:
                self.clock.sleep_ns(min(due - now, MAX_NAP_NS))
                continue
            for member in self._members:
                member(self.slot, due)
            self.slot = next_slot(
                self.start_ns, self.period_ns, self.clock.monotonic_ns(), self.slot
            )


_LOCK = threading.Lock()
_SHARED: dict[tuple[int, Clock], Ticker] = {}


def join(period_ns: int, clock: Clock, member: Member) -> Ticker:
    """Subscribe `member` to the shared ticker of this period and clock (created if needed)."""
    with _LOCK:
        ticker = _SHARED.get((period_ns, clock))
        if ticker is None:
            ticker = _SHARED[(period_ns, clock)] = Ticker(period_ns, clock)
        ticker.add(member)
        return ticker


def leave(ticker: Ticker, member: Member) -> None:
    """Unsubscribe `member`; the last one out stops the ticker."""
    with _LOCK:
        ticker.remove(member)
        if ticker.members:
            return
        if _SHARED.get((ticker.period_ns, ticker.clock)) is ticker:
            del _SHARED[(ticker.period_ns, ticker.clock)]
    ticker.stop()
