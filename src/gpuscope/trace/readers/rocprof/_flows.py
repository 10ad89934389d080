"""Which host call launched which device op, in rocprof v1's results.json.

results.json carries no correlation id: tblextr.py draws a flow arrow from each launching API
call to its op. The arrow starts (`s`, µs) at the call's middle (ROCm 5+) or end (ROCm 4), moved
back to the op's start when that is earlier; it ends (`t`) at the op's start µs, on the op's
track and lane. The flow id becomes the correlation id of both ends (results.db carries the ids
themselves, column `Index`).

Arrows that leave exactly from one call's middle or end are matched at once (vectorised); the
rest (moved back, or nested calls sharing the instant) call by call, once the others have taken
their calls.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.trace.model import I64
from gpuscope.trace.readers.rocprof._piece import full

NESTED_LOOKBACK = 8  # launching calls on one thread looked at around one instant
_LAUNCHING = re.compile(
    r"Launch|Memcpy|Memset|Synchronize|WaitEvent|StreamWait|StreamWrite|memory_async_copy"
)
_TS_BITS = 44  # µs since the earliest instant (> 500 years); the lane goes above


@dataclass
class Flows:
    """Flow endpoints of results.json: phase 0 = `s` (from a call), 1 = `t` (to an op)."""

    id: I64
    phase: Any
    pid: I64
    tid: I64
    ts: I64  # µs, as written


@dataclass
class Track:
    """Where rows sit: track (pid), lane (tid), start and duration (µs as results.json writes
    them for flow matching, ns for the copy-size check)."""

    pid: I64
    tid: I64
    ts: I64
    dur: I64


def launching(names: list[str]) -> Any:
    """The calls tblextr.py draws arrows from (launches, copies, fills, syncs, stream waits)."""
    return np.array([_LAUNCHING.search(n) is not None for n in names], bool)


def link_flows(flows: Flows, host: Track, calls_launch: Any, ops: Track) -> tuple[I64, I64]:
    """Correlation ids (the flow id, -1 when unlinked) for the host rows and the op rows."""
    s, t = _pairs(flows)
    moved = flows.ts[s] == flows.ts[t]
    order = np.argsort(moved, kind="stable")  # arrows that were not moved back go first
    s, t, moved = s[order], t[order], moved[order]
    op_row = _op_rows(ops, flows, t)
    call = full(len(s), -1)
    exact = ~moved
    call[exact] = _exact_calls(host, calls_launch, flows, s[exact])
    call = _first_claims(call)
    finder = _CallFinder(host, calls_launch, set(call[call >= 0].tolist()))
    for i in np.flatnonzero((call < 0) & (op_row >= 0)).tolist():
        instant = int(flows.ts[s[i]])
        call[i] = finder.find(int(flows.pid[s[i]]), int(flows.tid[s[i]]), instant, moved[i])
    ok = (call >= 0) & (op_row >= 0)
    host_corr, op_corr = full(len(host.ts), -1), full(len(ops.ts), -1)
    host_corr[call[ok]] = op_corr[op_row[ok]] = flows.id[t[ok]]
    return host_corr, op_corr


def _pairs(flows: Flows) -> tuple[I64, I64]:
    """Indices of the `s` and `t` events sharing an id (the first `s` of an id)."""
    starts, ends = np.flatnonzero(flows.phase == 0), np.flatnonzero(flows.phase == 1)
    found = _lookup(flows.id[starts], flows.id[ends])
    hit = found >= 0
    return starts[found[hit]], ends[hit]


def _lookup(keys: I64, wanted: I64) -> I64:
    """Index in `keys` of the first equal key for each wanted value, -1 if none."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    pos = np.clip(np.searchsorted(ordered, wanted), 0, max(len(keys) - 1, 0))
    hit = (ordered[pos] == wanted) if len(keys) else np.zeros(len(wanted), bool)
    out = full(len(wanted), -1)
    out[hit] = order[pos[hit]]
    return out


def _keys(*where: tuple[I64, I64, I64]) -> list[I64]:
    """One int64 key per (pid, tid, µs) row, comparable across the given arrays."""
    lanes = np.concatenate([(pid << 32) | (tid & 0xFFFFFFFF) for pid, tid, _ in where])
    _, lane_ids = np.unique(lanes, return_inverse=True)
    stamps = np.concatenate([ts for _, _, ts in where])
    base = int(stamps.min()) if len(stamps) else 0
    keys = (lane_ids.reshape(-1).astype(np.int64) << _TS_BITS) | (stamps - base)
    bounds = np.cumsum([0, *(len(ts) for _, _, ts in where)])
    return [keys[a:b] for a, b in itertools.pairwise(bounds.tolist())]


def _op_rows(ops: Track, flows: Flows, t: I64) -> I64:
    """The op each `t` lands on (track, lane, start µs); equal keys are taken in turn."""
    op_keys, arrow_keys = _keys(
        (ops.pid, ops.tid, ops.ts), (flows.pid[t], flows.tid[t], flows.ts[t])
    )
    order = np.argsort(op_keys, kind="stable")
    ordered = op_keys[order]
    low = np.searchsorted(ordered, arrow_keys, "left")
    high = np.searchsorted(ordered, arrow_keys, "right")
    slot = low + _rank(arrow_keys)
    rows = full(len(t), -1)
    ok = slot < high
    rows[ok] = order[slot[ok]]
    return rows


def _rank(keys: I64) -> I64:
    """How many earlier entries have the same key."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    rank = full(len(keys), 0)
    rank[order] = np.arange(len(keys)) - np.searchsorted(ordered, ordered, "left")
    return rank


def _exact_calls(host: Track, calls_launch: Any, flows: Flows, s: I64) -> I64:
    """The one launching call whose middle (else end) is the arrow's start; -1 if not one."""
    rows = np.flatnonzero(calls_launch)
    lane = (host.pid[rows], host.tid[rows])
    middle, end, arrow = _keys((*lane, host.ts[rows] + host.dur[rows] // 2),
                               (*lane, host.ts[rows] + host.dur[rows]),
                               (flows.pid[s], flows.tid[s], flows.ts[s]))  # fmt: skip
    found = full(len(s), -1)
    for keys in (end, middle):  # the middle wins where both match
        unique = _unique_match(keys, arrow)
        found = np.where(unique >= 0, rows[np.maximum(unique, 0)], found)
    return found


def _unique_match(keys: I64, wanted: I64) -> I64:
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    low = np.searchsorted(ordered, wanted, "left")
    one = np.searchsorted(ordered, wanted, "right") - low == 1
    out = full(len(wanted), -1)
    out[one] = order[low[one]]
    return out


def _first_claims(call: I64) -> I64:
    """A call claimed by several arrows keeps the first; the others search again."""
    claimed = np.flatnonzero(call >= 0)
    _, first = np.unique(call[claimed], return_index=True)
    keep = np.zeros(len(call), bool)
    keep[claimed[first]] = True
    return np.where(keep, call, -1)


class _CallFinder:
    """The launching call, on one (track, thread), that an arrow starting at an instant left."""

    def __init__(self, host: Track, calls_launch: Any, linked: set[int]) -> None:
        self.middle = host.ts + host.dur // 2  # start + dur / 2, truncated by "%d"
        self.end = host.ts + host.dur
        self.linked = linked
        rows = np.flatnonzero(calls_launch)
        lanes = (host.pid[rows] << 32) | (host.tid[rows] & 0xFFFFFFFF)
        order = rows[np.lexsort((host.ts[rows], lanes[:]))]
        ordered = (host.pid[order] << 32) | (host.tid[order] & 0xFFFFFFFF)
        values, first = np.unique(ordered, return_index=True)
        bounds = [*first.tolist(), len(order)]
        self.lanes = {
            int(v): (order[a:b], host.ts[order[a:b]])
            for v, a, b in zip(values.tolist(), bounds[:-1], bounds[1:], strict=True)
        }

    def find(self, pid: int, tid: int, instant: int, moved: bool) -> int:
        """A call whose middle or end is the instant; for an arrow that may have been moved
        back, the first call not ending before it; else the innermost call holding it.
        -1 when none (calls already linked are skipped)."""
        lane = self.lanes.get((pid << 32) | (tid & 0xFFFFFFFF))
        if lane is None:
            return -1
        order, starts = lane
        last = int(np.searchsorted(starts, instant, side="right")) - 1
        before = [int(order[p]) for p in range(last, max(last - NESTED_LOOKBACK, -1), -1)]
        before = [row for row in before if row not in self.linked]
        found = next((r for r in before if instant in (self.middle[r], self.end[r])), -1)
        if found < 0 and moved:
            stop = min(last + NESTED_LOOKBACK, len(order))
            later = [int(order[p]) for p in range(last + 1, stop)]
            candidates = [r for r in reversed(before) if self.end[r] >= instant]
            candidates += [r for r in later if r not in self.linked]
            found = candidates[0] if candidates else -1
        if found < 0:
            found = next((r for r in before if self.end[r] >= instant), -1)
        if found >= 0:
            self.linked.add(found)
        return found
