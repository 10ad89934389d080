"""Fixed-rate scheduling without drift: slot k is due at `start + k·period` on the monotonic clock.

A sampler never sleeps "one period" after a sample (that drifts by the sample's own duration every
time); it waits for the next slot's deadline. Slots whose deadline passed while a sample was being
taken are skipped, not taken late, so samples stay on the grid.
"""

from __future__ import annotations


def deadline(start_ns: int, period_ns: int, slot: int) -> int:
    """When slot `slot` is due."""
    return start_ns + slot * period_ns


def next_slot(start_ns: int, period_ns: int, now_ns: int, taken: int) -> int:
    """The first slot after `taken` whose deadline is not already past at `now_ns`."""
    if now_ns <= deadline(start_ns, period_ns, taken + 1):
        return taken + 1
    return -(-(now_ns - start_ns) // period_ns)  # ceil: the first deadline at or after now
