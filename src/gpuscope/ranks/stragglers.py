"""Who arrives last at each collective, and how long the others wait for it.

A rank *arrives* at a collective when its device starts the call's kernel (on the reference
clock). Nothing moves until the last member has arrived, so every other member waits
`last arrival - its own arrival` inside its kernel; the last one does not wait at all, and its
kernel's duration is the collective's own time (the transfer, without waiting), which is what the
bandwidth is computed from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.ranks.match import Matching
from gpuscope.trace.model import I64


@dataclass(frozen=True)
class Arrivals:
    """Per collective with at least two aligned members."""

    index: I64  # into the Matching
    last: I64  # the rank index that arrived last
    first_ns: I64  # earliest arrival (reference clock)
    last_ns: I64  # latest arrival
    second_ns: I64  # the latest arrival among the others (how late the last one was)
    wait_ns: I64  # the others' waits, summed
    transfer_ns: I64  # the last arriver's kernel duration
    waits: I64  # (collective, rank): last arrival - own arrival, 0 when absent
    present: np.ndarray  # (collective, rank): the rank is an aligned member

    def __len__(self) -> int:
        return len(self.index)

    @property
    def skew_ns(self) -> I64:
        result: I64 = self.last_ns - self.first_ns
        return result


def arrivals(matching: Matching, starts: list[I64 | None], ends: list[I64 | None]) -> Arrivals:
    """`starts[r]` / `ends[r]`: rank r's call times on the reference clock (None: not aligned)."""
    rows = matching.rows
    ranks = rows.shape[1]
    start = np.full(rows.shape, -1, np.int64)
    dur = np.zeros(rows.shape, np.int64)
    present = np.zeros(rows.shape, bool)
    for r in range(ranks):
        s, e = starts[r], ends[r]
        if s is None or e is None:
            continue
        mine = rows[:, r] >= 0
        start[mine, r] = s[rows[mine, r]]
        dur[mine, r] = e[rows[mine, r]] - s[rows[mine, r]]
        present[mine, r] = True
    index = np.flatnonzero(present.sum(axis=1) >= 2)
    return _collect(index, start[index], dur[index], present[index])


def _collect(index: I64, start: I64, dur: I64, present: np.ndarray) -> Arrivals:
    low = np.iinfo(np.int64).min
    high = np.iinfo(np.int64).max
    masked = np.where(present, start, low)
    order = np.argsort(masked, axis=1, kind="stable")
    last = order[:, -1] if len(index) else np.zeros(0, np.int64)
    at = np.arange(len(index))
    last_ns = masked[at, last]
    second_ns = masked[at, order[:, -2]] if len(index) else np.zeros(0, np.int64)
    first_ns = np.where(present, start, high).min(axis=1) if len(index) else last_ns
    waits = np.where(present, last_ns[:, None] - start, 0)
    return Arrivals(
        index=index,
        last=last.astype(np.int64),
        first_ns=first_ns,
        last_ns=last_ns,
        second_ns=second_ns,
        wait_ns=waits.sum(axis=1),
        transfer_ns=dur[at, last],
        waits=waits,
        present=present,
    )


@dataclass(frozen=True)
class RankWaits:
    """Per rank, over the collectives it took part in."""

    collectives: I64  # aligned collectives it was a member of
    last: I64  # times it arrived last
    late_ns: I64  # at those, how much later than the next latest member
    caused_ns: I64  # the others' waits at those
    waited_ns: I64  # its own waits for others


def per_rank(a: Arrivals, ranks: int) -> RankWaits:
    if len(a) == 0:
        zero = np.zeros(ranks, np.int64)
        return RankWaits(zero, zero, zero, zero, zero)
    late = np.bincount(a.last, weights=a.last_ns - a.second_ns, minlength=ranks)
    caused = np.bincount(a.last, weights=a.wait_ns, minlength=ranks)
    return RankWaits(
        collectives=a.present.sum(axis=0).astype(np.int64),
        last=np.bincount(a.last, minlength=ranks).astype(np.int64),
        late_ns=late.astype(np.int64),
        caused_ns=caused.astype(np.int64),
        waited_ns=a.waits.sum(axis=0).astype(np.int64),
    )
