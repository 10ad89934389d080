"""The `Trace`: one process's device and host activity, columnar, times in int64 nanoseconds.

Every profiler's output fills the same tables (Kineto, rocprof v1, rocprofv3, rocpd, rpd, nsys,
ncu): a reader builds a `Trace`, analyses read it and never mutate it. Every table is a set of
equal-length numpy columns; names are interned into `Trace.names` and referenced by index.
Integer columns use -1 for "absent" (no correlation id, no stream, unknown size, ...).

What a source could record is declared in `TraceMeta.provides` (see `PROVIDES`): an analysis whose
inputs the source lacks is skipped with an integrity flag, never reported as zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

# GpuOps.kind values (also Totals.kind, with API for host calls)
KERNEL, MEMCPY, MEMSET, API = 0, 1, 2, 3
# GpuOps.copy: the direction of a memcpy (index into COPY_KINDS); -1 for kernels and memsets
COPY_KINDS = ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "other")
HTOD, DTOH, DTOD, HTOH, PTOP, OTHER_COPY = range(len(COPY_KINDS))
# GpuOps.host_memory: the host side of a copy
UNKNOWN_MEMORY, PAGEABLE, PINNED = -1, 0, 1
# HostCalls.domain values
RUNTIME, DRIVER, HSA, LIBRARY = 0, 1, 2, 3
DOMAINS = ("runtime", "driver", "hsa", "library")
# CpuOps.kind values: framework operators, user ranges (record_function, NVTX, ROCTX), Python
OP, ANNOTATION, PYTHON = 0, 1, 2

# What a source can hold. A reader puts in `TraceMeta.provides` the keys its format (and this
# file's variant of it) records; `analysis.requirements` says which analysis needs which.
PROVIDES = {
    "kernels": "one row per kernel dispatch, with its duration",
    "timestamps": "start times of device work on one clock (busy, idle, gaps, overlap)",
    "copies": "memory copies and memsets on the device timeline",
    "copy_bytes": "the size of each copy",
    "host_api": "runtime / driver API calls with their times (launches, syncs, copies)",
    "links": "which host call launched which device op (correlation ids)",
    "cpu_ops": "framework operators (aten::mm, ...) linked to the kernels they launch",
    "markers": "user ranges (record_function, NVTX, ROCTX) with their times",
    "launch_params": "grid, work-group, shared memory / LDS and registers of each dispatch",
    "devices": "the GPUs: name, architecture, compute units",
    "counters": "hardware counters or metrics per dispatch",
    "totals": "per-name totals only (calls and time), no individual events",
    "memory": "the allocator's allocations and frees with its running totals",
}


class _Table:
    """Shared helpers of the columnar tables (all columns have the same length)."""

    def __len__(self) -> int:
        first = fields(self)[0]  # type: ignore[arg-type]
        return len(getattr(self, first.name))

    @classmethod
    def empty(cls) -> Any:
        return cls(**{f.name: np.zeros(0, _DTYPES[f.name]) for f in fields(cls)})  # type: ignore[arg-type]

    @classmethod
    def from_columns(cls, columns: dict[str, Any], size: int | None = None) -> Any:
        """A table from the given columns (any sequences); absent columns are filled with -1."""
        size = size if size is not None else len(next(iter(columns.values())))
        made: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            dtype = _DTYPES[f.name]
            value = columns.get(f.name)
            made[f.name] = np.full(size, -1, dtype) if value is None else np.asarray(value, dtype)
        return cls(**made)

    def take(self, index: Any) -> Any:
        """A new table of the rows selected by `index` (a boolean mask or integer positions)."""
        return type(self)(**{f.name: getattr(self, f.name)[index] for f in fields(self)})  # type: ignore[arg-type]

    @property
    def end(self) -> I64:
        start: I64 = getattr(self, "start")  # noqa: B009 - every timed table has start/dur
        dur: I64 = getattr(self, "dur")  # noqa: B009
        return start + dur


@dataclass(frozen=True)
class GpuOps(_Table):
    """Kernels, memcpys and memsets on the device timeline.

    `stream` is the CUDA/HIP stream, or the HSA queue where a format has no stream. `copy` is the
    direction of a memcpy (COPY_KINDS index), `host_memory` whether its host side is pinned.
    `enqueued` is when the host put the op in the device's queue where the format records it
    apart from a launch call (rocprof v1 `DispatchNs`), -1 elsewhere (the launch call says it).
    """

    kind: I8
    name: I32
    start: I64
    dur: I64
    device: I32
    stream: I64
    correlation: I64
    external_id: I64
    bytes: I64
    copy: I8
    host_memory: I8
    enqueued: I64


@dataclass(frozen=True)
class HostCalls(_Table):
    """Runtime / driver / HSA / library API calls (cudaLaunchKernel, hipMemcpyAsync, ...)."""

    name: I32
    start: I64
    dur: I64
    tid: I64
    correlation: I64
    external_id: I64
    domain: I8


@dataclass(frozen=True)
class CpuOps(_Table):
    """CPU operators (`aten::mm`), user ranges (`record_function`, ProfilerStep#N, NVTX, ROCTX
    push/pop and start/stop ranges; marks have dur 0) and Python functions.

    `input_dims`, `input_types` and `concrete` are the operator's recorded inputs as the JSON
    text the tracer wrote (interned into `Trace.names`, -1 when not recorded): torch.profiler's
    "Input Dims", "Input type" and "Concrete Inputs". `sequence` is the autograd sequence number
    that ties a backward op to its forward op.
    """

    kind: I8
    name: I32
    start: I64
    dur: I64
    tid: I64
    external_id: I64
    input_dims: I32
    input_types: I32
    concrete: I32
    sequence: I64


@dataclass(frozen=True)
class Collectives(_Table):
    """Collective calls as the framework recorded them (torch's `record_param_comms`): which
    collective, how many elements in and out, the element size, the process group."""

    op: I64  # row of Trace.ops
    name: I32  # allreduce, allgather, send, ...
    in_elems: I64
    out_elems: I64
    elem_bytes: I32
    group_size: I32
    group: I32  # process group name (interned), -1 when not recorded


@dataclass(frozen=True)
class Syncs(_Table):
    """Synchronization events recorded by the tracer (Kineto `cuda_sync`, CUPTI SYNCHRONIZATION):
    Stream / Event / Context sync with the stream or device waited on."""

    name: I32
    start: I64
    dur: I64
    device: I32
    stream: I64


@dataclass(frozen=True)
class GpuAnnotations(_Table):
    """`gpu_user_annotation` spans: they lie over kernels and are never busy time."""

    name: I32
    start: I64
    dur: I64
    device: I32


@dataclass(frozen=True)
class Flows(_Table):
    """Launch→kernel flow endpoints (`ac2g`, legacy `async_gpu`): phase 0 = start, 1 = finish."""

    id: I64
    phase: I8
    start: I64
    pid: I64
    tid: I64

    @property
    def dur(self) -> I64:
        return np.zeros(len(self.start), np.int64)


@dataclass(frozen=True)
class LaunchParams(_Table):
    """Per-dispatch launch parameters, for the rows of `Trace.gpu` a format describes.

    The grid is in work-groups (CUDA blocks) per dimension and the block in work-items (threads):
    AMD formats that give the grid in work-items are divided by the work-group size. -1: unknown.
    """

    row: I64  # row of Trace.gpu
    grid_x: I64
    grid_y: I64
    grid_z: I64
    block_x: I32
    block_y: I32
    block_z: I32
    shared_mem: I64  # bytes per work-group: LDS (AMD), static + dynamic shared memory (NVIDIA)
    scratch: I64  # private / local memory bytes per work-item
    registers: I32  # vector registers per work-item: arch VGPRs (AMD), registers per thread
    accum_registers: I32  # AMD accumulation VGPRs (AGPRs)
    scalar_registers: I32  # AMD SGPRs


@dataclass(frozen=True)
class Counters(_Table):
    """Hardware counters / metrics, long format: one row per (dispatch, counter).

    Values are in base units (ncu's "auto" units are converted); `TraceMeta.counter_units` names
    the unit of each counter where the source gives one.
    """

    row: I64  # row of Trace.gpu, -1 when the dispatch is not in the trace
    name: I32
    value: F64


@dataclass(frozen=True)
class MemoryEvents(_Table):
    """The caching allocator's events (torch.profiler `profile_memory=True`: Kineto's `[memory]`
    instant events), in file order: one row per allocation (`bytes` > 0) or free (`bytes` < 0)
    of the block at `addr`, with the allocator's totals on that device after it (-1 when not
    recorded). `device` is -1 for host memory."""

    start: I64  # when, ns
    tid: I64
    device: I32
    addr: I64
    bytes: I64  # signed: + allocated, - freed (0 when not recorded)
    allocated: I64  # total allocated on the device after the event
    reserved: I64  # total reserved (cached) by the allocator on the device after the event


@dataclass(frozen=True)
class Totals(_Table):
    """Per-name totals from summary files (rocprof `*.stats.csv`): no individual events."""

    kind: I8  # KERNEL, MEMCPY, MEMSET or API
    name: I32
    count: I64
    total_ns: I64
    min_ns: I64  # -1 when the source does not say
    max_ns: I64


_DTYPES: dict[str, type] = {
    "kind": np.int8,
    "phase": np.int8,
    "domain": np.int8,
    "copy": np.int8,
    "host_memory": np.int8,
    "name": np.int32,
    "device": np.int32,
    "value": np.float64,
    "input_dims": np.int32,
    "input_types": np.int32,
    "concrete": np.int32,
    "elem_bytes": np.int32,
    "group_size": np.int32,
    "group": np.int32,
}
for _name in ("block_x", "block_y", "block_z", "registers", "accum_registers", "scalar_registers"):
    _DTYPES[_name] = np.int32
for _name in (
    *(
        "start",
        "dur",
        "enqueued",
        "stream",
        "correlation",
        "external_id",
        "bytes",
        "tid",
        "id",
        "pid",
    ),
    *("row", "grid_x", "grid_y", "grid_z", "shared_mem", "scratch"),
    *("count", "total_ns", "min_ns", "max_ns", "sequence", "op", "in_elems", "out_elems"),
    *("addr", "allocated", "reserved"),
):
    _DTYPES[_name] = np.int64


@dataclass(frozen=True)
class Device:
    """A GPU (an agent, in ROCm terms). `id` is the value the device columns of the trace use."""

    id: int
    name: str
    properties: dict[str, Any] = field(default_factory=dict)
    arch: str = ""  # gfx942, gfx1201, sm_90 ...
    compute_units: int = 0  # CUs (AMD) or SMs (NVIDIA); 0 when unknown


def device_of(devices: tuple[Device, ...], device_id: int) -> Device | None:
    """The trace's device with this id (the only one when the trace names just one)."""
    for device in devices:
        if device.id == device_id:
            return device
    return devices[0] if len(devices) == 1 else None


@dataclass(frozen=True)
class TraceMeta:
    """Where a trace came from and what it is; `warnings` say what the reader had to repair.

    `clock` says what the timestamps count from (e.g. "boot" for ROCm's CLOCK_BOOTTIME ns,
    "session" for nsys, "kineto" for torch.profiler's µs clock); durations are always ns.
    """

    path: str
    format: str
    schema: str  # the format's version / variant ("current", "legacy", "rocm7", "2.9.1", ...)
    vendor: str  # "nvidia", "amd" or "unknown"
    devices: tuple[Device, ...]
    base_time_ns: int | None
    profiler_span: tuple[int, int] | None  # the profiler's own [start, end) span, ns
    rank: int | None
    world_size: int | None
    event_counts: dict[str, int]
    truncated: bool
    warnings: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    provides: frozenset[str] = frozenset()
    clock: str = ""
    files: tuple[str, ...] = ()  # every file read into this trace (a directory: several)
    counter_units: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Trace:
    """One rank/process of activity. Times are int64 ns on the trace's own clock."""

    meta: TraceMeta
    names: tuple[str, ...]
    gpu: GpuOps
    host: HostCalls
    ops: CpuOps
    syncs: Syncs
    gpu_annotations: GpuAnnotations
    flows: Flows
    launch_params: LaunchParams = field(default_factory=LaunchParams.empty)
    counters: Counters = field(default_factory=Counters.empty)
    totals: Totals = field(default_factory=Totals.empty)
    collectives: Collectives = field(default_factory=Collectives.empty)
    memory: MemoryEvents = field(default_factory=MemoryEvents.empty)

    def provides(self, *keys: str) -> bool:
        """True when the source records every one of `keys` (see PROVIDES)."""
        return all(key in self.meta.provides for key in keys)
