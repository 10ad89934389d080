"""How late a rank's host is to launch: the device idle time its host is to blame for, read off
the rank's own host states (`analysis.hoststate`, the one model under every verdict):

- **after a sync**: the idle intervals that began with the launching thread blocked in a sync
  (the sync drained the queue): the wait for it to return, the relaunch, and the host's own work
  before it launched again — a late rank's `torch.cuda.synchronize(); time.sleep(…)`;
- **host wait**: in the other idle intervals, the time the host was dispatching (launch) or
  doing its own work (host work, or a dispatch that came late with no host timeline) — a rank
  whose host is simply slower. Time it spent blocked in a sync there is not its lateness: it
  was waiting on work the device (or another rank, through it) had not finished.

Queued time (a dependency), start-up and unknown time are neither. Both are taken per step (the
part inside each [lo, hi)) and over the whole trace; times stay on the rank's own clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis import merge, overlap_with
from gpuscope.analysis.hoststate import STATES
from gpuscope.trace.model import I64

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

HOST_STATES = ("launch", "host_work", "sync", "host_late", "copy_staging")
LATE_STATES = ("launch", "host_work", "host_late", "copy_staging")


WHERE = 2  # places named per measure


@dataclass(frozen=True)
class HostLate:
    after_sync: I64  # per step: idle in intervals a sync began
    host_wait: I64  # per step: the host's dispatch and own work in the other idle intervals
    after_sync_ns: int  # over the whole trace
    host_wait_ns: int
    host_wait_parts: tuple[tuple[str, int], ...] = ()  # (host state, ns), the largest first
    host_wait_where: tuple[str, ...] = ()  # what the host ran in the largest state's time
    after_sync_where: tuple[str, ...] = ()


def host_late(a: Analysis, lo: I64, hi: I64) -> HostLate:
    """Per step [lo, hi) and in total, with the states and places (the host-state labels) that
    hold the most of each over the whole trace."""
    b = a.breakdown
    if b is None:
        zeros = np.zeros(len(lo), np.int64)
        return HostLate(zeros, zeros, 0, 0)
    pieces = b.idle.pieces
    host = np.isin(pieces.state, [STATES.index(s) for s in HOST_STATES])
    late = np.isin(pieces.state, [STATES.index(s) for s in LATE_STATES])
    drained = b.idle.drained[pieces.gap]
    after = merge(pieces.start[host & drained], pieces.end[host & drained])
    waits = merge(pieces.start[late & ~drained], pieces.end[late & ~drained])
    length = pieces.end - pieces.start
    per_state = np.bincount(pieces.state[late & ~drained], weights=length[late & ~drained],
                            minlength=len(STATES))  # fmt: skip
    parts = sorted(((STATES[i], int(ns)) for i, ns in enumerate(per_state) if ns > 0),
                   key=lambda x: -x[1])  # fmt: skip
    names = a.trace.names
    return HostLate(
        after_sync=overlap_with(*after, lo, hi),
        host_wait=overlap_with(*waits, lo, hi),
        after_sync_ns=int((after[1] - after[0]).sum()),
        host_wait_ns=int((waits[1] - waits[0]).sum()),
        host_wait_parts=tuple(parts),
        host_wait_where=_where(
            names,
            pieces.label,
            pieces.after,
            length,
            late & ~drained & (pieces.state == STATES.index(parts[0][0]) if parts else False),
        ),
        after_sync_where=_where(names, pieces.label, pieces.after, length, host & drained),
    )


def _where(names: tuple[str, ...], label: I64, after: I64, length: I64,
           rows: np.ndarray) -> tuple[str, ...]:  # fmt: skip
    """The WHERE labels holding the most time among `rows` ("after op" for the stretch after
    an operator)."""
    keep = rows & (label >= 0)
    if not keep.any():
        return ()
    key = label[keep] * 2 + after[keep]
    keys, index = np.unique(key, return_inverse=True)
    ns = np.bincount(index, weights=length[keep])
    top = keys[np.argsort(-ns, kind="stable")[:WHERE]]
    return tuple(f"after {names[k // 2]}" if k % 2 else names[k // 2] for k in top.tolist())
