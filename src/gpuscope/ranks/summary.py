"""`RankSummary`: what the cross-rank analysis needs from one rank, small enough to ship between
processes (a few arrays per collective call and per step, no event tables).

It is built from the rank's own `Analysis` (`summarize`): the timeline's busy / idle / span, the
communication analysis' calls and exposure (`analysis.communication`: collective time not
overlapped by compute on the same device), and the ProfilerStep ranges. Times stay int64 ns on
the rank's own clock; aligning clocks across ranks is `ranks.align`'s job.

    >>> a = analyze(read_trace("rank0.json.gz"))                        # doctest: +SKIP
    >>> s = summarize(a, rank=0)                                        # doctest: +SKIP
    >>> s.calls.kind, s.exposed_ns                                      # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gpuscope.analysis import merge, overlap_with
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.communication import subtract
from gpuscope.analysis.stepranges import complete_steps, slot
from gpuscope.ranks.hostlate import HostLate, host_late
from gpuscope.trace.model import I64, KERNEL, Mask

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis
    from gpuscope.analysis.communication import Communication


@dataclass(frozen=True)
class Calls:
    """One row per communication kernel of the rank, in start order (`communication.calls`)."""

    kind: I64  # index into analysis.communication.KINDS
    start: I64
    end: I64
    bytes: I64  # -1: unknown
    group_size: I64  # -1: unknown
    group: I64  # index into RankSummary.groups, -1: unknown
    stream: I64
    step: I64  # index into RankSummary.steps, -1: outside every step
    exposed: I64  # the call's own time not overlapped by compute

    def __len__(self) -> int:
        return len(self.kind)

    @staticmethod
    def empty() -> Calls:
        z = np.zeros(0, np.int64)
        return Calls(z, z, z, z, z, z, z, z, z)


@dataclass(frozen=True)
class Steps:
    """The rank's ProfilerStep ranges (those holding events), with device time inside each."""

    names: tuple[str, ...]
    start: I64
    end: I64
    busy: I64  # device activity (union per device, summed over devices)
    compute: I64  # compute kernels (every kernel that is not communication)
    comm: I64  # communication kernels
    exposed: I64  # communication with no compute kernel running on its device
    after_sync: I64 | None = None  # idle from a blocking sync's return to the next launch
    host_wait: I64 | None = None  # idle until a launch made after the device went idle

    def __len__(self) -> int:
        return len(self.names)

    @property
    def wall(self) -> I64:
        result: I64 = self.end - self.start
        return result


@dataclass(frozen=True)
class OwnVerdict:
    """The rank's verdict from its own trace alone (`analysis.verdict`), and the idle time by
    the gap analysis' causes that it was decided from."""

    bound: str
    reason: str
    cause: str  # the idle cause that decided it, "" when busy time decided
    idle_causes: dict[str, int] = field(default_factory=dict)  # cause -> ns


@dataclass(frozen=True)
class RankSummary:
    """One rank of a job: identity, totals, steps and collective calls. Times in int64 ns;
    None where the source cannot support the number (no timestamps, no communication)."""

    path: str
    format: str
    vendor: str
    rank: int | None
    world_size: int | None
    host: str | None
    devices: tuple[str, ...]
    clock: str
    span_ns: int | None
    busy_ns: int | None
    idle_ns: int | None
    compute_ns: int | None
    comm_ns: int | None
    exposed_ns: int | None
    steps: Steps
    calls: Calls
    groups: tuple[str, ...] = ()  # process group names the calls refer to
    timed: bool = True  # the source has device timestamps
    verdict: OwnVerdict | None = None
    after_sync_ns: int | None = None  # hostlate: idle from a sync's return to the next launch
    host_wait_ns: int | None = None  # hostlate: idle until a launch made after it began
    host_wait_parts: tuple[tuple[str, int], ...] = ()  # hostlate: host_wait by host state
    host_wait_where: tuple[str, ...] = ()  # hostlate: what the host ran there, most first
    after_sync_where: tuple[str, ...] = ()


def summarize(
    a: Analysis,
    *,
    rank: int | None = None,
    host: str | None = None,
) -> RankSummary:
    """The rank summary of one analysed trace; `rank` (e.g. from a `rank<R>/` folder) is used
    when the trace does not say (Kineto's distributedInfo does)."""
    trace, line = a.trace, a.timeline
    comm = _communication(a)
    timed = line is not None
    compute = _compute_mask(a)
    exposure = comm.exposure if comm is not None else None
    names, lo, hi = complete_steps(trace)
    late = host_late(a, lo, hi) if timed else None
    return RankSummary(
        path=trace.meta.path,
        format=trace.meta.format,
        vendor=trace.meta.vendor,
        rank=trace.meta.rank if trace.meta.rank is not None else rank,
        world_size=trace.meta.world_size,
        host=host,
        devices=tuple(d.name for d in trace.meta.devices),
        clock=trace.meta.clock,
        span_ns=sum(d.span_ns for d in line.devices) if line else None,
        busy_ns=line.busy_ns if line else None,
        idle_ns=line.idle_ns if line else None,
        compute_ns=_union_per_device(a, compute) if timed else None,
        comm_ns=(exposure.comm_ns if exposure else 0) if timed else None,
        exposed_ns=(exposure.exposed_ns if exposure else 0) if timed else None,
        steps=_steps(a, compute, names, lo, hi, late) if late else _no_steps(),
        calls=_calls(a, comm) if comm is not None and timed else Calls.empty(),
        groups=tuple(_group_names(a, comm)) if comm is not None else (),
        timed=timed,
        verdict=_own_verdict(a),
        after_sync_ns=late.after_sync_ns if late else None,
        host_wait_ns=late.host_wait_ns if late else None,
        host_wait_parts=late.host_wait_parts if late else (),
        host_wait_where=late.host_wait_where if late else (),
        after_sync_where=late.after_sync_where if late else (),
    )


def _own_verdict(a: Analysis) -> OwnVerdict:
    v = a.verdict
    causes = dict(a.timeline.gaps.attribution_ns) if a.timeline is not None else {}
    return OwnVerdict(v.bound, v.reason, v.cause, causes)


def _communication(a: Analysis) -> Communication | None:
    extra = a.extras.get("communication")
    result: Communication | None = extra.result if extra is not None else None
    return result


def _compute_mask(a: Analysis) -> Mask:
    gpu = a.trace.gpu
    comm = a.classes.category == CATEGORIES.index("communication")
    mask: Mask = (gpu.kind == KERNEL) & ~comm & (gpu.start >= 0) & (gpu.dur >= 0)
    return mask


def _comm_mask(a: Analysis) -> Mask:
    gpu = a.trace.gpu
    comm = a.classes.category == CATEGORIES.index("communication")
    mask: Mask = comm & (gpu.start >= 0) & (gpu.dur >= 0)
    return mask


def _merged_per_device(a: Analysis, mask: Mask) -> list[tuple[I64, I64]]:
    gpu = a.trace.gpu
    devices = np.unique(gpu.device[mask])
    return [merge(gpu.start[mask & (gpu.device == d)], gpu.end[mask & (gpu.device == d)])
            for d in devices]  # fmt: skip


def _union_per_device(a: Analysis, mask: Mask) -> int:
    return sum(int((e - s).sum()) for s, e in _merged_per_device(a, mask))


def _no_steps() -> Steps:
    z = np.zeros(0, np.int64)
    return Steps((), z, z, z, z, z, z)


def _steps(a: Analysis, compute: Mask, names: list[str], lo: I64, hi: I64, late: HostLate) -> Steps:
    """Per ProfilerStep: device busy, compute, communication and exposed communication inside,
    and the idle time the host is to blame for (`ranks.hostlate`)."""
    gpu = a.trace.gpu
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    comm = _comm_mask(a)
    totals = np.zeros((4, len(lo)), np.int64)  # busy, compute, comm, exposed
    for device in np.unique(gpu.device[timed]):
        on = gpu.device == device
        parts = [merge(gpu.start[m & on], gpu.end[m & on]) for m in (timed, compute, comm)]
        parts.append(subtract(*parts[2], *parts[1]))
        for i, (start, end) in enumerate(parts):
            totals[i] += overlap_with(start, end, lo, hi)
    return Steps(tuple(names), lo, hi, totals[0], totals[1], totals[2], totals[3],
                 late.after_sync, late.host_wait)  # fmt: skip


def _calls(a: Analysis, comm: Communication) -> Calls:
    found = comm.calls
    exposed = (
        comm.exposure.per_kernel_ns if comm.exposure is not None else np.zeros(len(found), np.int64)
    )
    _, step_lo, step_hi = complete_steps(a.trace)
    return Calls(
        kind=found.kind.astype(np.int64),
        start=found.start,
        end=found.start + np.maximum(found.dur, 0),
        bytes=found.bytes,
        group_size=found.ranks,
        group=_group_index(a, comm),
        stream=found.stream.astype(np.int64),
        step=slot(np.where(found.anchor >= 0, found.anchor, found.start), step_lo, step_hi),
        exposed=exposed.astype(np.int64),
    )


def _group_names(a: Analysis, comm: Communication) -> list[str]:
    codes = np.unique(comm.calls.group[comm.calls.group >= 0])
    return [a.trace.names[int(c)] for c in codes]


def _group_index(a: Analysis, comm: Communication) -> I64:
    group = comm.calls.group
    codes = np.unique(group[group >= 0])
    index: I64 = np.where(group >= 0, np.searchsorted(codes, group), -1).astype(np.int64)
    return index
