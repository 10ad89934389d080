"""Exposed communication: the time communication kernels run while no compute kernel runs on the
same device.

"Compute" is every kernel that is not communication. Memcpys and memsets are left out of it on
purpose: they are data movement on the copy engines, and much of it belongs to the communication
itself (DDP copying gradients into its buckets, FSDP's copy-in / copy-out, staging buffers), so
counting them as compute would hide communication behind work that is just as much on the
critical path. The time communication overlapped only such copies is reported beside it
(`exposed_vs_all_ns`: communication with nothing else at all on the device).

Communication on several streams of one device is merged first, so concurrent collectives
(FSDP's all-gather and reduce-scatter streams) are not counted twice in the device total; the
per-stream figures are each stream's own and may add up to more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis.communication.groups import distinct
from gpuscope.trace.model import I64, KERNEL, Mask, Trace


@dataclass(frozen=True)
class StreamExposure:
    device: int
    stream: int
    kernels: int
    comm_ns: int  # union of this stream's communication kernels
    exposed_ns: int  # of which no compute kernel of the device ran


@dataclass(frozen=True)
class StepExposure:
    name: str
    start: int
    dur_ns: int
    comm_ns: int  # communication inside the step's range
    exposed_ns: int


@dataclass(frozen=True)
class Exposure:
    comm_ns: int  # union of communication kernels per device, summed over devices
    exposed_ns: int  # of which no compute kernel ran
    exposed_vs_all_ns: int  # of which no other GPU op (kernel, copy, memset) ran
    span_ns: int  # the devices' active spans (first to last GPU op), summed
    devices: int  # devices with communication
    streams: list[StreamExposure]
    steps: list[StepExposure]
    per_kernel_ns: I64  # per communication kernel: its own time not overlapped by compute

    @property
    def overlapped_ns(self) -> int:
        return self.comm_ns - self.exposed_ns

    @property
    def step_ns(self) -> int:
        return sum(s.dur_ns for s in self.steps)

    @property
    def step_exposed_ns(self) -> int:
        return sum(s.exposed_ns for s in self.steps)


def subtract(a_start: I64, a_end: I64, b_start: I64, b_end: I64) -> tuple[I64, I64]:
    """The parts of the union of [a_start, a_end) not covered by the union of [b_start, b_end)."""
    a_start, a_end = merge(a_start, a_end)
    b_start, b_end = merge(b_start, b_end)
    if len(a_start) == 0 or len(b_start) == 0:
        return a_start, a_end
    points = distinct(np.concatenate([a_start, a_end, b_start, b_end]))
    lo, hi = points[:-1], points[1:]
    keep = _inside(a_start, a_end, lo) & ~_inside(b_start, b_end, lo)
    return merge(lo[keep], hi[keep])


def _inside(start: I64, end: I64, at: I64) -> Mask:
    """Whether each point lies in one of the disjoint sorted intervals [start, end)."""
    i = np.searchsorted(start, at, side="right") - 1
    inside: Mask = (i >= 0) & (at < end[np.maximum(i, 0)])
    return inside


def exposure(
    trace: Trace, comm: Mask, rows: I64, steps: tuple[I64, I64, tuple[str, ...]]
) -> Exposure:
    """`comm`: per row of trace.gpu, a communication kernel; `rows`: those rows in time order."""
    gpu = trace.gpu
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    compute = timed & ~comm & (gpu.kind == KERNEL)
    other = timed & ~comm
    per_kernel = np.zeros(len(rows), np.int64)
    totals = np.zeros(4, np.int64)  # comm, exposed, exposed vs all, span
    streams: list[StreamExposure] = []
    exposed_parts: list[tuple[I64, I64]] = []
    comm_parts: list[tuple[I64, I64]] = []
    for device in distinct(gpu.device[rows].astype(np.int64)):
        on = gpu.device == device
        c_start, c_end = merge(gpu.start[comm & on & timed], gpu.end[comm & on & timed])
        p_start, p_end = merge(gpu.start[compute & on], gpu.end[compute & on])
        o_start, o_end = merge(gpu.start[other & on], gpu.end[other & on])
        e_start, e_end = subtract(c_start, c_end, p_start, p_end)
        comm_parts.append((c_start, c_end))
        exposed_parts.append((e_start, e_end))
        covered_by_any = int(overlap_with(o_start, o_end, c_start, c_end).sum())
        all_start = gpu.start[on & timed]
        span = int(gpu.end[on & timed].max() - all_start.min()) if len(all_start) else 0
        comm_ns = int((c_end - c_start).sum())
        totals += (comm_ns, int((e_end - e_start).sum()), comm_ns - covered_by_any, span)
        mine = gpu.device[rows] == device
        per_kernel[mine] = _own_exposed(gpu.start[rows[mine]], gpu.end[rows[mine]], p_start, p_end)
        streams += _streams(trace, rows[mine], int(device), p_start, p_end)
    return Exposure(
        comm_ns=int(totals[0]),
        exposed_ns=int(totals[1]),
        exposed_vs_all_ns=int(totals[2]),
        span_ns=int(totals[3]),
        devices=len(comm_parts),
        streams=streams,
        steps=_steps(steps, comm_parts, exposed_parts),
        per_kernel_ns=per_kernel,
    )


def _own_exposed(start: I64, end: I64, p_start: I64, p_end: I64) -> I64:
    timed = (start >= 0) & (end >= start)
    covered = overlap_with(p_start, p_end, np.where(timed, start, 0), np.where(timed, end, 0))
    own: I64 = np.where(timed, end - start - covered, 0)
    return own


def _streams(
    trace: Trace, rows: I64, device: int, p_start: I64, p_end: I64
) -> list[StreamExposure]:
    gpu = trace.gpu
    result = []
    for stream in distinct(gpu.stream[rows]):
        mine = rows[gpu.stream[rows] == stream]
        mine = mine[(gpu.start[mine] >= 0) & (gpu.dur[mine] >= 0)]
        s_start, s_end = merge(gpu.start[mine], gpu.end[mine])
        comm_ns = int((s_end - s_start).sum())
        covered = int(overlap_with(p_start, p_end, s_start, s_end).sum())
        result.append(StreamExposure(device, int(stream), len(mine), comm_ns, comm_ns - covered))
    return result


def _steps(
    steps: tuple[I64, I64, tuple[str, ...]],
    comm_parts: list[tuple[I64, I64]],
    exposed_parts: list[tuple[I64, I64]],
) -> list[StepExposure]:
    lo, hi, names = steps
    comm = np.zeros(len(lo), np.int64)
    exposed = np.zeros(len(lo), np.int64)
    for (c_start, c_end), (e_start, e_end) in zip(comm_parts, exposed_parts, strict=True):
        comm += overlap_with(c_start, c_end, lo, hi)
        exposed += overlap_with(e_start, e_end, lo, hi)
    return [
        StepExposure(names[i], int(lo[i]), int(hi[i] - lo[i]), int(comm[i]), int(exposed[i]))
        for i in range(len(lo))
    ]
