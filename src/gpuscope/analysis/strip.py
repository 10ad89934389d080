"""The devices' busy / idle strip over the profiled window: the busy fraction of each of
`STRIP_BINS` equal bins per device — a bounded series (the same size for a 1 ms trace and a 1 h
one) that the report's pictures draw, with the longest gaps marked on it (`timeline.Gaps.longest`).

    >>> s = busy_strip([(0, np.array([0, 50]), np.array([25, 100]))], bins=4)
    >>> s.busy[0]
    (1.0, 0.0, 1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpuscope.analysis._intervals import overlap_with
from gpuscope.trace.model import I64

STRIP_BINS = 200  # per device: finer than any drawing of it (~900 px wide) needs, a few KiB of JSON
DIGITS = 4  # a fraction rounded to 0.01 % of a bin


@dataclass(frozen=True)
class Strip:
    """`busy[device]`: per bin, the fraction of it the device was busy; the bins, each a whole
    number of ns, tile [start_ns, start_ns + bins × bin_ns): the window from the first device
    activity to the last, rounded up to whole bins."""

    start_ns: int
    bin_ns: int
    busy: dict[int, tuple[float, ...]]


def busy_strip(merged: Sequence[tuple[int, I64, I64]], bins: int = STRIP_BINS) -> Strip | None:
    """From each device's merged busy intervals (device, sorted starts, ends); None without a
    window (no activity, or all of it at one instant)."""
    lanes = [(d, s, e) for d, s, e in merged if len(s)]
    if not lanes:
        return None
    first = min(int(s[0]) for _, s, _ in lanes)
    last = max(int(e[-1]) for _, _, e in lanes)
    if last <= first:
        return None
    width = max(-(-(last - first) // bins), 1)  # whole ns, rounded up: the last bin may end late
    edges = first + width * np.arange(bins + 1, dtype=np.int64)
    busy = {}
    for device, start, end in lanes:
        covered = overlap_with(start, end, edges[:-1], edges[1:])
        fractions = np.round(np.minimum(covered / width, 1.0), DIGITS)
        busy[device] = tuple(float(f) for f in fractions)
    return Strip(first, width, busy)
