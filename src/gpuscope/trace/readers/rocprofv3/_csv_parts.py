"""rocprofv3 CSV files -> `Part`s: kernel trace, API traces, memory copies, counters, stats.

Columns are found by name across every header generation (ROCm 6.1, 6.2-6.4, the 2025-03
`Stream_Id` layout, ROCm 7, and `rocpd convert` CSVs with a leading `Guid` and `Lds_Block_Size`
/ `Vgpr_Count` capitalisation; names compare case-insensitively). Times are integer ns on
CLOCK_BOOTTIME and stay integers.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv
from gpuscope.trace.readers.rocprofv3 import _files as files
from gpuscope.trace.readers.rocprofv3._agents import references
from gpuscope.trace.readers.rocprofv3._tables import (
    Calls,
    Copies,
    CounterValues,
    Dispatches,
    Part,
    ints,
)

Spec = Mapping[str, tuple[str, ...]]  # key -> accepted header spellings

_LAUNCH: Spec = {
    "lds": ("LDS_Block_Size", "Group_Segment_Size"),
    "scratch": ("Scratch_Size", "Private_Segment_Size"),
    "vgpr": ("VGPR_Count", "Arch_VGPR_Count"),
    "accum": ("Accum_VGPR_Count",),
    "sgpr": ("SGPR_Count",),
}
_TIMES: Spec = {"start": ("Start_Timestamp",), "end": ("End_Timestamp",)}
_KERNEL_INTS: Spec = {
    **_TIMES,
    "queue": ("Queue_Id",),
    "stream": ("Stream_Id",),
    "thread": ("Thread_Id",),
    "dispatch": ("Dispatch_Id",),
    "correlation": ("Correlation_Id",),
    **{f"block_{a}": (f"Workgroup_Size_{a.upper()}",) for a in "xyz"},
    **{f"grid_{a}": (f"Grid_Size_{a.upper()}",) for a in "xyz"},
    **_LAUNCH,
}
_COUNTER_INTS: Spec = {
    **_TIMES,
    "dispatch": ("Dispatch_Id",),
    "correlation": ("Correlation_Id",),
    "queue": ("Queue_Id",),
    "thread": ("Thread_Id",),
    "grid": ("Grid_Size",),
    "block": ("Workgroup_Size",),
    **_LAUNCH,
}


def read_kernel_trace(path: str) -> Part:
    """`*_kernel_trace.csv`: one row per dispatch."""
    texts = {"name": ("Kernel_Name",), "agent": ("Agent_Id",)}
    required = ("Kernel_Name", "Start_Timestamp", "End_Timestamp")
    header, columns = _read(path, files.KERNEL_TRACE, _KERNEL_INTS, texts, required=required)
    c = columns.ints
    size = columns.rows
    stream = c("stream") if header.has("Stream_Id") else c("queue")
    dispatches = Dispatches(
        names=columns.texts("name"),
        start=c("start"),
        end=c("end"),
        agent=references(columns.texts("agent")),
        queue=c("queue"),
        stream=stream,
        thread=c("thread"),
        dispatch=c("dispatch"),
        correlation=c("correlation"),
        external=ints(size),
        grid=np.stack([c(f"grid_{a}") for a in "xyz"], axis=1),
        block=np.stack([c(f"block_{a}") for a in "xyz"], axis=1),
        **{key: c(key) for key in _LAUNCH},
    )
    return _part(path, files.KERNEL_TRACE, kernel_variant(header), columns, dispatches=[dispatches])


def kernel_variant(header: _csv.Header) -> str:
    """Which header generation wrote the kernel trace (see formats.md §3.2)."""
    if header.has("Guid"):
        return "rocpd-convert"
    if header.has("VGPR_Count"):
        return "rocm7"
    if header.has("Stream_Id"):
        return "2025-03"
    return "rocm6.2" if header.has("Dispatch_Id") else "rocm6.1"


def read_api_trace(path: str) -> Part:
    """`*_hip_api_trace.csv`, `*_hsa_api_trace.csv`, `*_marker_api_trace.csv`, RCCL, rocDecode,
    rocJPEG: `Domain, Function, Process_Id, Thread_Id, Correlation_Id, Start/End_Timestamp`."""
    numbers = {**_TIMES, "tid": ("Thread_Id",), "correlation": ("Correlation_Id",)}
    texts = {"domain": ("Domain",), "function": ("Function",)}
    required = ("Domain", "Function", "Start_Timestamp", "End_Timestamp")
    header, columns = _read(path, files.API_TRACE, numbers, texts, required=required)
    c = columns.ints
    calls = Calls(
        domains=columns.texts("domain"),
        functions=columns.texts("function"),
        start=c("start"),
        end=c("end"),
        tid=c("tid"),
        correlation=c("correlation"),
        external=ints(columns.rows),
    )
    variant = "rocpd-convert" if header.has("Guid") else ""
    return _part(path, files.API_TRACE, variant, columns, calls=[calls])


def read_memory_copies(path: str) -> Part:
    """`*_memory_copy_trace.csv` (no byte counts: rocprofv3 writes those only to JSON / rocpd)."""
    numbers = {**_TIMES, "stream": ("Stream_Id",), "correlation": ("Correlation_Id",)}
    texts = {
        "direction": ("Direction",),
        "src": ("Source_Agent_Id",),
        "dst": ("Destination_Agent_Id",),
    }
    required = ("Direction", "Start_Timestamp", "End_Timestamp")
    header, columns = _read(path, files.MEMORY_COPY, numbers, texts, required=required)
    c = columns.ints
    copies = Copies(
        directions=columns.texts("direction"),
        start=c("start"),
        end=c("end"),
        src=references(columns.texts("src")),
        dst=references(columns.texts("dst")),
        stream=c("stream"),
        correlation=c("correlation"),
        external=ints(columns.rows),
        bytes=ints(columns.rows),
    )
    variant = "rocpd-convert" if header.has("Guid") else ""
    return _part(path, files.MEMORY_COPY, variant, columns, copies=[copies])


def read_counters(path: str) -> Part:
    """`*_counter_collection.csv`: one row per (dispatch, counter); ROCm 7 adds timestamps."""
    texts = {"name": ("Kernel_Name",), "agent": ("Agent_Id",), "counter": ("Counter_Name",)}
    header, columns = _read(
        path,
        files.COUNTERS,
        _COUNTER_INTS,
        texts,
        required=("Counter_Name", "Counter_Value"),
        floats={"value": ("Counter_Value",)},
    )
    c = columns.ints
    key = c("dispatch") if header.has("Dispatch_Id") else c("correlation")
    timed = header.has("Start_Timestamp") and header.has("End_Timestamp")
    values = CounterValues(
        dispatch=key,
        names=columns.texts("counter"),
        values=columns.floats("value"),
        kernels=_counter_dispatches(columns, key),
        timed=timed,
    )
    return _part(path, files.COUNTERS, "rocm7" if timed else "rocm6.2", columns, counters=[values])


def _counter_dispatches(columns: _csv.Columns, key: np.ndarray) -> Dispatches:
    """One dispatch per distinct key (its first row): the grid and work-group are products."""
    _, first = np.unique(key, return_index=True)
    rows = np.sort(first)
    c = columns.ints
    names = columns.texts("name")
    size = len(rows)
    return Dispatches(
        names=[names[i] for i in rows],
        start=c("start")[rows],
        end=c("end")[rows],
        agent=references([columns.texts("agent")[i] for i in rows]),
        queue=c("queue")[rows],
        stream=c("queue")[rows],
        thread=c("thread")[rows],
        dispatch=key[rows],
        correlation=c("correlation")[rows],
        external=ints(size),
        grid=_product_dims(c("grid")[rows]),
        block=_product_dims(c("block")[rows]),
        **{name: c(name)[rows] for name in _LAUNCH},
    )


def _product_dims(total: np.ndarray) -> np.ndarray:
    """(total, 1, 1) per row: the file gives only the product of the three dimensions."""
    dims = np.ones((len(total), 3), np.int64)
    dims[:, 0] = total
    dims[total < 0] = -1
    return dims


def _read(
    path: str,
    kind: str,
    int_spec: Spec,
    text_spec: Spec,
    *,
    required: tuple[str, ...],
    floats: Spec | None = None,
) -> tuple[_csv.Header, _csv.Columns]:
    header = _header(path, kind)
    missing = [name for name in required if not header.has(name)]
    if missing:
        raise ReaderError(f"the rocprofv3 {kind} CSV has no {', '.join(missing)} column "
                          f"(header: {','.join(header.cells)[:200]})")  # fmt: skip
    columns = read_columns(
        path,
        header,
        kind,
        ints=_positions(header, int_spec),
        floats=_positions(header, floats or {}),
        texts=_positions(header, text_spec),
    )
    return header, columns


def read_columns(path: str, header: _csv.Header, kind: str, **spec: Any) -> _csv.Columns:
    """`_csv.read_columns`, its failures as one-line ReaderErrors."""
    try:
        with warnings.catch_warnings():
            # numpy warns on a header-only file; "no rows" is reported by the reader instead
            warnings.filterwarnings("ignore", "loadtxt: input contained no data")
            # _csv's row iterator leaves its file to the garbage collector when the last row
            # is cut short; it is closed as soon as read_columns returns
            warnings.simplefilter("ignore", ResourceWarning)
            return _csv.read_columns(path, header, what=f"rocprofv3 {kind}", **spec)
    except (ValueError, UnicodeDecodeError) as error:
        raise ReaderError(f"cannot read the rocprofv3 {kind} CSV ({error})") from None


def _header(path: str, kind: str) -> _csv.Header:
    def test(cells: tuple[str, ...]) -> bool:
        return files.kind_of_cells(cells) == kind

    header = _csv.find_header(path, test, scan=2)
    if header is None:
        raise ReaderError(f"expected a rocprofv3 {kind} CSV header in the first line; found none")
    return header


def _positions(header: _csv.Header, spec: Spec) -> dict[str, int | None]:
    return {key: header.index(*spellings) for key, spellings in spec.items()}


def _part(path: str, kind: str, variant: str, columns: _csv.Columns, **tables: Any) -> Part:
    part = Part(path=path, kind=kind, variant=variant, **tables)
    part.warnings.extend(columns.warnings)
    part.truncated = any("cut short" in w for w in columns.warnings)
    return part
