"""The `Trace`: one process's device and host activity, columnar, times in int64 nanoseconds.

Built by a reader (see `gpuscope.trace.registry`), never mutated by an analysis. Every table is a
set of equal-length numpy columns; names are interned into `Trace.names` and referenced by index.
Integer columns use -1 for "absent" (no correlation id, no stream, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]

# GpuOps.kind values
KERNEL, MEMCPY, MEMSET = 0, 1, 2
# CpuOps.kind values
OP, ANNOTATION = 0, 1


class _Table:
    """Shared helpers of the columnar tables (all columns have the same length)."""

    def __len__(self) -> int:
        first = fields(self)[0]  # type: ignore[arg-type]
        return len(getattr(self, first.name))

    @classmethod
    def empty(cls) -> Any:
        return cls(**{f.name: np.zeros(0, _DTYPES[f.name]) for f in fields(cls)})  # type: ignore[arg-type]

    def take(self, index: Any) -> Any:
        """A new table of the rows selected by `index` (a boolean mask or integer positions)."""
        return type(self)(**{f.name: getattr(self, f.name)[index] for f in fields(self)})  # type: ignore[arg-type]

    @property
    def end(self) -> I64:
        start: I64 = getattr(self, "start")  # noqa: B009 - every table has start/dur
        dur: I64 = getattr(self, "dur")  # noqa: B009
        return start + dur


@dataclass(frozen=True)
class GpuOps(_Table):
    """Kernels, memcpys and memsets on the device timeline."""

    kind: I8
    name: I32
    start: I64
    dur: I64
    device: I32
    stream: I64
    correlation: I64
    external_id: I64
    bytes: I64


@dataclass(frozen=True)
class HostCalls(_Table):
    """Runtime and driver API calls (cudaLaunchKernel, hipMemcpyAsync, cuLaunchKernel, ...)."""

    name: I32
    start: I64
    dur: I64
    tid: I64
    correlation: I64
    external_id: I64
    driver: I8


@dataclass(frozen=True)
class CpuOps(_Table):
    """CPU operators (`aten::mm`) and user annotations (`record_function`, ProfilerStep#N)."""

    kind: I8
    name: I32
    start: I64
    dur: I64
    tid: I64
    external_id: I64


@dataclass(frozen=True)
class Syncs(_Table):
    """`cuda_sync` events: Stream / Event / Context Sync, with the stream or device waited on."""

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


_DTYPES: dict[str, type] = {
    "kind": np.int8,
    "phase": np.int8,
    "driver": np.int8,
    "name": np.int32,
    "device": np.int32,
}
for _name in ("start", "dur", "stream", "correlation", "external_id", "bytes", "tid", "id", "pid"):
    _DTYPES[_name] = np.int64


@dataclass(frozen=True)
class Device:
    id: int
    name: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceMeta:
    """Where a trace came from and what it is; `warnings` say what the reader had to repair."""

    path: str
    format: str
    schema: str  # "current", "legacy" or "unknown"
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

