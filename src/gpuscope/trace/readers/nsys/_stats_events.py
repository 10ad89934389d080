"""The per-event `nsys stats` reports: `cuda_gpu_trace` (every kernel, memcpy and memset with
its start in ns since the session start) and `cuda_kern_exec_trace` (each kernel with the API
call that launched it). Sizes are in MB = 10^6 bytes with 3 decimals: bytes are known to ±500.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.trace._builder import TraceParts
from gpuscope.trace._csv import parse_int
from gpuscope.trace.model import I64, KERNEL, MEMCPY, MEMSET, RUNTIME, Device
from gpuscope.trace.readers.nsys import _enums as enums
from gpuscope.trace.readers.nsys import _stats_columns as chunked
from gpuscope.trace.readers.nsys._reports import Table
from gpuscope.trace.readers.nsys._stats_columns import Columns

_DEVICE = re.compile(r"^(?P<name>.*?)\s*\((?P<id>\d+)\)$")


@dataclass(frozen=True)
class Spec:
    """The columns to read: key -> header spellings."""

    ints: dict[str, tuple[str, ...]]
    floats: dict[str, tuple[str, ...]]
    texts: dict[str, tuple[str, ...]]
    few: frozenset[str] = frozenset()  # integer columns with few distinct values


GPU_TRACE = Spec(
    ints={
        "start": ("Start (ns)",),
        "dur": ("Duration (ns)",),
        "corr": ("CorrId", "CorrID"),
        **{f"grid_{a}": (f"Grd{a.upper()}",) for a in "xyz"},
        **{f"block_{a}": (f"Blk{a.upper()}",) for a in "xyz"},
        "registers": ("Reg/Trd",),
        "stream": ("Strm",),
    },
    floats={
        "smem_static": ("StcSMem (MB)",),
        "smem_dynamic": ("DymSMem (MB)",),
        "mb": ("Bytes (MB)",),
    },
    texts={"name": ("Name",), "device": ("Device",), "src": ("SrcMemKd",), "dst": ("DstMemKd",)},
    few=frozenset(
        {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers", "stream"}
    ),
)
KERN_EXEC = Spec(
    ints={
        "api_start": ("API Start (ns)",),
        "api_dur": ("API Dur (ns)",),
        "k_start": ("Kernel Start (ns)",),
        "k_dur": ("Kernel Dur (ns)",),
        "tid": ("TID",),
        "device": ("DevId",),
    },
    floats={},
    texts={"api": ("API Function",), "kernel": ("Kernel Name",), "grid": ("GridXYZ",),
           "block": ("BlockXYZ",)},
)  # fmt: skip


def read(table: Table, spec: Spec) -> Columns:
    """The columns of `spec`, from the file below the header or from the rows in memory."""
    header = table.header
    ints = {key: header.index(*names) for key, names in spec.ints.items()}
    floats = {key: header.index(*names) for key, names in spec.floats.items()}
    texts = {key: header.index(*names) for key, names in spec.texts.items()}
    width = len(header.cells)
    if table.rows is not None:
        return chunked.read(table.rows, width, ints, floats, texts, spec.few)
    return chunked.read_file(table.path, header.line + 1, width, ints, floats, texts, spec.few)


def add_gpu_trace(parts: TraceParts, table: Columns, devices: dict[int, Device]) -> tuple[I64, I64]:
    """gpu rows and kernel launch params; returns (start, correlation) of the kernels."""
    codes, names = table.coded("name")
    kinds = np.array([_kind(n) for n in names], np.int8)[codes]
    directions = np.array([_direction(n) for n in names], np.int8)[codes]
    first = parts.rows("gpu")
    memory = _host_memory(table)
    corr = table.ints("corr")
    parts.add(
        "gpu",
        table.rows,
        kind=kinds,
        name=parts.intern(names)[codes],
        start=table.ints("start"),
        dur=table.ints("dur"),
        device=device_ids(table, devices),
        stream=table.ints("stream"),
        correlation=np.where(corr > 0, corr, -1),
        bytes=megabytes(table.floats("mb")),
        copy=directions,
        host_memory=np.where(kinds == MEMCPY, memory, -1),
    )
    kernels = np.flatnonzero(kinds == KERNEL)
    shared = megabytes(table.floats("smem_static") + table.floats("smem_dynamic"))
    parts.add(
        "launch_params",
        len(kernels),
        row=kernels + first,
        **{f"grid_{a}": table.ints(f"grid_{a}")[kernels] for a in "xyz"},
        **{f"block_{a}": table.ints(f"block_{a}")[kernels] for a in "xyz"},
        registers=table.ints("registers")[kernels],
        shared_mem=shared[kernels],
    )
    return table.ints("start")[kernels], corr[kernels]


def _host_memory(table: Columns) -> Any:
    src, src_values = table.coded("src")
    dst, dst_values = table.coded("dst")
    return enums.host_memory_of_labels(
        np.array(src_values, object)[src] if src_values else [""] * table.rows,
        np.array(dst_values, object)[dst] if dst_values else [""] * table.rows,
    )


def add_exec_trace(parts: TraceParts, table: Columns, kernels: tuple[I64, I64] | None) -> None:
    """Launch calls (and, without a gpu_trace, the kernels) of `cuda_kern_exec_trace`.

    The report has no correlation id: alone, each call and its kernel get the row number as
    one; beside a gpu_trace, a call takes the id of the gpu_trace kernel starting when its does.
    """
    size = table.rows
    if kernels is None:
        correlation = np.arange(1, size + 1, dtype=np.int64)
        _exec_kernels(parts, table, correlation)
    else:
        correlation = _match(kernels, table.ints("k_start"))
    parts.add(
        "host",
        size,
        name=parts.intern(table.texts("api")),
        start=table.ints("api_start"),
        dur=table.ints("api_dur"),
        tid=table.ints("tid"),
        correlation=correlation,
        domain=np.full(size, RUNTIME, np.int8),
    )


def _exec_kernels(parts: TraceParts, table: Columns, correlation: I64) -> None:
    size = table.rows
    first = parts.rows("gpu")
    parts.add(
        "gpu",
        size,
        kind=np.full(size, KERNEL, np.int8),
        name=parts.intern(table.texts("kernel")),
        start=table.ints("k_start"),
        dur=table.ints("k_dur"),
        device=table.ints("device"),
        correlation=correlation,
    )
    grid, block = _triples(table.texts("grid")), _triples(table.texts("block"))
    parts.add(
        "launch_params",
        size,
        row=np.arange(first, first + size, dtype=np.int64),
        **{f"grid_{a}": grid[:, i] for i, a in enumerate("xyz")},
        **{f"block_{a}": block[:, i] for i, a in enumerate("xyz")},
    )


def device_ids(table: Columns, devices: dict[int, Device]) -> Any:
    """Device ids of 'NVIDIA A100-SXM4-40GB (0)' cells; the devices found are added."""
    codes, labels = table.coded("device")
    ids = []
    for label in labels:
        found = _DEVICE.match(label)
        number = int(found.group("id")) if found else -1
        if found and number not in devices:
            devices[number] = Device(number, found.group("name"))
        ids.append(number)
    return np.array(ids, np.int32)[codes] if ids else np.full(table.rows, -1, np.int32)


def megabytes(values: Any) -> I64:
    """MB (10^6 bytes, as nsys prints them) -> bytes; -1 where the cell was empty."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.rint(np.asarray(values, np.float64) * 1e6)
    fits = np.isfinite(scaled) & (np.abs(scaled) < 2**63)  # NaN (empty), inf, past int64
    result: I64 = np.where(fits, scaled, -1).astype(np.int64)
    return result


def _kind(name: str) -> int:
    if name.startswith("[CUDA memcpy"):
        return MEMCPY
    return MEMSET if name.startswith("[CUDA memset") else KERNEL


def _direction(name: str) -> int:
    if not name.startswith("[CUDA memcpy"):
        return -1
    return enums.copy_direction_of_label(name.removeprefix("[CUDA memcpy").strip(" []"))


def _triples(texts: list[str]) -> Any:
    """`'   1    1    1'` -> (1, 1, 1); -1s when the cell is not three integers."""
    rows = []
    for text in texts:
        parts = text.replace(",", " ").split()
        rows.append([parse_int(p) for p in parts] if len(parts) == 3 else [-1, -1, -1])
    return np.array(rows, np.int64).reshape(len(texts), 3)


def _match(kernels: tuple[I64, I64], starts: I64) -> I64:
    """The correlation id of the kernel starting at each of `starts` (-1 when none does)."""
    kernel_start, correlation = kernels
    if not len(kernel_start):
        return np.full(len(starts), -1, np.int64)
    order = np.argsort(kernel_start, kind="stable")
    at = np.minimum(np.searchsorted(kernel_start[order], starts), len(order) - 1)
    found = kernel_start[order][at] == starts
    ids = correlation[order][at]
    result: I64 = np.where(found & (ids > 0), ids, -1)
    return result
