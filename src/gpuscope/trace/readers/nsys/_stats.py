"""`nsys stats` outputs -> `Trace`: the CSV files of `--format csv --output PREFIX` (all the files
of one PREFIX make one trace), CSV tables printed to stdout, and the default text output.

Summaries (`cuda_gpu_kern_sum`, `cuda_api_sum`, `cuda_gpu_mem_time_sum`) become `totals`;
`cuda_gpu_mem_size_sum` gives copy sizes per operation in `meta.extra["copy_bytes"]` (MB there is
10^6 bytes with 3 decimals: ±500 bytes); the per-event reports are read by `_stats_events`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._csv import Header, csv_row, parse_float, parse_int
from gpuscope.trace.model import API, I64, KERNEL, MEMCPY, MEMSET, Device, Trace
from gpuscope.trace.readers.nsys import _reports as rep
from gpuscope.trace.readers.nsys import _stats_events as events
from gpuscope.trace.readers.nsys import _stats_text as text_stats
from gpuscope.trace.readers.nsys._reports import Table

_HEADER_MARKS = (b"(ns)", b"(MB)")  # every report header has one of these cells


def csv_tables(path: str) -> list[Table]:
    """Every report table in a CSV file (one per `--output` file, several on stdout)."""
    found = []
    for number, line in _candidate_lines(path):
        cells = csv_row(line)
        report = rep.report_of(cells)
        if report is not None:
            found.append(Table(report, path, Header(number, tuple(cells))))
    if len(found) == 1 and found[0].report in rep.TRACES:
        return found  # read below its header in chunks
    return _with_rows(path, found)


def _candidate_lines(path: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines that may be report headers: those with a "(ns)" or
    "(MB)" cell, found by substring search over the bytes (a gpu_trace of a long run has
    millions of data lines, which have neither)."""
    with open(path, "rb") as handle:
        data = handle.read()
    starts = set()
    for mark in _HEADER_MARKS:
        at = data.find(mark)
        while at >= 0:
            starts.add(data.rfind(b"\n", 0, at) + 1)
            at = data.find(mark, data.find(b"\n", at) % (len(data) + 1) or len(data))
    number, offset = 0, 0
    for start in sorted(starts):
        number += data.count(b"\n", offset, start)
        offset = start
        end = data.find(b"\n", start)
        line = data[start : end if end >= 0 else len(data)]
        yield number, line.decode("utf-8", "replace").rstrip("\r")


def _with_rows(path: str, tables: list[Table]) -> list[Table]:
    if not tables:
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        text = handle.read()
    lines = text.splitlines()
    ends = [t.header.line for t in tables[1:]] + [len(lines)]
    for table, end in zip(tables, ends, strict=True):
        width = len(table.header.cells)
        body = [csv_row(line) for line in lines[table.header.line + 1 : end] if line.strip()]
        at_end = body and end == len(lines) and text[-1] not in "\r\n"
        if at_end and (len(body[-1]) < width or lines[-1].count('"') % 2):  # stopped mid-row
            body, table.cut = body[:-1], True
        table.rows = [row for row in body if len(row) == width]
        table.skipped = len(body) - len(table.rows)
    return tables


def text_tables(path: str) -> tuple[list[Table], list[str]]:
    """The CUDA summary tables of `nsys stats` text output, and its SKIPPED reasons."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        parsed = text_stats.parse(handle.read())
    tables = []
    for table in parsed.tables:
        report = rep.canonical(table.report)
        if report in rep.SUMMARIES:
            tables.append(Table(report, path, Header(0, tuple(table.header)), table.rows))
    return tables, parsed.skipped


class StatsBuilder:
    """Accumulates the tables of one PREFIX into one trace."""

    def __init__(self) -> None:
        self.parts = TraceParts()
        self.provides: set[str] = set()
        self.warnings: list[str] = []
        self.counts: dict[str, int] = {}
        self.devices: dict[int, Device] = {}
        self.copy_bytes: dict[str, dict[str, int]] = {}
        self.truncated = False
        self._exec: Table | None = None  # read last: it borrows gpu_trace's correlation ids
        self._kernels: tuple[I64, I64] | None = None

    @property
    def empty(self) -> bool:
        return not self.provides and self._exec is None

    def add(self, table: Table) -> None:
        absent = rep.missing(table.report, table.header.cells)
        if absent:
            raise ReaderError(
                f"{table.report} table without the column(s) {', '.join(absent)} "
                f"(header: {', '.join(table.header.cells)})"
            )
        self._damage(table)
        if table.report == rep.GPU_TRACE:
            columns = events.read(table, events.GPU_TRACE)
            self._kernels = events.add_gpu_trace(self.parts, columns, self.devices)
            self._events(columns, "gpu_trace")
            self.provides |= {"kernels", "timestamps", "copies", "copy_bytes", "launch_params"}
        elif table.report == rep.KERN_EXEC_TRACE:
            self._exec = table
        elif table.report == rep.MEM_SIZE_SUM:
            self._sizes(table)
        else:
            self._summary(table)

    def _damage(self, table: Table) -> None:
        rows = len(table.rows or [])
        if table.cut:
            self.truncated = True
            self.warnings.append(
                f"truncated file: the last row of {table.report} is cut short (the writer "
                f"died?): read its {rows:,} complete rows"
            )
        if table.skipped:
            self.warnings.append(f"skipped {table.skipped:,} rows of {table.report} whose "
                                 "field count differs from its header")  # fmt: skip

    def _summary(self, table: Table) -> None:
        rows, header = table.rows or [], table.header
        names = [row[header.index(*rep.NAME) or 0] for row in rows]
        if table.report == rep.API_SUM and not rep.is_cuda_api(table.path, next(iter(names), None)):
            return  # the OS runtime summary has the same header
        self.parts.add(
            "totals",
            len(rows),
            kind=_summary_kinds(table.report, names),
            name=self.parts.intern(names),
            count=_int_column(header, rows, rep.COUNT),
            total_ns=_int_column(header, rows, rep.TOTAL),
            min_ns=_int_column(header, rows, rep.MINIMUM),
            max_ns=_int_column(header, rows, rep.MAXIMUM),
        )
        self.provides.add("totals")
        self.counts[table.report] = self.counts.get(table.report, 0) + len(rows)

    def _sizes(self, table: Table) -> None:
        rows, header = table.rows or [], table.header
        name_at, total_at = header.index(*rep.NAME) or 0, header.index("Total (MB)") or 0
        counts = _int_column(header, rows, ("Count",))
        for row, count in zip(rows, counts, strict=True):
            size = parse_float(row[total_at]) * 1e6
            bytes_ = round(size) if math.isfinite(size) else -1
            self.copy_bytes[row[name_at]] = {"count": int(count), "bytes": bytes_}
        self.counts[table.report] = len(rows)
        self.provides.add("totals")

    def _events(self, columns: Any, key: str) -> None:
        self.counts[key] = columns.rows
        self.warnings.extend(columns.warnings)
        self.truncated |= columns.truncated

    def build(self, path: str, files: tuple[str, ...], schema: str) -> Trace:
        if self._exec is not None:
            columns = events.read(self._exec, events.KERN_EXEC)
            events.add_exec_trace(self.parts, columns, self._kernels)
            self._events(columns, "kern_exec_trace")
            self.provides |= {"kernels", "timestamps", "launch_params", "links"}
        if self.devices:
            self.provides.add("devices")
        timed = "timestamps" in self.provides
        meta = trace_meta(
            path,
            "nsys",
            schema=schema,
            vendor="nvidia",
            devices=tuple(self.devices[d] for d in sorted(self.devices)),
            event_counts=dict(self.counts),
            truncated=self.truncated,
            warnings=tuple(self.warnings),
            extra={"copy_bytes": self.copy_bytes} if self.copy_bytes else {},
            provides=frozenset(self.provides),
            clock="session" if timed else "",
            files=files,
        )
        return self.parts.build(meta)


def _summary_kinds(report: str, names: list[str]) -> Any:
    if report == rep.KERN_SUM:
        return np.full(len(names), KERNEL, np.int8)
    if report == rep.API_SUM:
        return np.full(len(names), API, np.int8)
    return np.array([MEMSET if "memset" in n.lower() else MEMCPY for n in names], np.int8)


def _int_column(header: Header, rows: list[list[str]], spellings: tuple[str, ...]) -> I64:
    at = header.index(*spellings)
    if at is None:
        return np.full(len(rows), -1, np.int64)
    return np.array([parse_int(row[at]) for row in rows], np.int64)
