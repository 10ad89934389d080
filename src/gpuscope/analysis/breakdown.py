"""The step-time breakdown: each step's time cut into what the device did and, while it was idle,
what the host did — every nanosecond counted once, so the parts of a step sum to its time.

While the device works (any GPU op on any device of the trace), the time is the device's, by what
ran, in this order when several run at once:

- `compute` — a kernel other than communication and copies;
- `exposed_comm` — a communication kernel with no compute kernel beside it (communication that
  compute hides is counted as compute: removing it would not shorten the step);
- `copies` — memcpy / memset operations (and copy kernels) with no kernel beside them.

While the device idles, the time is the host state under it (`analysis.hoststate`: launch,
host_work, sync, copy_staging, startup, host_late, queued, unknown).

Steps come from `analysis.stepranges` (ProfilerStep ranges, or optimizer steps; on the device's
clock when the host runs ahead). Without steps, the breakdown covers the device's active span
(its first to last activity). Leading warm-up steps (each ≥ 1.5× the median of the later ones)
are broken down like the others but left out of the totals that judge the trace (`judged`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with, paint
from gpuscope.analysis.categories import CATEGORIES, Classification
from gpuscope.analysis.hoststate import STATE_TEXT, STATES, Idle, state_text
from gpuscope.analysis.stepranges import StepRanges, warmup_count
from gpuscope.trace.model import I64, KERNEL, MEMCPY, MEMSET, Trace

DEVICE_PARTS = ("compute", "exposed_comm", "copies")
PARTS = (*DEVICE_PARTS, *STATES)
PART_TEXT = {
    "compute": "the device ran compute kernels",
    "exposed_comm": "the device ran communication kernels with no compute kernel beside them",
    "copies": "the device ran copies or memsets with no kernel beside them",
    **STATE_TEXT,
}
PART_LABELS = {
    "compute": "compute",
    "exposed_comm": "exposed communication",
    "copies": "copies",
    "launch": "launch / dispatch",
    "host_work": "host work outside operators",
    "sync": "sync wait",
    "copy_staging": "copy staging",
    "startup": "start-up",
    "host_late": "host late (no host timeline)",
    "queued": "queued (dependency)",
    "unknown": "unknown",
}


def part_text(part: str, kind: str = "unknown") -> str:
    """What a part means, in the terms of the program kind."""
    return PART_TEXT[part] if part in DEVICE_PARTS else state_text(part, kind)


_COPY_CATEGORIES = (CATEGORIES.index("memcpy"), CATEGORIES.index("memset"))
_COMM = CATEGORIES.index("communication")


@dataclass(frozen=True)
class DevicePieces:
    """The device's busy time cut by what ran: [start, end), the part (index into PARTS) and
    the GPU op running then (a row of trace.gpu, -1 when not found)."""

    start: I64
    end: I64
    part: I64
    row: I64


@dataclass(frozen=True)
class Breakdown:
    steps: StepRanges
    ns: I64  # [step, part]: ns of each part in each step
    warmup: int  # leading warm-up steps
    window: tuple[int, int]  # the device's active span: first to last activity
    window_ns: I64  # [part] over the window
    active_ns: I64  # per step: the main thread's time not blocked in a sync
    window_active_ns: int
    drained_ns: I64  # per step: idle time in intervals that began with the host in a sync
    window_drained_ns: int
    device: DevicePieces
    idle: Idle

    @property
    def steady(self) -> slice:
        return slice(self.warmup, len(self.steps))

    @property
    def judged_by_steps(self) -> bool:
        return len(self.steps) - self.warmup > 0

    def judged(self) -> I64:
        """ns per part over the steady steps, else over the window."""
        if self.judged_by_steps:
            result: I64 = self.ns[self.steady].sum(axis=0)
            return result
        return self.window_ns

    def judged_wall(self) -> int:
        return int(self.judged().sum())

    def judged_active(self) -> int:
        if self.judged_by_steps:
            return int(self.active_ns[self.steady].sum())
        return self.window_active_ns

    def part(self, name: str) -> int:
        return int(self.judged()[PARTS.index(name)])

    def share(self, name: str) -> float:
        wall = self.judged_wall()
        return self.part(name) / wall if wall else 0.0

    def busy(self) -> int:
        judged = self.judged()
        return int(sum(judged[PARTS.index(p)] for p in DEVICE_PARTS))


def hoststate_window(trace: Trace, steps: StepRanges) -> tuple[int, int] | None:
    """The span the host states must cover: the device's active span and every step (on the
    device's clock and as the host's ranges)."""
    gpu = trace.gpu
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    lo = [int(gpu.start[timed].min())] if timed.any() else []
    hi = [int(gpu.end[timed].max())] if timed.any() else []
    if len(steps):
        lo += [int(steps.start.min()), int(steps.host_start.min())]
        hi += [int(steps.end.max()), int(steps.host_end.max())]
    return (min(lo), max(hi)) if lo else None


def breakdown(
    trace: Trace,
    classes: Classification,
    steps: StepRanges,
    idle: Idle,
    host_steps: StepRanges | None = None,
) -> Breakdown:
    """Each step (and the device's active span) cut into PARTS. `host_steps`: the host ranges
    of device-timed `steps` (the host's own time per step is taken over them)."""
    device = device_pieces(trace, classes)
    starts = np.concatenate([device.start, idle.pieces.start])
    ends = np.concatenate([device.end, idle.pieces.end])
    parts = np.concatenate([device.part, idle.pieces.state + len(DEVICE_PARTS)])
    window = (int(device.start[0]), int(device.end[-1])) if len(device.start) else (0, 0)
    blocked = idle.blocked
    per_step = _per_part(starts, ends, parts, steps.start, steps.end)
    lo, hi = np.array([window[0]]), np.array([window[1]])
    window_ns = _per_part(starts, ends, parts, lo, hi)[0]
    pieces = idle.pieces
    drained = idle.drained[pieces.gap] & (pieces.state != STATES.index("startup"))
    drained_start, drained_end = merge(pieces.start[drained], pieces.end[drained])
    return Breakdown(
        steps=steps,
        ns=per_step,
        warmup=warmup_count([int(w) for w in steps.wall]),
        window=window,
        window_ns=window_ns,
        active_ns=_active(steps if host_steps is None else host_steps, blocked),
        window_active_ns=int(window[1] - window[0] - overlap_with(*blocked, lo, hi)[0]),
        drained_ns=overlap_with(drained_start, drained_end, steps.start, steps.end),
        window_drained_ns=int(overlap_with(drained_start, drained_end, lo, hi)[0]),
        device=device,
        idle=idle,
    )


def _active(steps: StepRanges, blocked: tuple[I64, I64]) -> I64:
    """Per step: the main thread's time in it not blocked in a sync (its own work)."""
    result: I64 = steps.wall - overlap_with(*blocked, steps.start, steps.end)
    return result


def _per_part(start: I64, end: I64, part: I64, lo: I64, hi: I64) -> I64:
    """ns of each part inside each [lo, hi): the pieces of one part are disjoint."""
    result = np.zeros((len(lo), len(PARTS)), np.int64)
    for index in range(len(PARTS)):
        mine = part == index
        if not mine.any():
            continue
        order = np.argsort(start[mine], kind="stable")
        result[:, index] = overlap_with(start[mine][order], end[mine][order], lo, hi)
    return result


def device_pieces(trace: Trace, classes: Classification) -> DevicePieces:
    """The device's busy time cut by what ran (compute over communication over copies)."""
    gpu = trace.gpu
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    category = classes.category if len(classes.category) == len(gpu) else np.full(len(gpu), -1)
    copies = timed & (
        (gpu.kind == MEMCPY) | (gpu.kind == MEMSET) | np.isin(category, _COPY_CATEGORIES)
    )
    comm = timed & (gpu.kind == KERNEL) & (category == _COMM)
    compute = timed & (gpu.kind == KERNEL) & ~comm & ~copies
    layers = [merge(gpu.start[m], gpu.end[m]) for m in (copies, comm, compute)]
    s, e, code = paint(layers)
    busy = code > 0
    s, e, code = s[busy], e[busy], code[busy]
    part = np.array([-1, PARTS.index("copies"), PARTS.index("exposed_comm"),
                     PARTS.index("compute")])[code]  # fmt: skip
    row = np.full(len(s), -1, np.int64)
    for level, mask in enumerate((copies, comm, compute), start=1):
        here = code == level
        row[here] = _running(gpu.start, gpu.end, np.flatnonzero(mask), s[here])
    return DevicePieces(s, e, part, row)


def _running(start: I64, end: I64, rows: I64, at: I64) -> I64:
    """The op among `rows` that started last at or before each time and still runs then."""
    if len(rows) == 0 or len(at) == 0:
        return np.full(len(at), -1, np.int64)
    order = rows[np.argsort(start[rows], kind="stable")]
    pos = np.searchsorted(start[order], at, side="right") - 1
    found = order[np.maximum(pos, 0)]
    result: I64 = np.where((pos >= 0) & (end[found] > at), found, -1)
    return result


def bounds(b: Breakdown) -> dict[str, int]:
    """How much removing each part could shorten the judged steps, at most (ns), step by step:

    - a host state under idle time (launch, host_work, copy_staging, startup, host_late) or a
      dependency (`queued`): its own time — the device waited for exactly that long;
    - `sync`: removing the syncs lets the host run ahead — its relaunch and its own work after a
      sync then overlap the device's work — so it saves at most the idle time of the intervals
      the syncs began (they drained the queue), and each step still takes as long as the busier
      of the device (its busy time) and the host (its time not blocked in a sync): at most the
      step's time less the larger of the two;
    - a device part (compute, exposed_comm, copies): the step still takes the device's other
      busy time and the host's own time: at most the step's time less the larger of the two,
      and never more than the part's time.
    """
    ns = b.ns[b.steady] if b.judged_by_steps else b.window_ns[None, :]
    active = b.active_ns[b.steady] if b.judged_by_steps else np.array([b.window_active_ns])
    drained = b.drained_ns[b.steady] if b.judged_by_steps else np.array([b.window_drained_ns])
    wall = ns.sum(axis=1)
    busy = sum(ns[:, PARTS.index(p)] for p in DEVICE_PARTS)
    found: dict[str, int] = {}
    for index, name in enumerate(PARTS):
        part = ns[:, index]
        if name in DEVICE_PARTS:
            floor: Any = np.maximum(busy - part, active)
            found[name] = int(np.clip(np.minimum(part, wall - floor), 0, None).sum())
        elif name == "sync":
            floor = np.maximum(busy, active)
            found[name] = int(np.clip(np.minimum(drained, wall - floor), 0, None).sum())
        elif name != "unknown":
            found[name] = int(part.sum())
    return found


# -- the report --------------------------------------------------------------------------------

MAX_STEPS = 100  # steps kept in the report


def _us(ns: float) -> float:
    return round(float(ns) / 1000.0, 3)


def rows(b: Breakdown) -> list[dict[str, Any]]:
    """`step_breakdown`: a row per step (the device's active span when there are none), its
    wall time and one `<part>_us` column per part, summing to it."""
    names = b.steps.names[:MAX_STEPS] or ["active span"]
    starts = b.steps.start[:MAX_STEPS] if len(b.steps) else np.array([b.window[0]])
    values = b.ns[:MAX_STEPS] if len(b.steps) else b.window_ns[None, :]
    origin = b.window[0]
    found = []
    for i, (name, start, ns) in enumerate(zip(names, starts.tolist(), values, strict=True)):
        row: dict[str, Any] = {"step": name, "start_us": _us(start - origin),
                               "wall_us": _us(int(ns.sum()))}  # fmt: skip
        row.update({f"{part}_us": _us(int(v)) for part, v in zip(PARTS, ns.tolist(), strict=True)})
        row["warmup"] = bool(len(b.steps)) and i < b.warmup
        found.append(row)
    return found


def summary(b: Breakdown, at_most: dict[str, int]) -> dict[str, Any]:
    """`breakdown`: what the parts mean, over what the trace is judged, the judged totals and
    what removing each part could save at most."""
    judged = b.judged()
    wall = int(judged.sum())
    return {
        "parts": list(PARTS),
        "labels": PART_LABELS,
        "meaning": PART_TEXT,
        "steps_from": b.steps.source or None,
        "host_data": b.idle.host_data,
        "steps": len(b.steps),
        "warmup_steps": b.warmup,
        "judged": "steps" if b.judged_by_steps else "active span",
        "judged_steps": len(b.steps) - b.warmup if b.judged_by_steps else 0,
        "wall_us": _us(wall),
        "time_us": {part: _us(int(v)) for part, v in zip(PARTS, judged.tolist(), strict=True)},
        "share": {
            part: round(int(v) / wall, 6) if wall else 0.0
            for part, v in zip(PARTS, judged.tolist(), strict=True)
        },
        "at_most_us": {part: _us(v) for part, v in at_most.items()},
    }
