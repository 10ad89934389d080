"""library_trace.csv: madengine's columns first, then gpuscope's normalized columns.

    jobid,created_date,model,library,config,calls,op,dtype,compute_type,transA,transB,m,n,k,batch,
    lda,ldb,ldc,conv_n,conv_c,conv_h,conv_w,conv_k,conv_y,conv_x,pad_h,pad_w,stride_h,stride_w,
    dilation_h,dilation_w,groups,conv_direction,layout,collective,count,reduce_op,nranks,root,bytes

One row per distinct (library, config), in order of first appearance; `calls` is the sum of the
calls logged with that config. `created_date` is UTC, in madengine's `%Y-%m-%d %H:%M:%S` format.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpuscope.libtrace.call import LibraryCall, with_calls
from gpuscope.output import writing

MADENGINE_COLUMNS = ("jobid", "created_date", "model", "library", "config", "calls")
CALL_COLUMNS = (
    "op", "dtype", "compute_type", "transA", "transB", "m", "n", "k", "batch", "lda", "ldb", "ldc",
)  # fmt: skip
CONV_COLUMNS = (
    "conv_n", "conv_c", "conv_h", "conv_w", "conv_k", "conv_y", "conv_x", "pad_h", "pad_w",
    "stride_h", "stride_w", "dilation_h", "dilation_w", "groups", "conv_direction", "layout",
)  # fmt: skip
COLLECTIVE_COLUMNS = ("collective", "count", "reduce_op", "nranks", "root", "bytes")
COLUMNS = MADENGINE_COLUMNS + CALL_COLUMNS + CONV_COLUMNS + COLLECTIVE_COLUMNS

Cell = str | int | None


def aggregate(calls: Iterable[LibraryCall]) -> list[LibraryCall]:
    """One call per (library, config), `calls` summed, in order of first appearance."""
    merged: dict[tuple[str, str], LibraryCall] = {}
    for call in calls:
        key = (call.library, call.config)
        seen = merged.get(key)
        merged[key] = call if seen is None else with_calls(seen, seen.calls + call.calls)
    return list(merged.values())


def write_csv(
    path: str | Path, calls: Iterable[LibraryCall], *, jobid: str, model: str, now: dt.datetime
) -> Path:
    """Write the aggregated rows (`gpuscope.output.writing`: whole or not at all; `-`: stdout)."""
    created = created_date(now)
    return write_rows(path, COLUMNS, (_cells(c, jobid, created, model) for c in aggregate(calls)))


def created_date(now: dt.datetime) -> str:
    """`now` as madengine's `created_date`: UTC, `%Y-%m-%d %H:%M:%S`."""
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def write_rows(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """A CSV in madengine's way (its columns first, `\\n` line ends, None as an empty cell),
    written whole or not at all (`gpuscope.output.writing`; `-`: stdout): library_trace.csv and
    library_perf.csv."""
    with writing(path) as partial, partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return Path(path)


def _cells(call: LibraryCall, jobid: str, created: str, model: str) -> list[Cell]:
    head: list[Cell] = [jobid, created, model, call.library, call.config, call.calls]
    gemm: list[Cell] = [
        call.op, call.dtype, call.compute_type, call.trans_a, call.trans_b, call.m, call.n,
        call.k, call.batch, call.lda, call.ldb, call.ldc,
    ]  # fmt: skip
    return head + gemm + _conv_cells(call) + _collective_cells(call)


def _conv_cells(call: LibraryCall) -> list[Cell]:
    c = call.conv
    if c is None:
        return [None] * len(CONV_COLUMNS)
    return [
        c.n, c.c, c.h, c.w, c.k, c.y, c.x, c.pad_h, c.pad_w, c.stride_h, c.stride_w,
        c.dilation_h, c.dilation_w, c.groups, c.direction, c.layout,
    ]  # fmt: skip


def _collective_cells(call: LibraryCall) -> list[Cell]:
    c = call.collective
    if c is None:
        return [None] * len(COLLECTIVE_COLUMNS)
    return [c.name, c.count, c.reduce_op, c.nranks, c.root, c.bytes]
