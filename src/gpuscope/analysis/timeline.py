"""The device timeline: busy time (interval union per device), idle time, span, and the gaps
between GPU work with what they were waiting on.

Busy time counts kernels, memcpys and memsets; `gpu_user_annotation` spans lie over kernels and
are never counted. Overlapping work on one stream (seen on ROCm and with programmatic dependent
launch) is reported as clipped time.

Gaps are the times no device of the trace works, between its first and last activity; what each
was waiting on is the host state under it (`analysis.hoststate`, attached by `with_states`): a
gap's state is the one holding most of its time, and the attribution sums each state's exact
time over all gaps.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from gpuscope.analysis._intervals import merge
from gpuscope.analysis._unique import unique
from gpuscope.analysis.hoststate import STATES, Idle
from gpuscope.analysis.strip import Strip, busy_strip
from gpuscope.trace.model import I64, Trace

MICRO_GAP_NS = 10_000  # gaps under 10 µs: launch-overhead scale ("micro"); others "macro"
LONGEST = 5  # gaps marked on the busy / idle strip
GAP_BINS_US = (0, 1, 2, 5, 10, 20, 50, 100, 1000)


@dataclass(frozen=True)
class DeviceTimeline:
    device: int
    busy_ns: int
    span_ns: int
    first_ns: int
    last_ns: int

    @property
    def idle_ns(self) -> int:
        return self.span_ns - self.busy_ns


@dataclass(frozen=True)
class Gap:
    """One idle interval of a device: [start, end), why, and the GPU ops on either side."""

    start: int
    end: int
    device: int
    cause: str
    before: int  # row of trace.gpu that ended at `start` (-1 if unknown)
    after: int  # row of trace.gpu that started at `end`

    @property
    def ns(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Gaps:
    count: int
    total_ns: int
    micro_count: int
    micro_ns: int
    histogram: list[tuple[float, float | None, int, int]]  # (lo µs, hi µs, count, ns)
    attribution_ns: dict[str, int] = field(default_factory=dict)  # exact ns per host state
    attribution_count: dict[str, int] = field(default_factory=dict)  # gaps per dominant state
    largest: Gap | None = None
    causes: I64 | None = None  # per gap, its dominant state (index into hoststate.STATES)
    micro_attribution_ns: dict[str, int] = field(default_factory=dict)  # gaps < MICRO_GAP_NS
    longest: tuple[Gap, ...] = ()  # the LONGEST longest gaps, longest first


@dataclass(frozen=True)
class Timeline:
    devices: list[DeviceTimeline]
    gaps: Gaps
    overlap_clipped_ns: int
    overlap_count: int
    strip: Strip | None = None  # busy fraction per bin of the window, per device

    @property
    def busy_ns(self) -> int:
        return sum(d.busy_ns for d in self.devices)

    @property
    def span_ns(self) -> int:
        if not self.devices:
            return 0
        return max(d.last_ns for d in self.devices) - min(d.first_ns for d in self.devices)

    @property
    def idle_ns(self) -> int:
        return sum(d.idle_ns for d in self.devices)

    @property
    def device_span_ns(self) -> int:
        """The devices' spans summed: what time summed over devices (idle, gaps, copies) is a
        share of — `span_ns` (first start to last end of any device) is not, with several."""
        return sum(d.span_ns for d in self.devices)

    def span_of(self, device: int) -> int:
        return next((d.span_ns for d in self.devices if d.device == device), self.span_ns)


def timeline(trace: Trace) -> Timeline:
    """Busy and span per device, and the gaps when no device works (their causes are attached by
    `with_states`)."""
    gpu = trace.gpu
    devices: list[DeviceTimeline] = []
    busy: list[tuple[int, I64, I64]] = []
    for device in unique(gpu.device):
        rows = np.flatnonzero(gpu.device == device)
        merged_start, merged_end = merge(gpu.start[rows], gpu.end[rows])
        busy.append((int(device), merged_start, merged_end))
        devices.append(
            DeviceTimeline(
                device=int(device),
                busy_ns=int((merged_end - merged_start).sum()),
                span_ns=int(merged_end[-1] - merged_start[0]),
                first_ns=int(merged_start[0]),
                last_ns=int(merged_end[-1]),
            )
        )
    clipped, overlaps = _same_stream_overlap(trace)
    rows = np.flatnonzero((gpu.start >= 0) & (gpu.dur >= 0))
    busy_start, busy_end = merge(gpu.start[rows], gpu.end[rows])
    lo, hi = busy_end[:-1], busy_start[1:]
    nxt = _first_row_at(rows, gpu.start[rows], hi)
    prev = _last_row_at(rows, gpu.end[rows], lo)
    order = np.argsort(-(hi - lo), kind="stable")[:LONGEST]
    longest = tuple(
        Gap(int(lo[i]), int(hi[i]), int(gpu.device[nxt[i]]), "unknown", int(prev[i]), int(nxt[i]))
        for i in order.tolist()
    )
    gaps = replace(_gaps(lo, hi), largest=longest[0] if longest else None, longest=longest)
    return Timeline(devices, gaps, clipped, overlaps, busy_strip(busy))


def with_states(line: Timeline, idle: Idle) -> Timeline:
    """The timeline with each gap's cause: the host states under it (`idle` over the device's
    active span, so its idle intervals are the timeline's gaps)."""
    gaps = line.gaps
    pieces = idle.pieces
    ns = pieces.ns()
    inside = (pieces.start >= _first(line)) & (pieces.end <= _last(line))
    sums = np.bincount(pieces.state[inside], weights=ns[inside], minlength=len(STATES))
    per_gap = np.zeros((len(idle.start), len(STATES)))
    np.add.at(per_gap, (pieces.gap, pieces.state), ns)
    dominant = per_gap.argmax(axis=1) if len(idle.start) else np.zeros(0, np.int64)
    gap_ns = idle.end - idle.start
    kept = (idle.start >= _first(line)) & (idle.end <= _last(line))
    micro = kept & (gap_ns < MICRO_GAP_NS)
    micro_sums = np.bincount(
        pieces.state[inside & micro[pieces.gap]], weights=ns[inside & micro[pieces.gap]],
        minlength=len(STATES),
    )  # fmt: skip
    counts = np.bincount(dominant[kept], minlength=len(STATES))

    def caused(gap: Gap) -> Gap:
        at = np.flatnonzero(idle.start == gap.start)
        return replace(gap, cause=STATES[int(dominant[at[0]])]) if len(at) else gap

    longest = tuple(caused(g) for g in gaps.longest)
    largest = longest[0] if longest else None
    return replace(
        line,
        gaps=replace(
            gaps,
            attribution_ns={name: int(sums[i]) for i, name in enumerate(STATES)},
            attribution_count={name: int(counts[i]) for i, name in enumerate(STATES)},
            micro_attribution_ns={name: int(micro_sums[i]) for i, name in enumerate(STATES)},
            causes=dominant[kept],
            largest=largest,
            longest=longest,
        ),
    )


def _first(line: Timeline) -> int:
    return min(d.first_ns for d in line.devices) if line.devices else 0


def _last(line: Timeline) -> int:
    return max(d.last_ns for d in line.devices) if line.devices else 0


def _last_row_at(rows: I64, end: I64, times: I64) -> I64:
    """The GPU op (row of trace.gpu) that ends each merged interval."""
    order = np.argsort(end, kind="stable")
    pos = np.searchsorted(end[order], times, side="right") - 1
    result: I64 = rows[order[np.clip(pos, 0, len(rows) - 1)]]
    return result


def _first_row_at(rows: I64, start: I64, times: I64) -> I64:
    """The GPU op (row of trace.gpu) that starts each merged interval."""
    order = np.argsort(start, kind="stable")
    pos = np.searchsorted(start[order], times)
    result: I64 = rows[order[np.clip(pos, 0, len(rows) - 1)]]
    return result


def _same_stream_overlap(trace: Trace) -> tuple[int, int]:
    """Time by which ops on one (device, stream) overlap their predecessor, and how often."""
    gpu = trace.gpu
    if len(gpu) < 2:
        return 0, 0
    order = np.lexsort((gpu.start, gpu.stream, gpu.device))
    device, stream = gpu.device[order], gpu.stream[order]
    start, end = gpu.start[order], gpu.end[order]
    same = (device[1:] == device[:-1]) & (stream[1:] == stream[:-1])
    boundaries = np.flatnonzero(~same) + 1
    clipped = 0
    count = 0
    for lo, hi in zip(np.r_[0, boundaries], np.r_[boundaries, len(order)], strict=True):
        previous_end = np.maximum.accumulate(end[lo:hi])
        overlap = previous_end[:-1] - start[lo + 1 : hi]
        positive = overlap > 0
        own = (end[lo + 1 : hi] - start[lo + 1 : hi])[positive]
        count += int(positive.sum())
        clipped += int(np.minimum(overlap[positive], own).sum())
    return clipped, count


def _gaps(lo: I64, hi: I64) -> Gaps:
    length = hi - lo
    histogram = []
    for i, low in enumerate(GAP_BINS_US):
        high = GAP_BINS_US[i + 1] if i + 1 < len(GAP_BINS_US) else None
        inside = (length >= low * 1000) & (length < (high * 1000 if high is not None else 2**62))
        upper = float(high) if high is not None else None
        histogram.append((float(low), upper, int(inside.sum()), int(length[inside].sum())))
    micro = length < MICRO_GAP_NS
    return Gaps(
        count=len(length),
        total_ns=int(length.sum()),
        micro_count=int(micro.sum()),
        micro_ns=int(length[micro].sum()),
        histogram=histogram,
    )
