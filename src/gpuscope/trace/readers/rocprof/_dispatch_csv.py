"""rocprof v1 dispatch CSVs: the kernel trace `results.csv` and the counter (`--pmc`) CSV.

Both have one row per kernel dispatch and the same leading columns
(`Index,KernelName,gpu-id,queue-id,...,sig,obj`). The kernel trace (`--stats`, `--*-trace`,
dumped from rocprof's SQLite) has a quoted header and `DispatchNs..DurationNs`; the counter CSV
(written directly by tblextr.py) has an unquoted header, the counters appended after `obj`, and
the four ns columns after the counters only with `--timestamp on`. Before ROCm 5.3 the register
columns were `vgpr,sgpr,fbar` instead of `arch_vgpr,accum_vgpr,sgpr`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _csv
from gpuscope.trace._csv import Header
from gpuscope.trace.model import KERNEL
from gpuscope.trace.readers.rocprof._dispatch import (
    LAUNCH_COLUMNS,
    counter_block,
    is_counter,
    launch_params,
)
from gpuscope.trace.readers.rocprof._piece import (
    CounterBlock,
    Piece,
    Table,
    full,
    strip_kd,
    truncation,
)

_INTS = (
    *("Index", "gpu-id", "queue-id", *LAUNCH_COLUMNS),
    *("DispatchNs", "BeginNs", "EndNs", "DurationNs"),
)


def dispatch_header(path: str) -> Header | None:
    """The header of a rocprof v1 dispatch CSV, or None."""
    return _csv.find_header(path, is_dispatch_header, scan=5)


def is_dispatch_header(cells: tuple[str, ...]) -> bool:
    names = [_csv.norm(c) for c in cells]
    return names[:2] == ["index", "kernelname"] and "gpu-id" in names and "grd" in names


def read_dispatch_csv(path: str) -> Piece:
    header = dispatch_header(path)
    if header is None:
        raise ReaderError("expected rocprof's kernel CSV header (Index,KernelName,gpu-id,...,"
                          "grd,wgr,...); found none in the first lines")  # fmt: skip
    counters = _counter_columns(header)
    if not _has_rows(path, header):  # a run without kernels (numpy would warn about it)
        columns = _csv.Columns(path, header, 0, _empty(counters))
        if _csv.ends_mid_line(path):
            columns.warnings.append("the header line is cut short (the writer died?): no rows")
        return _piece(path, header, columns, counters)
    columns = _csv.read_columns(
        path,
        header,
        ints={key: header.index(key) for key in _INTS},
        floats={name: header.index(name) for name in counters},
        texts={"name": header.index("KernelName")},
        what="rocprof kernel CSV",
    )
    return _piece(path, header, columns, counters)


def _has_rows(path: str, header: Header) -> bool:
    lines = _csv.first_lines(path, header.line + 2)
    return any(line.strip() for line in lines[header.line + 1 :])


def _empty(counters: list[str]) -> dict[str, Any]:
    columns: dict[str, Any] = {key: np.zeros(0, np.int64) for key in _INTS}
    columns.update({name: np.zeros(0, np.float64) for name in counters})
    columns["name"] = []
    return columns


def _counter_columns(header: Header) -> list[str]:
    """Counter columns: after `obj` when present, otherwise every non-property column."""
    cells = [c.strip().strip('"') for c in header.cells]
    names = [_csv.norm(c) for c in cells]
    start = names.index("obj") + 1 if "obj" in names else 0
    return [cell for cell in cells[start:] if is_counter(cell)]


def _piece(path: str, header: Header, columns: _csv.Columns, counters: list[str]) -> Piece:
    timed = header.has("BeginNs") and header.has("EndNs")
    quoted = _raw_line(path, header.line).startswith('"')
    size = columns.rows
    start, dur, warnings = _times(columns, timed)
    gpu = Table(
        strip_kd(columns.texts("name")),
        {
            "kind": np.full(size, KERNEL, np.int8),
            "start": start,
            "dur": dur,
            "device": columns.ints("gpu-id"),
            "stream": columns.ints("queue-id"),  # no stream in this file: the HSA queue
            "enqueued": _enqueued(columns, start),
        },
    )
    provides = {"launch_params"} | ({"kernels", "timestamps"} if timed else set())
    block = _counters(columns, counters)
    if block is not None:
        provides.add("counters")
    said, cut = truncation(columns.warnings)
    return Piece(
        path,
        _variant(header, quoted),
        kind="csv",
        gpu=gpu,
        dispatch=columns.ints("Index"),
        launch=_launch(columns),
        counters=block,
        provides=provides,
        warnings=said + warnings,
        truncated=cut,
        timed=timed,
    )


def _raw_line(path: str, number: int) -> str:
    lines = _csv.first_lines(path, number + 1)
    return lines[number].lstrip("\ufeff") if len(lines) > number else ""


def _variant(header: Header, quoted: bool) -> str:
    kind = "trace-csv" if quoted else "pmc-csv"
    return f"{kind}/rocm5.3" if header.has("arch_vgpr") else f"{kind}/legacy"


def _times(columns: _csv.Columns, timed: bool) -> tuple[Any, Any, list[str]]:
    size = columns.rows
    if not timed:
        return full(size, -1), full(size, -1), []
    begin, end = columns.ints("BeginNs"), columns.ints("EndNs")
    known = (begin >= 0) & (end >= begin)
    start = np.where(known, begin, -1)
    dur = np.where(known, end - begin, -1)
    warnings = []
    stated = columns.ints("DurationNs")
    differ = int(((stated >= 0) & known & (stated != dur)).sum())
    if differ:
        warnings.append(f"{differ:,} rows have DurationNs different from EndNs - BeginNs; "
                        "used EndNs - BeginNs")  # fmt: skip
    if not known.all():
        warnings.append(f"{int((~known).sum()):,} rows have no valid BeginNs/EndNs")
    return start, dur, warnings


def _enqueued(columns: _csv.Columns, start: Any) -> Any:
    """DispatchNs: when the host wrote the dispatch packet (-1 where absent or after the start,
    which a real dispatch cannot be)."""
    dispatch = columns.ints("DispatchNs")
    return np.where((dispatch >= 0) & ((start < 0) | (dispatch <= start)), dispatch, -1)


def _launch(columns: _csv.Columns) -> dict[str, Any]:
    return launch_params({key: columns.ints(key) for key in LAUNCH_COLUMNS})


def _counters(columns: _csv.Columns, names: list[str]) -> CounterBlock | None:
    if not names:
        return None
    return counter_block(names, np.column_stack([columns.floats(n) for n in names]))
