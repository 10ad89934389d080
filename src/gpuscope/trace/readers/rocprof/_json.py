"""rocprof v1 `results.json`: the Chrome trace tblextr.py writes from its SQLite tables.

Tracks are fixed pids: 0 "Markers and Ranges" (ROCTX), 1 "COPY", 2 "CPU HIP API", 3 "CPU HSA API",
6+N "GPU<N>" (N = the device id) and 6+N+512 the barrier packets of GPU N. Every field of an
`X` event is a string; `ts`/`dur` are µs (integer-divided, absolute or relative to the trace
start depending on the version), so times come from `args.BeginNs/EndNs` (exact ns). Links come
from the flow events (see `_flows`). The file is written as it goes: an aborted run leaves
a fragment, and `otherData` (the rocminfo dump) closes the file with duplicate keys.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace._jsonstream import TAIL_CUT, EventStream, Progress, StreamReport
from gpuscope.trace.model import ANNOTATION, HSA, KERNEL, MEMCPY, MEMSET, RUNTIME
from gpuscope.trace.readers.rocprof._dispatch import LAUNCH_COLUMNS, launch_params
from gpuscope.trace.readers.rocprof._flows import Flows, Track, launching, link_flows
from gpuscope.trace.readers.rocprof._jsonevents import COPY_PID, GPU_BASE_PID, HSA_PID, Collector
from gpuscope.trace.readers.rocprof._piece import (
    BARRIER_NAMES,
    TRUNCATED,
    Piece,
    Table,
    copy_kinds,
    full,
    strip_kd,
)
from gpuscope.trace.readers.rocprof._sizes import data_sizes, sizes_from_calls
from gpuscope.trace.readers.rocprof._sysinfo import agents_from_other_data

# tblextr.py's label_json() writes exactly this, which no other tool does
_LABEL = re.compile(
    rb'\{"args":\{"name":"(CPU HIP API|CPU HSA API|COPY|Markers and Ranges|GPU\d+)"\},'
    rb'"ph":"M","pid":\d+,"name":"process_name"'
)


def is_rocprof_json(head: bytes) -> bool:
    return head.lstrip()[:1] in (b"{", b",") and _LABEL.search(head) is not None


def read_json(path: str, progress: Progress | None = None) -> Piece:
    _check_start(path)
    collector = Collector()
    stream = EventStream(path, collector.decode, progress)
    for batch in stream:
        collector.add(batch)
    report = stream.report
    if not collector.labels and not collector.parts:
        raise ReaderError("the traceEvents array holds no rocprof events")
    if report.truncated and not set(collector.parts) - {"flows"}:
        raise ReaderError("results.json is cut short (or damaged) before its first event")
    piece = _PieceBuilder(path, collector.columns(), collector.labels).build()
    _add_report(piece, report, collector.loose)
    return piece


def _add_report(piece: Piece, report: StreamReport, loose: int) -> None:
    """Devices from the closing rocminfo dump; what the stream had to skip or repair."""
    piece.agents = agents_from_other_data(report.header.get("otherData"))
    if piece.agents:
        piece.provides.add("devices")
    if report.truncated:
        piece.truncated = True
        piece.warnings.insert(0, f"{TRUNCATED}: it ends in the middle of the event array "
                              f"(the run stopped while writing it?); dropped the last "
                              f"{report.dropped_bytes:,} bytes")  # fmt: skip
    if report.tail_cut:
        piece.truncated = True
        piece.warnings.insert(0, TAIL_CUT)
    if report.repairs:
        piece.warnings.append(report.repairs.warning())
    if loose:
        piece.warnings.append(f"skipped {loose:,} events with unreadable fields")


def _check_start(path: str) -> None:
    head = _sniff.head(path, 1 << 16).lstrip()
    if head.startswith(b","):
        raise ReaderError("a fragment of rocprof's results.json: it starts with ',' where "
                          "'{ \"traceEvents\":[' should be (the profiled run stopped while "
                          "writing it?)")  # fmt: skip


class _PieceBuilder:
    """From the columns of every track to the tables of a Piece."""

    def __init__(self, path: str, columns: dict[str, dict[str, Any]], labels: dict[int, str]):
        self.path, self.columns, self.labels = path, columns, labels
        self.warnings: list[str] = []
        self.relative = False

    def build(self) -> Piece:
        ops = self._ops()
        host = self._host()
        gpu, launch = self._gpu(ops, host)
        piece = Piece(
            self.path,
            "json/relative-ts" if self.relative else "json",
            kind="json",
            gpu=gpu,
            launch=launch,
            host=host[0] if host is not None else None,
            markers=self._markers(),
            warnings=self.warnings,
            timed=True,
        )
        piece.provides = self._provides(piece)
        return piece

    def _times(self, cols: dict[str, Any]) -> tuple[Any, Any]:
        """ns from args.BeginNs/EndNs; µs ts/dur × 1000 only where those are missing."""
        begin, end = cols["begin"], cols["end"]
        exact = (begin >= 0) & (end >= begin)
        if (~exact).any():
            self.warnings.append(f"{int((~exact).sum()):,} events have no BeginNs/EndNs: their "
                                 "times are the µs ts/dur (1 µs resolution)")  # fmt: skip
        if exact.any():
            offset = begin[exact] - cols["ts"][exact] * 1000
            self.relative |= bool(np.median(offset) >= 1_000_000)
        start = np.where(exact, begin, cols["ts"] * 1000)
        return start, np.where(exact, end - begin, np.maximum(cols["dur_us"], 0) * 1000)

    def _ops(self) -> dict[str, Any] | None:
        cols = self.columns.get("ops")
        if cols is None:
            return None
        keep = ~np.isin(np.array(cols["name"], object), list(BARRIER_NAMES))
        is_kernel = cols["pid"] >= GPU_BASE_PID
        # dispatch records and op-trace kernels describe the same kernels: keep one kind
        if (is_kernel & ~cols["dispatch"]).any():
            keep &= ~(is_kernel & cols["dispatch"])
        return _select(cols, keep)

    def _host(self) -> tuple[Table, dict[str, Any]] | None:
        cols = self.columns.get("host")
        if cols is None:
            return None
        cols = _select(cols, np.array(cols["name"], object) != "hsa_dispatch")  # not a call
        start, dur = self._times(cols)
        domain = np.where(cols["pid"] == HSA_PID, HSA, RUNTIME).astype(np.int8)
        table = Table(
            cols["name"], {"start": start, "dur": dur, "tid": cols["lane"], "domain": domain}
        )
        return table, cols

    def _gpu(
        self, ops: dict[str, Any] | None, host: tuple[Table, dict[str, Any]] | None
    ) -> tuple[Table | None, dict[str, Any] | None]:
        if ops is None:
            return None, None
        start, dur = self._times(ops)
        kind = _op_kinds(ops)
        names = ops["name"]
        table = Table(
            strip_kd(names),
            {
                "kind": kind,
                "start": start,
                "dur": dur,
                "device": ops["device"],
                "stream": ops["stream"],
                "copy": copy_kinds(names, kind),
            },
        )
        self._link(table, ops, host)
        return table, _launch(ops, kind)

    def _link(
        self, gpu: Table, ops: dict[str, Any], host: tuple[Table, dict[str, Any]] | None
    ) -> None:
        flows = self.columns.get("flows")
        size = len(gpu)
        gpu.columns["correlation"] = full(size, -1)
        sizes, memory = data_sizes(ops["data"])
        gpu.columns["host_memory"] = memory
        if host is None or flows is None:
            gpu.columns["bytes"] = np.where(gpu.columns["kind"] == MEMCPY, sizes, -1)
            return
        table, cols = host
        host_corr, op_corr = link_flows(
            Flows(flows["id"], flows["phase"], flows["pid"], flows["tid"], flows["ts"]),
            Track(cols["pid"], cols["lane"], cols["ts"], cols["dur_us"]),
            launching(cols["name"]),
            Track(ops["pid"], ops["lane"], ops["ts"], ops["dur_us"]),
        )
        table.columns["correlation"] = host_corr
        gpu.columns["correlation"] = op_corr
        span = Track(cols["pid"], cols["lane"], table.columns["start"], table.columns["dur"])
        called = sizes_from_calls(
            gpu.columns["kind"], gpu.columns["start"], op_corr, host_corr, cols["call"], span
        )
        known = np.where(sizes >= 0, sizes, called)
        gpu.columns["bytes"] = np.where(gpu.columns["kind"] == MEMCPY, known, -1)

    def _markers(self) -> Table | None:
        cols = self.columns.get("markers")
        if cols is None:
            return None
        start, dur = self._times(cols)
        size = len(cols["name"])
        return Table(
            cols["name"],
            {
                "kind": np.full(size, ANNOTATION, np.int8),
                "start": start,
                "dur": np.where(dur == 1, 0, dur),  # a roctxMark is written as [t, t + 1]
                "tid": cols["lane"],
            },
        )

    def _provides(self, piece: Piece) -> set[str]:
        labels = set(self.labels.values())
        found = set()
        if any(re.fullmatch(r"GPU\d+", label) for label in labels) or piece.kernels():
            found |= {"kernels", "timestamps"}
        if labels & {"CPU HIP API", "CPU HSA API"} or piece.host is not None:
            found |= {"host_api", "links", "copies", "timestamps"}
        if "Markers and Ranges" in labels or piece.markers is not None:
            found.add("markers")
        gpu = piece.gpu
        if gpu is not None and (gpu.columns["bytes"] >= 0).any():
            found.add("copy_bytes")
        if gpu is not None and (gpu.columns["kind"] != KERNEL).any():
            found.add("copies")
        if piece.launch is not None:
            found.add("launch_params")
        return found


def _select(cols: dict[str, Any], keep: Any) -> dict[str, Any]:
    positions = np.flatnonzero(keep)
    out: dict[str, Any] = {}
    for key, value in cols.items():
        out[key] = [value[i] for i in positions] if isinstance(value, list) else value[keep]
    return out


def _op_kinds(ops: dict[str, Any]) -> Any:
    on_copy_track = ops["pid"] == COPY_PID
    fill = np.array(["Fill" in name for name in ops["name"]], bool)
    kind = np.where(on_copy_track, np.where(fill, MEMSET, MEMCPY), KERNEL)
    return kind.astype(np.int8)


def _launch(ops: dict[str, Any], kind: Any) -> dict[str, Any] | None:
    """Launch parameters of dispatch records (they carry results.csv's columns)."""
    if not (ops["dispatch"] & (kind == KERNEL)).any():
        return None
    return launch_params({key: ops[key] for key in LAUNCH_COLUMNS})
