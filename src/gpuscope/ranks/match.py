"""Which calls on different ranks are one collective.

Calls are keyed by (process group, collective kind, size where every member passes the same
size); NCCL / RCCL run the calls of one communicator in the same order on every rank. Matching by
the n-th call of a key fails on real jobs, though: a rank of a 128-rank job takes part in process
groups that another rank does not (the HTA A100 pair: rank 0's first all-to-all ends before rank
1's first one starts), and a profiler window can cut a call on one side. So once the clocks are
aligned (`ranks.align`), a call is matched to the collective of the same key whose aligned end is
nearest, if the two ends agree within the tolerance and the two calls overlap in time (a peer
cannot leave a collective before the other has joined it); one call per rank per collective,
nearest pairs first. A call that matches nothing starts a collective of its own (a group the
ranks seen so far are not in).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.trace.model import I64

END_SHARE = 0.05  # ends may also differ by this share of the shorter call (a ring's last step)


@dataclass(frozen=True)
class RankCalls:
    """One rank's calls on the reference clock (offset applied), in time order."""

    key: I64
    start: I64
    end: I64


@dataclass(frozen=True)
class Matching:
    """`rows[c, r]`: the row of rank r's calls in collective c, -1 when r is not in it."""

    rows: I64
    key: I64  # per collective

    def __len__(self) -> int:
        return len(self.key)

    def members(self) -> I64:
        result: I64 = (self.rows >= 0).sum(axis=1)
        return result


class _Open:
    """The collectives found so far: key, latest aligned start, earliest and first aligned end."""

    def __init__(self, ranks: int) -> None:
        self.ranks = ranks
        self.rows: list[I64] = []
        self.key = np.zeros(0, np.int64)
        self.start_max = np.zeros(0, np.int64)
        self.end_min = np.zeros(0, np.int64)
        self.end_ref = np.zeros(0, np.int64)
        self.dur_min = np.zeros(0, np.int64)

    def add(self, r: int, calls: RankCalls, rows: I64) -> None:
        block = np.full((len(rows), self.ranks), -1, np.int64)
        block[:, r] = rows
        self.rows.append(block)
        self.key = np.r_[self.key, calls.key[rows]]
        self.start_max = np.r_[self.start_max, calls.start[rows]]
        self.end_min = np.r_[self.end_min, calls.end[rows]]
        self.end_ref = np.r_[self.end_ref, calls.end[rows]]
        self.dur_min = np.r_[self.dur_min, calls.end[rows] - calls.start[rows]]

    def join(self, r: int, calls: RankCalls, collective: I64, rows: I64) -> None:
        table = np.concatenate(self.rows) if len(self.rows) > 1 else self.rows[0]
        table[collective, r] = rows
        self.rows = [table]
        self.start_max[collective] = np.maximum(self.start_max[collective], calls.start[rows])
        self.end_min[collective] = np.minimum(self.end_min[collective], calls.end[rows])
        dur = calls.end[rows] - calls.start[rows]
        self.dur_min[collective] = np.minimum(self.dur_min[collective], dur)

    def matching(self) -> Matching:
        if not self.rows:
            return Matching(np.zeros((0, self.ranks), np.int64), self.key)
        table = np.concatenate(self.rows)
        order = np.argsort(self.end_ref, kind="stable")
        return Matching(table[order], self.key[order])


def match(ranks: list[RankCalls | None], tol: int) -> Matching:
    """Collectives across ranks; a rank given as None (its clock is not aligned) takes no part."""
    found = _Open(len(ranks))
    for r, calls in enumerate(ranks):
        if calls is None or len(calls.key) == 0:
            continue
        collective, rows = _pairs(found, calls, tol) if len(found.key) else (_none(), _none())
        if len(rows):
            found.join(r, calls, collective, rows)
        rest = np.setdiff1d(np.arange(len(calls.key)), rows)
        if len(rest):
            found.add(r, calls, rest)
    return found.matching()


def _none() -> I64:
    return np.zeros(0, np.int64)


def _pairs(found: _Open, calls: RankCalls, tol: int) -> tuple[I64, I64]:
    """(collective, row) pairs: nearest aligned ends of one key that agree and overlap."""
    cand_c: list[I64] = []
    cand_r: list[I64] = []
    for key in np.intersect1d(found.key, calls.key):
        mine = np.flatnonzero(calls.key == key)
        theirs = np.flatnonzero(found.key == key)
        theirs = theirs[np.argsort(found.end_ref[theirs], kind="stable")]
        pos = np.searchsorted(found.end_ref[theirs], calls.end[mine])
        for side in (pos - 1, pos):
            ok = (side >= 0) & (side < len(theirs))
            cand_c.append(theirs[side[ok]])
            cand_r.append(mine[ok])
    if not cand_c:
        return _none(), _none()
    c, r = np.concatenate(cand_c), np.concatenate(cand_r)
    gap = np.abs(found.end_ref[c] - calls.end[r])
    shorter = np.minimum(found.dur_min[c], calls.end[r] - calls.start[r])
    agree = gap <= tol + END_SHARE * shorter
    overlap = (calls.start[r] <= found.end_min[c] + tol) & (
        found.start_max[c] <= calls.end[r] + tol
    )
    keep = agree & overlap
    return _greedy(c[keep], r[keep], gap[keep])


def _greedy(c: I64, r: I64, gap: I64) -> tuple[I64, I64]:
    """One-to-one pairs, the closest first."""
    used_c: set[int] = set()
    used_r: set[int] = set()
    out_c: list[int] = []
    out_r: list[int] = []
    for i in np.argsort(gap, kind="stable"):
        ci, ri = int(c[i]), int(r[i])
        if ci in used_c or ri in used_r:
            continue
        used_c.add(ci)
        used_r.add(ri)
        out_c.append(ci)
        out_r.append(ri)
    return np.asarray(out_c, np.int64), np.asarray(out_r, np.int64)
