"""The critical path of a step: the chain of device and host intervals that sets its time, and
what removing each link could save, at most.

The breakdown (`analysis.breakdown`) says where a step's time went on the device's timeline. The
critical path says who set the pace at each moment:

- while the device idles, the host state under the idle time (`analysis.hoststate`) is on the
  path — the device waited for it (`queued`: a dependency on the device's side);
- while the device works, the device is on the path when the work was already waiting for it —
  the next work was queued before this work ended, or the launching thread was blocked in a sync
  waiting for it — and the host is when it was not: the device finished and then waited for the
  host, which was still busy with the state that follows (dispatching the next operator, its own
  work), so this device time was overlapped by host time and removing it would not shorten the
  step. In a launch-bound loop the path is the host's almost throughout; in a GPU-bound one,
  the device's.

`bounds` turns the breakdown into what-if bounds, step by step (see `breakdown.bounds`): removing
a host state saves at most its time; removing syncs or device work saves at most the step's time
less the larger of what the device and the host would still have to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import overlap_with
from gpuscope.analysis.breakdown import DEVICE_PARTS, PARTS, Breakdown, bounds
from gpuscope.analysis.hoststate import STATES, busy_intervals
from gpuscope.trace.model import I64, Trace

TOP_LINKS = 12  # links kept per step (the rest summed as one)
BLOCKED_SHARE = 0.5  # the launching thread blocked this share of a busy interval: device paces
ON = ("device", "host", "dependency", "unknown")


@dataclass(frozen=True)
class Link:
    """One kind of interval on a step's critical path, summed over its occurrences."""

    step: int  # index into the breakdown's steps (-1: the device's active span, no steps)
    on: str  # one of ON
    part: str  # one of PARTS: what ran (device) or the host state
    what: str  # the kernel (device), or the operator / annotation / frame (host); "" unknown
    count: int
    ns: int
    first_ns: int  # offset of its first occurrence from the step's start


@dataclass(frozen=True)
class CriticalPath:
    links: list[Link]
    on_ns: dict[str, int]  # judged steps: ns on the path by ON
    part_ns: dict[str, int]  # judged steps: ns on the path by part
    at_most_ns: dict[str, int]  # judged steps: removing the part saves at most this


def critical_path(trace: Trace, b: Breakdown) -> CriticalPath:
    start, end, on, part, what = _pieces(trace, b)
    steps = b.steps
    ranges = list(zip(steps.start.tolist(), steps.end.tolist(), strict=True))
    indices = list(range(len(steps)))
    if not ranges:
        ranges, indices = [b.window], [-1]
    links: list[Link] = []
    judged = set(indices[b.steady]) if b.judged_by_steps else {-1}
    on_ns = dict.fromkeys(ON, 0)
    part_ns = dict.fromkeys(PARTS, 0)
    for index, (lo, hi) in zip(indices, ranges, strict=True):
        found = _step_links(trace.names, index, lo, hi, start, end, on, part, what)
        links += found
        if index in judged:
            _add(on_ns, part_ns, start, end, on, part, lo, hi)
    return CriticalPath(links, on_ns, part_ns, bounds(b))


def _add(on_ns: dict[str, int], part_ns: dict[str, int], start: I64, end: I64, on: I64,
         part: I64, lo: int, hi: int) -> None:  # fmt: skip
    """Add the time of the pieces inside [lo, hi) to the totals by side and by part."""
    length = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None)
    for i, name in enumerate(ON):
        on_ns[name] += int(length[on == i].sum())
    for i, name in enumerate(PARTS):
        part_ns[name] += int(length[part == i].sum())


def _pieces(trace: Trace, b: Breakdown) -> tuple[I64, I64, I64, I64, I64]:
    """Every piece of the device's and the host's time, sorted: start, end, side (index into
    ON), part (index into PARTS) and what (a name index of trace.names times 2, plus 1 for "the
    operator before it"; -1: nothing named)."""
    idle, device = b.idle, b.device
    host_paced, next_state, next_label = _device_paced_by_host(trace, b)
    side = np.where(host_paced, ON.index("host"), ON.index("device"))
    part = np.where(host_paced, next_state + len(DEVICE_PARTS), device.part)
    kernel = np.where(device.row >= 0, trace.gpu.name[np.maximum(device.row, 0)], -1)
    what_device = np.where(host_paced, _what(next_label, 0), _what(kernel, 0))
    pieces = idle.pieces
    state = pieces.state
    idle_side = np.full(len(state), ON.index("host"))
    idle_side[state == STATES.index("queued")] = ON.index("dependency")
    idle_side[state == STATES.index("unknown")] = ON.index("unknown")
    start = np.concatenate([device.start, pieces.start])
    end = np.concatenate([device.end, pieces.end])
    sides = np.concatenate([side, idle_side])
    parts = np.concatenate([part, state + len(DEVICE_PARTS)])
    what = np.concatenate([what_device, _what(pieces.label, pieces.after)])
    order = np.argsort(start, kind="stable")
    return start[order], end[order], sides[order], parts[order], what[order]


def _what(label: I64, after: I64 | int) -> I64:
    result: I64 = np.where(label >= 0, label * 2 + after, -1)
    return result


def _what_text(names: tuple[str, ...], what: int) -> str:
    if what < 0:
        return ""
    label, after = divmod(what, 2)
    return f"after {names[label]}" if after else names[label]


def _device_paced_by_host(trace: Trace, b: Breakdown) -> tuple[Any, I64, I64]:
    """Per device piece: was its busy interval overlapped by host time (the next work reached
    the device only after it ended and the launching thread was not waiting for it)? With the
    host state and label of the idle time that follows."""
    device, idle = b.device, b.idle
    busy_start, busy_end = busy_intervals(trace)
    count = len(busy_start)
    first_state = np.full(count, -1, np.int64)
    first_label = np.full(count, -1, np.int64)
    pieces = idle.pieces
    if len(pieces.start) and count:
        gap_first = np.r_[True, pieces.gap[1:] != pieces.gap[:-1]]
        gap_start = idle.start[pieces.gap[gap_first]]
        interval = np.searchsorted(busy_end, gap_start)  # the busy interval the gap follows
        found = (interval < count) & (busy_end[np.minimum(interval, count - 1)] == gap_start)
        first_state[interval[found]] = pieces.state[gap_first][found]
        first_label[interval[found]] = pieces.label[gap_first][found]
    host_states = [STATES.index(s) for s in STATES if s not in ("queued", "unknown")]
    blocked = overlap_with(*idle.blocked, busy_start, busy_end)
    waiting = blocked >= BLOCKED_SHARE * (busy_end - busy_start)
    paced = np.isin(first_state, host_states) & ~waiting
    which = np.clip(np.searchsorted(busy_start, device.start, side="right") - 1, 0, None)
    if count == 0:
        empty = np.zeros(len(device.start), np.int64)
        return empty.astype(bool), empty, empty - 1
    return paced[which], np.maximum(first_state[which], 0), first_label[which]


def _step_links(names: tuple[str, ...], index: int, lo: int, hi: int, start: I64, end: I64,
                on: I64, part: I64, what: I64) -> list[Link]:  # fmt: skip
    first = int(np.searchsorted(end, lo, side="right"))
    last = int(np.searchsorted(start, hi, side="left"))
    s = np.maximum(start[first:last], lo)
    e = np.minimum(end[first:last], hi)
    keep = e > s
    if not keep.any():
        return []
    s, e = s[keep], e[keep]
    sides, parts, whats = on[first:last][keep], part[first:last][keep], what[first:last][keep]
    # one int64 key per (side, part, what): a 1-d unique, not a row-wise one
    width = int(whats.max()) + 2
    key = (sides * len(PARTS) + parts) * width + (whats + 1)
    codes, inverse = np.unique(key, return_inverse=True)
    unique_keys = np.stack([codes // width // len(PARTS), codes // width % len(PARTS),
                            codes % width - 1], 1)  # fmt: skip
    ns = np.bincount(inverse, weights=e - s).astype(np.int64)
    count = np.bincount(inverse)
    begin = np.full(len(unique_keys), np.iinfo(np.int64).max)
    np.minimum.at(begin, inverse, s - lo)
    ranked = np.argsort(-ns, kind="stable")
    links = [
        Link(index, ON[int(unique_keys[k, 0])], PARTS[int(unique_keys[k, 1])],
             _what_text(names, int(unique_keys[k, 2])), int(count[k]), int(ns[k]), int(begin[k]))
        for k in ranked[: TOP_LINKS - 1 if len(ranked) > TOP_LINKS else TOP_LINKS].tolist()
    ]  # fmt: skip
    links.sort(key=lambda link: link.first_ns)
    if len(ranked) > TOP_LINKS:  # the rest summed, last
        rest = ranked[TOP_LINKS - 1 :]
        links.append(Link(index, "", "", f"{len(rest)} other links", int(count[rest].sum()),
                          int(ns[rest].sum()), int(begin[rest].min())))  # fmt: skip
    return links


def rows(path: CriticalPath, step_names: list[str], max_steps: int = 100) -> list[dict[str, Any]]:
    """`critical_path`: a row per link of each step's path (the first `max_steps` steps)."""
    found = []
    for link in path.links:
        if link.step >= max_steps:
            continue
        found.append({
            "step": step_names[link.step] if link.step >= 0 else "active span",
            "on": link.on or "other",
            "part": link.part or "other",
            "what": link.what,
            "count": link.count,
            "time_us": round(link.ns / 1000, 3),
            "first_us": round(link.first_ns / 1000, 3),
        })  # fmt: skip
    return found
