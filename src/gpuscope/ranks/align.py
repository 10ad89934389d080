"""Clock alignment across ranks, on collective ends.

Every rank leaves a collective at (nearly) the same moment: a collective ends when the last peer
has contributed, and the data then reaches everyone within a ring / tree step. So the ends of one
collective on two ranks differ by the two clocks' offset plus a small skew. The offset of rank B
against rank A is found by a vote: the differences `end_A - end_B` of calls of the same
collective key near the same position in each rank's sequence (a missing or extra call on one
side shifts the sequence, the vote does not care), the difference most others agree with within
`tolerance`, refined to the median of those. Ranks on one host share the clock: the offset then
comes out near 0 and says so.

A rank whose calls agree with too few of the other's cannot be aligned (different process
groups, a profiling window that does not overlap, no collectives): `Offset.offset_ns` is None,
and the report says so instead of naming stragglers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from gpuscope.trace.model import I64

WINDOW = 8  # calls of a key this far apart in each rank's sequence are paired as candidates
HEAD = 32  # ... and every pair among the first HEAD calls of a key (one profiler started late)
CHAIN = 8  # other aligned ranks tried when a rank shares too little with the reference
MIN_SUPPORT = 2  # collectives whose ends must agree before an offset is trusted
TOLERANCE_SHARE = 0.05  # of the median collective duration ...
TOLERANCE_MIN_NS = 20_000  # ... within these bounds: how close two ends must be to agree
TOLERANCE_MAX_NS = 5_000_000


@dataclass(frozen=True)
class Offset:
    """Add `offset_ns` to a rank's times to put them on the reference rank's clock."""

    offset_ns: int | None
    against: int | None  # index of the rank it was aligned against (None: it is the reference)
    support: int  # call pairs whose ends agreed with the offset


def tolerance(durations: I64) -> int:
    """How close two ends of one collective must be: a share of the typical duration."""
    if len(durations) == 0:
        return TOLERANCE_MIN_NS
    typical = float(np.median(durations))
    return int(np.clip(TOLERANCE_SHARE * typical, TOLERANCE_MIN_NS, TOLERANCE_MAX_NS))


def pair_differences(key_a: I64, end_a: I64, key_b: I64, end_b: I64) -> I64:
    """`end_a - end_b` for the candidate pairs: same key, near the same sequence position."""
    parts: list[I64] = []
    for key in np.intersect1d(key_a, key_b):
        ea = np.sort(end_a[key_a == key])
        eb = np.sort(end_b[key_b == key])
        for shift in range(-WINDOW, WINDOW + 1):
            i = np.arange(max(0, -shift), min(len(ea), len(eb) - shift))
            if len(i):
                parts.append(ea[i] - eb[i + shift])
        head_a, head_b = ea[:HEAD], eb[:HEAD]
        far = np.abs(np.arange(len(head_a))[:, None] - np.arange(len(head_b))[None, :]) > WINDOW
        parts.append((head_a[:, None] - head_b[None, :])[far])
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def vote(differences: I64, tol: int) -> tuple[int, int] | None:
    """(offset, support): the difference the most others agree with within `tol` (ties: the one
    nearest 0), refined to the median of its supporters; None without any difference."""
    if len(differences) == 0:
        return None
    d = np.sort(differences)
    hi = np.searchsorted(d, d + tol, side="right")
    lo = np.searchsorted(d, d - tol, side="left")
    support = hi - lo
    best = int(np.lexsort((np.abs(d), -support))[0])
    agreeing = d[lo[best] : hi[best]]
    return int(np.median(agreeing)), len(agreeing)


def offset(key_a: I64, end_a: I64, key_b: I64, end_b: I64, tol: int) -> tuple[int, int] | None:
    """Rank B's offset onto rank A's clock and its support; None when fewer than MIN_SUPPORT
    calls agree (the clocks cannot be aligned from these traces)."""
    found = vote(pair_differences(key_a, end_a, key_b, end_b), tol)
    if found is None or found[1] < MIN_SUPPORT:
        return None
    return found


def align(keys: list[I64], ends: list[I64], tol: int) -> list[Offset]:
    """Offsets of every rank onto the first rank's clock. A rank that shares too few collectives
    with the first is aligned against another rank already aligned (a chain through subgroups)."""
    result: list[Offset | None] = [Offset(0, None, 0)] + [None] * (len(keys) - 1)
    pending = list(range(1, len(keys)))
    while pending:
        left = []
        for b in pending:
            found = _against_aligned(b, result, keys, ends, tol)
            if found is None:
                left.append(b)
            else:
                result[b] = found
        if len(left) == len(pending):
            break
        pending = left
    return [r if r is not None else Offset(None, None, 0) for r in result]


def _against_aligned(
    b: int, result: list[Offset | None], keys: list[I64], ends: list[I64], tol: int
) -> Offset | None:
    """Against the reference first, then the aligned ranks nearest to `b` (at most CHAIN)."""
    for a in _candidates(b, result):
        known = result[a]
        assert known is not None and known.offset_ns is not None
        found = offset(keys[a], ends[a], keys[b], ends[b], tol)
        if found is not None:
            return Offset(found[0] + known.offset_ns, a, found[1])
    return None


def _candidates(b: int, result: list[Offset | None]) -> Iterator[int]:
    """0, then up to CHAIN aligned ranks by distance from b (lazily: most ranks stop at 0)."""
    yield 0
    tried = 0
    for distance in range(1, len(result)):
        for a in (b - distance, b + distance):
            if 0 < a < len(result) and result[a] is not None:
                yield a
                tried += 1
                if tried >= CHAIN:
                    return
