"""rpd2tracing.py's Chrome-trace JSON of an `.rpd` (a bare array `[ {}, …]`, or the same under
`{"traceEvents": …}` with `--format object`).

Process metadata names each GPU `GPU<gpuId>`; ops are X events on that pid with `tid` = queue
and `args.desc` = op type; API calls are X events on the OS pid / tid with `args.desc` = their
arguments; ROCTX ranges are X events whose name and desc are both the message, marks are `i`
events. `ts` / `dur` are µs as strings (the 2024 exporter writes `start/1000` in SQL integer
arithmetic, so whole µs; newer ones a decimal). `s` / `f` flow pairs (`cat` "api_op") link a
call to its op: the `f` sits at the op's start, the `s` at min(call end - 2 µs, op start) on the
calling thread. Nothing gives copy sizes or launch parameters.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from typing import Any

import msgspec
import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff, _sql
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._copies import copy_kind
from gpuscope.trace._jsonstream import TAIL_CUT, EventStream, Progress, StreamReport
from gpuscope.trace.model import ANNOTATION, I64, MEMCPY, UNKNOWN_MEMORY, Device, Trace
from gpuscope.trace.readers.kineto import text_us_to_ns
from gpuscope.trace.readers.rpd import _vocab as vocab

_START = re.compile(rb'^\s*(\{\s*"traceEvents"\s*:\s*)?\[\s*\{\s*\}')
_RPD_NAMES = re.compile(rb'"args"\s*:\s*\{\s*"name"\s*:\s*"(GPU\d+|Hip \d+)"')
_GPU_PROCESS = re.compile(r"^GPU(\d+)$")
_FLOW_SLACK_NS = 2000  # the exporter puts a flow's start 2 µs before the call's end


class _Args(msgspec.Struct, gc=False):
    desc: Any = None
    name: Any = None


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: Any = -1
    tid: Any = -1
    ts: Any = 0
    dur: Any = 0
    id: Any = -1
    args: _Args | None = None


_decode = msgspec.json.Decoder(list[_Event]).decode


def sniff(path: str) -> bool:
    """`[ {}` (or `{"traceEvents": [ {}`) then GPU<n> / `Hip <tid>` names: rpd2tracing.

    rocprof v1's results.json starts the same way; its `BeginNs` args and `CPU HIP API` process
    tell it apart. A torch.profiler trace never starts its events with an empty object.
    """
    head = _sniff.head(path, 1 << 16)
    if not _START.match(head) or b'"BeginNs"' in head or b'"CPU HIP API"' in head:
        return False
    return _RPD_NAMES.search(head) is not None or b'"args":{"desc"' in head


class _Collector:
    """Events of the file sorted into ops, calls, ranges and flows (lists of columns)."""

    def __init__(self) -> None:
        self.gpu_pids: set[str] = set()
        self.columns: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, events: list[_Event]) -> None:
        for event in events:
            self.counts[event.ph or "(none)"] += 1
            if event.ph == "M":
                self._metadata(event)
            elif event.ph == "X":
                self._complete(event)
            elif event.ph == "i":
                self._put("ranges", event, dur=0)
            elif event.ph in ("s", "f") and event.cat == "api_op":
                self._put("starts" if event.ph == "s" else "finishes", event, flow=event.id)

    def _metadata(self, event: _Event) -> None:
        name = event.args.name if event.args else None
        if event.name == "process_name" and isinstance(name, str) and _GPU_PROCESS.match(name):
            self.gpu_pids.add(str(event.pid))

    def _complete(self, event: _Event) -> None:
        desc = event.args.desc if event.args else None
        desc = desc if isinstance(desc, str) else ""
        if str(event.pid) in self.gpu_pids:
            self._put("ops", event, dur=event.dur, desc=desc)
        elif desc and desc == event.name:
            self._put("ranges", event, dur=event.dur)
        else:
            self._put("calls", event, dur=event.dur)

    def _put(self, table: str, event: _Event, **more: Any) -> None:
        columns = self.columns[table]
        for key, value in (("name", event.name), ("pid", event.pid), ("tid", event.tid)):
            columns[key].append(value)
        columns["ts"].append(event.ts)
        for key, value in more.items():
            columns[key].append(value)


def read(path: str, progress: Progress | None = None) -> Trace:
    collector = _Collector()
    stream = EventStream(path, _decode_batch, progress)
    for batch in stream:
        collector.add(batch)
    return _build(path, collector, stream.report)


def _decode_batch(text: bytes | bytearray) -> list[_Event]:
    events: list[_Event] = _decode(text)
    return events


def _build(path: str, found: _Collector, report: StreamReport) -> Trace:
    if not any(found.columns.get(name) for name in ("ops", "calls", "ranges")):
        cut = " (the file is truncated)" if report.truncated else ""
        raise ReaderError(f"rpd2tracing JSON without any op, API call or marker{cut}")
    parts = TraceParts()
    tables = {name: _arrays(found.columns.get(name, {})) for name in _TABLES}
    corr_ops, corr_calls = _links(tables)
    _add_ops(parts, tables["ops"], corr_ops, found.counts)
    _add_calls(parts, tables["calls"], corr_calls, found.counts)
    _add_ranges(parts, tables["ranges"])
    trace = parts.build(trace_meta(path, "rpd"))
    return _with_meta(trace, path, found, report)


_TABLES = ("ops", "calls", "ranges", "starts", "finishes")
_TEXT = ("name", "desc")


def _arrays(columns: dict[str, list[Any]]) -> dict[str, Any]:
    """Numeric columns as int64 (times in ns); names and descs stay lists."""
    result: dict[str, Any] = {key: columns.get(key, []) for key in _TEXT}
    size = len(columns.get("ts", []))
    for key in ("pid", "tid", "flow"):
        result[key] = _ints(columns.get(key, [-1] * size))
    result["ts"] = us_to_ns(columns.get("ts", []))
    result["dur"] = us_to_ns(columns.get("dur", [0] * size))
    return result


def _ints(values: list[Any]) -> I64:
    try:
        return np.array(values, np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.array([_as_int(v) for v in values], np.int64)


def _as_int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # null, "abc", NaN, Infinity
        return -1
    return number if -(2**63) <= number < 2**63 else -1


_US_LIMIT = 2**63 // 1000  # µs past it wrap when ×1000 in int64


def us_to_ns(values: list[Any]) -> I64:
    """µs given as integer strings / ints (×1000), else decimal text or floats, exactly."""
    if not values:
        return np.zeros(0, np.int64)
    if {type(v) for v in values} <= {str, int}:
        try:
            us = np.array(values, np.int64)
            if len(us) and int(us.min()) > -_US_LIMIT and int(us.max()) < _US_LIMIT:
                result: I64 = us * 1000
                return result
        except (ValueError, OverflowError):
            pass
    return np.array([text_us_to_ns(v) for v in values], np.int64)


def _links(tables: dict[str, Any]) -> tuple[I64, I64]:
    """Correlation per op and per call: the id of the (first) flow that joins them."""
    ops, calls = tables["ops"], tables["calls"]
    starts, finishes = tables["starts"], tables["finishes"]
    call_of_flow = _call_of_start(calls, starts)
    call_corr = np.full(len(calls["ts"]), -1, np.int64)
    linked = call_of_flow >= 0
    order = np.argsort(-starts["flow"][linked])  # the smallest flow id wins: written last
    call_corr[call_of_flow[linked][order]] = starts["flow"][linked][order]
    op_corr = np.full(len(ops["ts"]), -1, np.int64)
    op_at = _op_of_finish(ops, finishes)
    start_at = _sql.lookup(starts["flow"], finishes["flow"])
    ok = (op_at >= 0) & (start_at >= 0)
    calls_hit = call_of_flow[start_at[ok]]
    op_corr[op_at[ok]] = np.where(calls_hit >= 0, call_corr[np.maximum(calls_hit, 0)], -1)
    return op_corr, call_corr


def _op_of_finish(ops: dict[str, Any], finishes: dict[str, Any]) -> I64:
    """The op each `f` lands on: same start, same GPU pid and queue."""
    at = _sql.lookup(ops["ts"], finishes["ts"])
    if not len(ops["ts"]):  # flow ends but no GPU ops
        return at
    safe = np.maximum(at, 0)
    same = (ops["pid"][safe] == finishes["pid"]) & (ops["tid"][safe] == finishes["tid"])
    result: I64 = np.where((at >= 0) & same, at, -1) if len(ops["ts"]) else at
    return result


def _call_of_start(calls: dict[str, Any], starts: dict[str, Any]) -> I64:
    """The call each `s` comes from: the last call on its thread starting before it (+2 µs)."""
    result = np.full(len(starts["ts"]), -1, np.int64)
    for pid, tid in set(zip(starts["pid"].tolist(), starts["tid"].tolist(), strict=True)):
        mine = np.flatnonzero((calls["pid"] == pid) & (calls["tid"] == tid))
        flows = np.flatnonzero((starts["pid"] == pid) & (starts["tid"] == tid))
        if len(mine) == 0:
            continue
        order = mine[np.argsort(calls["ts"][mine], kind="stable")]
        pos = np.searchsorted(calls["ts"][order], starts["ts"][flows] + _FLOW_SLACK_NS, "right")
        result[flows] = np.where(pos > 0, order[np.maximum(pos - 1, 0)], -1)
    return result


def _add_ops(parts: TraceParts, ops: dict[str, Any], corr: I64, counts: dict[str, int]) -> None:
    kinds = np.array([_kind(desc) for desc in ops["desc"]], np.int64)
    keep = kinds >= 0
    counts["skipped_op"] = int((~keep).sum())
    names = [n for n, k in zip(ops["name"], keep, strict=True) if k]
    copies = np.array([copy_kind(d) for d, k in zip(ops["desc"], keep, strict=True) if k], np.int8)
    size = len(names)
    parts.add(
        "gpu",
        size,
        kind=kinds[keep].astype(np.int8),
        name=parts.intern(names),
        start=ops["ts"][keep],
        dur=ops["dur"][keep],
        device=ops["pid"][keep],
        stream=ops["tid"][keep],
        correlation=corr[keep],
        copy=np.where(kinds[keep] == MEMCPY, copies, -1),
        host_memory=np.full(size, UNKNOWN_MEMORY, np.int8),
    )


def _kind(op_type: str) -> int:
    kind = vocab.op_kind(op_type)
    return -1 if kind is None else kind


def _add_calls(parts: TraceParts, calls: dict[str, Any], corr: I64, counts: dict[str, int]) -> None:
    domains = np.array([vocab.api_domain(n, "", 0) for n in calls["name"]], np.int64)
    overhead = np.array([vocab.is_overhead(n) for n in calls["name"]], bool)
    keep = (domains >= 0) & ~overhead
    counts["tracer_overhead"] = int(overhead.sum())
    parts.add(
        "host",
        int(keep.sum()),
        name=parts.intern(n for n, k in zip(calls["name"], keep, strict=True) if k),
        start=calls["ts"][keep],
        dur=calls["dur"][keep],
        tid=calls["tid"][keep],
        correlation=corr[keep],
        domain=domains[keep].astype(np.int8),
    )


def _add_ranges(parts: TraceParts, ranges: dict[str, Any]) -> None:
    size = len(ranges["name"])
    parts.add(
        "ops",
        size,
        kind=np.full(size, ANNOTATION, np.int8),
        name=parts.intern(ranges["name"]),
        start=ranges["ts"],
        dur=ranges["dur"],
        tid=ranges["tid"],
    )


def _with_meta(trace: Trace, path: str, found: _Collector, report: StreamReport) -> Trace:
    gpus = sorted(int(p) for p in found.gpu_pids if p.lstrip("-").isdigit())
    warnings = []
    if report.truncated:
        warnings.append(
            f"truncated file: it ends in the middle of the event array; read the complete "
            f"events, dropped the last {report.dropped_bytes:,} bytes"
        )
    if report.tail_cut:
        warnings.append(TAIL_CUT)
    if report.repairs:
        warnings.append(report.repairs.warning())
    meta = trace_meta(
        path,
        "rpd",
        schema="rpd2tracing",
        vendor="amd",
        devices=tuple(Device(g, f"GPU{g}") for g in gpus),
        event_counts=dict(found.counts),
        truncated=report.truncated or report.tail_cut,
        warnings=tuple(warnings),
        provides=frozenset({"kernels", "timestamps", "copies", "host_api", "links", "markers"}),
        clock="boot",
    )
    return dataclasses.replace(trace, meta=meta)
