"""The per-event `nsys stats` reports: `cuda_gpu_trace` (every kernel, memcpy and memset with
its start in ns since the session start) and `cuda_kern_exec_trace` (each kernel with the API
call that launched it). Sizes are in MB = 10^6 bytes with 3 decimals: bytes are known to ±500.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.trace._builder import TraceParts
from gpuscope.trace._csv import parse_float, parse_int, read_columns
from gpuscope.trace.model import I64, KERNEL, MEMCPY, MEMSET, RUNTIME, Device
from gpuscope.trace.readers import _nsys_enums as enums
from gpuscope.trace.readers._nsys_reports import Table

_DEVICE = re.compile(r"^(?P<name>.*?)\s*\((?P<id>\d+)\)$")


@dataclass(frozen=True)
class Spec:
    """The columns to read: key -> header spellings."""

    ints: dict[str, tuple[str, ...]]
    floats: dict[str, tuple[str, ...]]
    texts: dict[str, tuple[str, ...]]


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


class RowColumns:
    """The accessors of `_csv.Columns` over rows already in memory (tables printed to stdout)."""

    def __init__(self, rows: list[list[str]], where: dict[str, dict[str, int | None]]) -> None:
        self.rows = len(rows)
        self.warnings: list[str] = []
        self.data: dict[str, Any] = {}
        for key, at in where["ints"].items():
            self.data[key] = np.array([_cell(r, at, parse_int, -1) for r in rows], np.int64)
        for key, at in where["floats"].items():
            self.data[key] = np.array([_cell(r, at, parse_float, math.nan) for r in rows])
        for key, at in where["texts"].items():
            self.data[key] = [r[at] if at is not None else "" for r in rows]

    def ints(self, key: str) -> Any:
        return self.data[key]

    def floats(self, key: str) -> Any:
        return self.data[key]

    def texts(self, key: str) -> Any:
        return self.data[key]


def _cell(row: list[str], at: int | None, parse: Any, missing: Any) -> Any:
    return parse(row[at]) if at is not None else missing


def read(table: Table, spec: Spec) -> Any:
    """The columns of `spec` (numpy fast path for a whole file, else from the rows in memory)."""
    header = table.header
    ints = {key: header.index(*names) for key, names in spec.ints.items()}
    floats = {key: header.index(*names) for key, names in spec.floats.items()}
    texts = {key: header.index(*names) for key, names in spec.texts.items()}
    if table.rows is None:
        return read_columns(
            table.path, header, ints=ints, floats=floats, texts=texts, what="nsys stats CSV"
        )
    return RowColumns(table.rows, {"ints": ints, "floats": floats, "texts": texts})


def add_gpu_trace(parts: TraceParts, columns: Any, devices: dict[int, Device]) -> tuple[I64, I64]:
    """gpu rows and kernel launch params; returns (start, correlation) of the kernels."""
    names: list[str] = columns.texts("name")
    kinds = _kinds(names)
    first = parts.rows("gpu")
    memory = enums.host_memory_of_labels(columns.texts("src"), columns.texts("dst"))
    parts.add(
        "gpu",
        len(names),
        kind=kinds,
        name=parts.intern(names),
        start=columns.ints("start"),
        dur=columns.ints("dur"),
        device=device_ids(columns.texts("device"), devices),
        stream=columns.ints("stream"),
        correlation=np.where(columns.ints("corr") > 0, columns.ints("corr"), -1),
        bytes=megabytes(columns.floats("mb")),
        copy=_directions(names, kinds),
        host_memory=np.where(kinds == MEMCPY, memory, -1),
    )
    kernels = np.flatnonzero(kinds == KERNEL)
    shared = megabytes(columns.floats("smem_static") + columns.floats("smem_dynamic"))
    parts.add(
        "launch_params",
        len(kernels),
        row=kernels + first,
        **{f"grid_{a}": columns.ints(f"grid_{a}")[kernels] for a in "xyz"},
        **{f"block_{a}": columns.ints(f"block_{a}")[kernels] for a in "xyz"},
        registers=columns.ints("registers")[kernels],
        shared_mem=shared[kernels],
    )
    return columns.ints("start")[kernels], columns.ints("corr")[kernels]


def add_exec_trace(parts: TraceParts, columns: Any, kernels: tuple[I64, I64] | None) -> None:
    """Launch calls (and, without a gpu_trace, the kernels) of `cuda_kern_exec_trace`.

    The report has no correlation id: alone, each call and its kernel get the row number as
    one; beside a gpu_trace, a call takes the id of the gpu_trace kernel starting when its does.
    """
    size = columns.rows
    if kernels is None:
        correlation = np.arange(1, size + 1, dtype=np.int64)
        _exec_kernels(parts, columns, correlation)
    else:
        correlation = _match(kernels, columns.ints("k_start"))
    parts.add(
        "host",
        size,
        name=parts.intern(columns.texts("api")),
        start=columns.ints("api_start"),
        dur=columns.ints("api_dur"),
        tid=columns.ints("tid"),
        correlation=correlation,
        domain=np.full(size, RUNTIME, np.int8),
    )


def _exec_kernels(parts: TraceParts, columns: Any, correlation: I64) -> None:
    size = columns.rows
    first = parts.rows("gpu")
    parts.add(
        "gpu",
        size,
        kind=np.full(size, KERNEL, np.int8),
        name=parts.intern(columns.texts("kernel")),
        start=columns.ints("k_start"),
        dur=columns.ints("k_dur"),
        device=columns.ints("device"),
        correlation=correlation,
    )
    grid, block = _triples(columns.texts("grid")), _triples(columns.texts("block"))
    parts.add(
        "launch_params",
        size,
        row=np.arange(first, first + size, dtype=np.int64),
        **{f"grid_{a}": grid[:, i] for i, a in enumerate("xyz")},
        **{f"block_{a}": block[:, i] for i, a in enumerate("xyz")},
    )


def device_ids(labels: list[str], devices: dict[int, Device]) -> Any:
    """Device ids of 'NVIDIA A100-SXM4-40GB (0)' cells; the devices found are added."""
    unique, inverse = np.unique(np.asarray(labels, object), return_inverse=True)
    ids = []
    for label in unique:
        found = _DEVICE.match(str(label))
        number = int(found.group("id")) if found else -1
        if found and number not in devices:
            devices[number] = Device(number, found.group("name"))
        ids.append(number)
    return np.array(ids, np.int32)[inverse.reshape(-1)]


def megabytes(values: Any) -> I64:
    """MB (10^6 bytes, as nsys prints them) -> bytes; -1 where the cell was empty."""
    finite = np.isfinite(values)
    result: I64 = np.where(finite, np.rint(np.where(finite, values, 0) * 1e6), -1).astype(np.int64)
    return result


def _kinds(names: list[str]) -> Any:
    unique, inverse = np.unique(np.asarray(names, object), return_inverse=True)
    kinds = [_kind(str(name)) for name in unique]
    return np.array(kinds, np.int8)[inverse.reshape(-1)]


def _kind(name: str) -> int:
    if name.startswith("[CUDA memcpy"):
        return MEMCPY
    return MEMSET if name.startswith("[CUDA memset") else KERNEL


def _directions(names: list[str], kinds: Any) -> Any:
    result = np.full(len(names), -1, np.int8)
    cache: dict[str, int] = {}
    for row in np.flatnonzero(kinds == MEMCPY):
        name = names[row]
        if name not in cache:
            label = name.removeprefix("[CUDA memcpy").strip(" []")
            cache[name] = enums.copy_direction_of_label(label)
        result[row] = cache[name]
    return result


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
