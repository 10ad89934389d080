"""Putting traces and sampler rows on one clock, and saying how sure that is.

Each profiler writes its own clock (`TraceMeta.clock`): torch.profiler (Kineto) the Unix epoch
(`baseTimeNanoseconds` + ts, or absolute epoch µs in older files), Nsight Systems ns since the
session start with the start's epoch time, the AMD tools (rocprof, rocprofv3, rocpd, rpd)
CLOCK_BOOTTIME. The samplers of `gpuscope run` write CLOCK_MONOTONIC and UTC on every row, and
mark the workload's start and end. A run's manifest holds the three system clocks read back to
back at its start (`clocks`). From these:

- realtime ↔ monotonic: the `workload_start` row of a sampler (both read together; the UTC cell
  is truncated to the µs) — or the manifest's clocks when there is no sampler; the uncertainty
  also counts how far the two clocks drifted apart by `workload_end` (NTP slewing);
- boottime ↔ monotonic: the manifest's clocks (they differ by the time the machine was
  suspended); a run without them has boottime taken as monotonic, uncertainty unknown.

The timeline is on the Unix epoch (realtime) whenever a trace or a sampler gives it, else on the
boot clock, else on the one trace's own clock. A trace whose clock relates to none of these (an
unknown clock, no timestamps at all) starts at the timeline's origin and is labelled not aligned.
Every event of a profiler lies between the workload marks; when an aligned trace does not (by
more than its uncertainty + 1 ms), the alignment is wrong and the run's samplers are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.export._samplers import SamplerFile
from gpuscope.trace.model import Trace

REALTIME, BOOTTIME = "realtime", "boottime"
EPOCH_2001_NS = 978_307_200 * 10**9  # timestamps above this are absolute Unix epoch ns
SLACK_NS = 1_000_000  # how far outside the workload marks an aligned event may lie
UTC_CELL_NS = 1_000  # the samplers' UTC column is truncated to the µs


@dataclass(frozen=True)
class Native:
    """A trace's clock as a system clock: domain time = trace time + offset_ns."""

    domain: str | None  # REALTIME, BOOTTIME, or None: the trace's own clock only
    offset_ns: int
    how: str


def native_clock(trace: Trace) -> Native:
    meta = trace.meta
    base = meta.base_time_ns
    if meta.clock == "kineto":
        if base:
            return Native(REALTIME, base, "Kineto: baseTimeNanoseconds + ts (Unix epoch)")
        first = first_time(trace)
        if first is not None and first > EPOCH_2001_NS:
            return Native(REALTIME, 0, "Kineto: absolute ts (Unix epoch)")
        return Native(None, 0, "Kineto ts without baseTimeNanoseconds: an unknown origin")
    if meta.clock == "session" and base:
        return Native(REALTIME, base, "Nsight Systems: session start (utcEpochNs) + ts")
    if meta.clock == "boot":
        return Native(BOOTTIME, 0, "CLOCK_BOOTTIME ns (ROCm's HSA / rocprofiler clock)")
    what = meta.clock or "not recorded"
    if not trace.provides("timestamps"):
        what = "no timestamps"
    return Native(None, 0, f"the trace's own clock ({what})")


@dataclass(frozen=True)
class Link:
    """`a - b` between two system clocks, with its uncertainty (None: unknown) and source."""

    offset_ns: int
    uncertainty_ns: int | None
    how: str


@dataclass(frozen=True)
class RunClocks:
    """What one run directory says about its clocks (monotonic is the samplers' clock)."""

    real_minus_mono: Link | None
    boot_minus_mono: Link
    workload_mono: tuple[int, int] | None  # the workload marks, CLOCK_MONOTONIC ns


def run_clocks(manifest: dict[str, Any] | None, samplers: list[SamplerFile]) -> RunClocks:
    clocks = (manifest or {}).get("clocks") or {}
    read_ns = int(clocks.get("read_ns", 0))
    return RunClocks(
        real_minus_mono=_real_minus_mono(clocks, read_ns, samplers),
        boot_minus_mono=_boot_minus_mono(clocks, read_ns),
        workload_mono=_workload(samplers),
    )


def _real_minus_mono(
    clocks: dict[str, Any], read_ns: int, samplers: list[SamplerFile]
) -> Link | None:
    for sampler in samplers:
        start, end = sampler.mark("workload_start"), sampler.mark("workload_end")
        if start is None:
            continue
        offset = start.realtime_ns - start.monotonic_ns
        drift = 0 if end is None else abs(end.realtime_ns - end.monotonic_ns - offset)
        how = f"{sampler.path.name}: UTC - monotonic of its workload_start row"
        return Link(offset, UTC_CELL_NS + drift, how)
    if "realtime_ns" in clocks and "monotonic_ns" in clocks:
        offset = int(clocks["realtime_ns"]) - int(clocks["monotonic_ns"])
        return Link(offset, read_ns, "manifest.json clocks (read at the run's start)")
    return None


def _boot_minus_mono(clocks: dict[str, Any], read_ns: int) -> Link:
    if "boottime_ns" in clocks and "monotonic_ns" in clocks:
        offset = int(clocks["boottime_ns"]) - int(clocks["monotonic_ns"])
        return Link(offset, read_ns, "manifest.json clocks (read at the run's start)")
    return Link(0, None, "assumed equal: the run did not record CLOCK_BOOTTIME - CLOCK_MONOTONIC "
                "(they differ by the time the machine was suspended)")  # fmt: skip


def _workload(samplers: list[SamplerFile]) -> tuple[int, int] | None:
    for sampler in samplers:
        start, end = sampler.mark("workload_start"), sampler.mark("workload_end")
        if start is not None and end is not None:
            return start.monotonic_ns, end.monotonic_ns
    return None


@dataclass(frozen=True)
class Placement:
    """Where a trace goes: timeline time = trace time + offset_ns."""

    offset_ns: int
    aligned: bool
    how: str
    uncertainty_ns: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "aligned": self.aligned,
            "how": self.how,
            "offset_ns": self.offset_ns,
            "uncertainty_ns": self.uncertainty_ns,
        }


def timeline_domain(natives: list[Native], with_samplers: bool) -> str | None:
    """Unix epoch when a trace or a sampler gives it, else the boot clock, else none."""
    domains = {n.domain for n in natives} - {None}
    if REALTIME in domains or with_samplers:
        return REALTIME
    return BOOTTIME if BOOTTIME in domains else None


def place(native: Native, domain: str | None, run: RunClocks | None) -> Placement | None:
    """The trace on the timeline's domain; None when it cannot be related to it."""
    if native.domain is None or domain is None:
        return None
    if native.domain == domain:
        return Placement(native.offset_ns, True, native.how, 0)
    if native.domain == BOOTTIME and domain == REALTIME and run is not None:
        real = run.real_minus_mono
        if real is None:
            return None
        boot = run.boot_minus_mono
        offset = native.offset_ns - boot.offset_ns + real.offset_ns
        how = f"{native.how} → monotonic ({boot.how}) → Unix epoch ({real.how})"
        return Placement(offset, True, how, _sum(boot.uncertainty_ns, real.uncertainty_ns))
    return None


def samplers_offset(domain: str | None, run: RunClocks) -> Link | None:
    """timeline time = sampler monotonic_ns + offset."""
    if domain == REALTIME:
        return run.real_minus_mono
    if domain == BOOTTIME:
        return run.boot_minus_mono
    return None


def outside_workload(
    span: tuple[int, int], placement: Placement, run: RunClocks, to_timeline: Link
) -> int:
    """How far (ns) a trace's span lies outside the run's workload marks (0: inside)."""
    if run.workload_mono is None:
        return 0
    start = run.workload_mono[0] + to_timeline.offset_ns
    end = run.workload_mono[1] + to_timeline.offset_ns
    lo, hi = span[0] + placement.offset_ns, span[1] + placement.offset_ns
    return max(0, start - lo, hi - end)


def allowed_slack(placement: Placement, to_timeline: Link) -> int:
    return SLACK_NS + (placement.uncertainty_ns or 0) + (to_timeline.uncertainty_ns or 0)


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def first_time(trace: Trace) -> int | None:
    span = time_span(trace)
    return None if span is None else span[0]


def time_span(trace: Trace) -> tuple[int, int] | None:
    """[first start, last end] of the trace's timed events, on its own clock."""
    los: list[int] = []
    his: list[int] = []
    for table in (trace.gpu, trace.host, trace.ops, trace.gpu_annotations, trace.syncs):
        timed = table.start >= 0
        if timed.any():
            los.append(int(table.start[timed].min()))
            his.append(int(np.maximum(table.end[timed], table.start[timed]).max()))
    return (min(los), max(his)) if los else None
