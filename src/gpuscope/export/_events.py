"""One `Trace` as Chrome trace events, produced in chunks.

Layout: one process for the host (one thread per OS thread: API calls, CPU operators, user
ranges and Python functions nest on it), one process per device (one thread per stream or
queue, plus `annotations`, `synchronization` and `counters`). Launch→kernel flow arrows join a
host API call and the device work with its correlation id. Per-dispatch counters are in each
kernel's args and, for up to `counter_tracks_max` counter names, counter tracks on the device
(the value while the dispatch that started last runs, 0 after it ends).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.export._tracks import Tracks, group_bounds, lanes
from gpuscope.trace.model import COPY_KINDS, DOMAINS, I64, KERNEL, MEMCPY, Trace

CHUNK = 50_000
SYNTHETIC_DUR_NS = 1_000  # a dispatch without a recorded duration, on a synthetic timeline
_GPU_CATS = {KERNEL: "kernel", MEMCPY: "gpu_memcpy"}
_OP_CATS = ("cpu_op", "user_annotation", "python_function")


@dataclass
class Counts:
    """What was written (and left out) for one trace."""

    written: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, n: int) -> None:
        if n:
            self.written[key] = self.written.get(key, 0) + n

    def drop(self, key: str, n: int) -> None:
        if n:
            self.left_out[key] = self.left_out.get(key, 0) + n


class TraceEvents:
    """The events of one trace; timeline ts = trace time + `shift_ns` (≥ 0 by construction)."""

    def __init__(
        self,
        trace: Trace,
        tracks: Tracks,
        label: str,
        shift_ns: int,
        flow_base: int,
        counter_tracks_max: int = 64,
    ) -> None:
        self.trace = trace
        self.tracks = tracks
        self.label = label
        self.shift = shift_ns
        self.flow_base = flow_base
        self.counter_tracks_max = counter_tracks_max
        self.counts = Counts()
        self._names: dict[int, str] = {}
        self.gpu_start, self.synthetic = gpu_times(trace)
        self._host_pid: int | None = None
        self._device_pids: dict[int, int] = {}
        self.host_tid = np.full(len(trace.host), -1, np.int64)
        self.gpu_tid = np.full(len(trace.gpu), -1, np.int64)

    def chunks(self) -> Iterator[list[str]]:
        """Every event of the trace, in chunks of lines."""
        yield from self._host_slices()
        yield from self._gpu_slices()
        yield from self._annotations()
        yield from self._syncs()
        yield from self._flows()
        yield from self._counters()

    # --- names and processes -------------------------------------------------------------

    def name(self, index: int) -> str:
        found = self._names.get(index)
        if found is None:
            text = self.trace.names[index] if 0 <= index < len(self.trace.names) else ""
            found = _json_str(text or "[no name]")
            self._names[index] = found
        return found

    def host_pid(self) -> int:
        if self._host_pid is None:
            self._host_pid = self.tracks.process(f"{self.label} · host")
        return self._host_pid

    def device_pid(self, device: int) -> int:
        pid = self._device_pids.get(device)
        if pid is None:
            pid = self.tracks.process(f"{self.label} · {_device_name(self.trace, device)}")
            self._device_pids[device] = pid
        return pid

    # --- host ----------------------------------------------------------------------------

    def _host_slices(self) -> Iterator[list[str]]:
        host, ops = self.trace.host, self.trace.ops
        source = np.concatenate([np.zeros(len(host), np.int8), np.ones(len(ops), np.int8)])
        row = np.concatenate([np.arange(len(host)), np.arange(len(ops))]).astype(np.int64)
        start = np.concatenate([host.start, ops.start])
        dur = np.maximum(np.concatenate([host.dur, ops.dur]), 0)
        tid = np.concatenate([host.tid, ops.tid])
        timed = start >= 0
        self.counts.drop("host events without a time", int((~timed).sum()))
        if not timed.any():
            return
        order = np.flatnonzero(timed)[np.lexsort((-dur[timed], start[timed], tid[timed]))]
        out_tid = self._lane_tids(self.host_pid(), tid[order], start[order], dur[order], _thread)
        is_host = source[order] == 0
        self.host_tid[row[order][is_host]] = out_tid[is_host]
        for part in _chunks(len(order)):
            index = order[part]
            yield self._host_lines(source[index], row[index], out_tid[part])

    def _host_lines(self, source: Any, row: Any, tid: Any) -> list[str]:
        host, ops, pid, shift = self.trace.host, self.trace.ops, self.host_pid(), self.shift
        lines = []
        for src, r, t in zip(source.tolist(), row.tolist(), tid.tolist(), strict=True):
            if src == 0:
                start, dur, name = int(host.start[r]), int(host.dur[r]), int(host.name[r])
                cat = DOMAINS[host.domain[r]] if 0 <= host.domain[r] < len(DOMAINS) else "api"
                args = _corr_args(int(host.correlation[r]), int(host.external_id[r]))
            else:
                start, dur, name = int(ops.start[r]), int(ops.dur[r]), int(ops.name[r])
                kind = int(ops.kind[r])
                cat = _OP_CATS[kind] if 0 <= kind < len(_OP_CATS) else "cpu_op"
                args = self._op_args(r)
            lines.append(_slice(cat, self.name(name), pid, t, start + shift, max(dur, 0), args))
        self.counts.add("host slices", len(lines))
        return lines

    def _op_args(self, row: int) -> str:
        ops = self.trace.ops
        parts = []
        if ops.external_id[row] >= 0:
            parts.append(f'"external_id":{int(ops.external_id[row])}')
        if ops.input_dims[row] >= 0:
            parts.append(f'"input_dims":{self.name(int(ops.input_dims[row]))}')
        if ops.input_types[row] >= 0:
            parts.append(f'"input_types":{self.name(int(ops.input_types[row]))}')
        return ",".join(parts)

    # --- device --------------------------------------------------------------------------

    def _gpu_slices(self) -> Iterator[list[str]]:
        gpu = self.trace.gpu
        start = self.gpu_start
        timed = start >= 0
        self.counts.drop("device events without a time", int((~timed).sum()))
        rows = np.flatnonzero(timed)
        if not len(rows):
            return
        dur = self._dispatch_dur(rows)
        sort = np.lexsort((-dur, start[rows], gpu.stream[rows], gpu.device[rows]))
        order, odur = rows[sort], dur[sort]
        out_tid = np.empty(len(order), np.int64)
        for lo, hi in group_bounds(gpu.device[order].astype(np.int64)):
            pid = self.device_pid(int(gpu.device[order[lo]]))
            part = order[lo:hi]
            out_tid[lo:hi] = self._lane_tids(
                pid, gpu.stream[part], start[part], odur[lo:hi], _stream
            )
        self.gpu_tid[order] = out_tid
        extras = _GpuExtras(self)
        for cut in _chunks(len(order)):
            yield self._gpu_lines(order[cut], odur[cut], out_tid[cut], extras)

    def _synthetic_dur(self, rows: Any) -> I64:
        dur = self.trace.gpu.dur[rows]
        result: I64 = np.where(dur >= 0, dur, SYNTHETIC_DUR_NS).astype(np.int64)
        return result

    def _gpu_lines(self, rows: Any, dur: Any, tid: Any, extras: _GpuExtras) -> list[str]:
        gpu, shift, start = self.trace.gpu, self.shift, self.gpu_start
        lines = []
        for r, d, t in zip(rows.tolist(), dur.tolist(), tid.tolist(), strict=True):
            kind = int(gpu.kind[r])
            cat = _GPU_CATS.get(kind, "gpu_memset")
            pid = self.device_pid(int(gpu.device[r]))
            args = extras.args(r)
            lines.append(
                _slice(cat, self.name(int(gpu.name[r])), pid, t, int(start[r]) + shift, d, args)
            )
        self.counts.add("device slices", len(lines))
        return lines

    def _annotations(self) -> Iterator[list[str]]:
        table = self.trace.gpu_annotations
        yield from self._device_side(table, "annotations", "gpu_user_annotation", "annotations")

    def _syncs(self) -> Iterator[list[str]]:
        yield from self._device_side(self.trace.syncs, "synchronization", "sync", "syncs")

    def _device_side(self, table: Any, thread: str, cat: str, key: str) -> Iterator[list[str]]:
        timed = np.flatnonzero(table.start >= 0)
        self.counts.drop(f"{key} without a time", len(table) - len(timed))
        if not len(timed):
            return
        dur = np.maximum(table.dur[timed], 0)
        order = np.lexsort((-dur, table.start[timed], table.device[timed]))
        rows, dur = timed[order], dur[order]
        lines = []
        for lo, hi in group_bounds(table.device[rows].astype(np.int64)):
            pid = self.device_pid(int(table.device[rows[lo]]))
            part = rows[lo:hi]
            lane = lanes(table.start[part], table.start[part] + dur[lo:hi])
            tids = self.tracks.lane_tids(pid, thread, int(lane.max()) + 1)
            for r, d, k in zip(part.tolist(), dur[lo:hi].tolist(), lane.tolist(), strict=True):
                ts = int(table.start[r]) + self.shift
                lines.append(_slice(cat, self.name(int(table.name[r])), pid, tids[k], ts, d, ""))
        self.counts.add(key, len(lines))
        yield lines

    def _lane_tids(self, pid: int, keys: Any, start: Any, dur: Any, naming: Any) -> I64:
        """The output tid of each row of one process's rows (sorted by key, start, -dur)."""
        out = np.empty(len(keys), np.int64)
        for lo, hi in group_bounds(np.asarray(keys, np.int64)):
            lane = lanes(start[lo:hi], start[lo:hi] + dur[lo:hi])
            tids = self.tracks.lane_tids(pid, naming(int(keys[lo])), int(lane.max()) + 1)
            out[lo:hi] = np.asarray(tids, np.int64)[lane]
        return out

    # --- flows and counters --------------------------------------------------------------

    def _flows(self) -> Iterator[list[str]]:
        host, gpu = self.trace.host, self.trace.gpu
        gpu_rows, host_rows = launch_links(host.correlation, gpu.correlation)
        placed = (self.host_tid[host_rows] >= 0) & (self.gpu_tid[gpu_rows] >= 0)
        gpu_rows, host_rows = gpu_rows[placed], host_rows[placed]
        if not len(gpu_rows):
            return
        lines = []
        host_pid = self.host_pid()
        for h in np.unique(host_rows).tolist():
            ts = int(host.start[h]) + max(int(host.dur[h]), 0) // 2 + self.shift
            lines.append(_flow("s", self.flow_base + h, host_pid, int(self.host_tid[h]), ts))
        dur = np.maximum(gpu.dur, 0)
        for g, h in zip(gpu_rows.tolist(), host_rows.tolist(), strict=True):
            ts = int(self.gpu_start[g]) + int(dur[g]) // 2 + self.shift
            pid = self.device_pid(int(gpu.device[g]))
            lines.append(_flow("f", self.flow_base + h, pid, int(self.gpu_tid[g]), ts))
        self.counts.add("flow events", len(lines))
        yield lines

    def _counters(self) -> Iterator[list[str]]:
        counters, gpu = self.trace.counters, self.trace.gpu
        keep = counters.row >= 0
        keep[keep] = self.gpu_tid[counters.row[keep]] >= 0
        names = np.unique(counters.name[keep])
        if not len(names):
            return
        if len(names) > self.counter_tracks_max:
            self.counts.notes.append(
                f"{len(names)} counter names: values in each dispatch's args only (counter "
                f"tracks for at most {self.counter_tracks_max})"
            )
            return
        units = self.trace.meta.counter_units
        for name in names.tolist():
            rows = counters.row[keep & (counters.name == name)]
            values = counters.value[keep & (counters.name == name)]
            unit = units.get(self.trace.names[name], "") or "value"
            for device in np.unique(gpu.device[rows]).tolist():
                on = gpu.device[rows] == device
                yield self._counter_lines(name, unit, rows[on], values[on], device)

    def _counter_lines(
        self, name: int, unit: str, rows: Any, values: Any, device: int
    ) -> list[str]:
        start = self.gpu_start[rows]
        end = start + self._dispatch_dur(rows)
        order = np.argsort(start, kind="stable")
        start, end, values = start[order], end[order], values[order]
        pid = self.device_pid(device)
        tid = self.tracks.thread(pid, "counters")
        key = _json_str(unit)
        lines = []
        following = [*start[1:].tolist(), None]
        for s, e, v, nxt in zip(
            start.tolist(), end.tolist(), values.tolist(), following, strict=True
        ):
            if not np.isfinite(v):
                continue
            lines.append(_counter(self.name(name), pid, tid, s + self.shift, key, v))
            if nxt is None or e < nxt:
                lines.append(_counter(self.name(name), pid, tid, e + self.shift, key, 0.0))
        self.counts.add("counter samples", len(lines))
        return lines

    def _dispatch_dur(self, rows: Any) -> I64:
        if self.synthetic:
            return self._synthetic_dur(rows)
        dur: I64 = np.maximum(self.trace.gpu.dur[rows], 0)
        return dur


class _GpuExtras:
    """Per-dispatch args: launch parameters and counters, looked up by row."""

    def __init__(self, events: TraceEvents) -> None:
        trace = events.trace
        self.events = events
        self.gpu = trace.gpu
        self.lp = trace.launch_params
        self.lp_row = np.full(len(trace.gpu), -1, np.int64)
        valid = (self.lp.row >= 0) & (self.lp.row < len(trace.gpu))
        self.lp_row[self.lp.row[valid]] = np.flatnonzero(valid)
        counters = trace.counters
        ok = (counters.row >= 0) & (counters.row < len(trace.gpu))
        order = np.flatnonzero(ok)[np.argsort(counters.row[ok], kind="stable")]
        self.c_order = order
        self.c_rows = counters.row[order]
        self.counters = counters

    def args(self, r: int) -> str:
        gpu = self.gpu
        parts = [f'"device":{int(gpu.device[r])}', f'"stream":{int(gpu.stream[r])}']
        if gpu.correlation[r] >= 0:
            parts.append(f'"correlation":{int(gpu.correlation[r])}')
        if gpu.kind[r] != KERNEL:
            if gpu.bytes[r] >= 0:
                parts.append(f'"bytes":{int(gpu.bytes[r])}')
            if 0 <= gpu.copy[r] < len(COPY_KINDS):
                parts.append(f'"copy":"{COPY_KINDS[gpu.copy[r]]}"')
        if self.events.synthetic:
            parts.append('"timeline":"synthetic (no timestamps recorded)"')
        lp = int(self.lp_row[r])
        if lp >= 0:
            parts.append(self._launch(lp))
        counters = self._counter_args(r)
        if counters:
            parts.append(counters)
        return ",".join(parts)

    def _launch(self, i: int) -> str:
        lp = self.lp
        grid = [int(lp.grid_x[i]), int(lp.grid_y[i]), int(lp.grid_z[i])]
        block = [int(lp.block_x[i]), int(lp.block_y[i]), int(lp.block_z[i])]
        parts = [f'"grid":{grid}', f'"block":{block}']
        for key in ("registers", "shared_mem", "scratch"):
            value = int(getattr(lp, key)[i])
            if value >= 0:
                parts.append(f'"{key}":{value}')
        return ",".join(parts)

    def _counter_args(self, r: int) -> str:
        if not len(self.c_rows):
            return ""
        lo = int(np.searchsorted(self.c_rows, r, "left"))
        hi = int(np.searchsorted(self.c_rows, r, "right"))
        if lo == hi:
            return ""
        items = []
        for i in self.c_order[lo:hi].tolist():
            value = float(self.counters.value[i])
            if np.isfinite(value):
                items.append(f"{self.events.name(int(self.counters.name[i]))}:{value!r}")
        return '"counters":{' + ",".join(items) + "}" if items else ""


def gpu_times(trace: Trace) -> tuple[I64, bool]:
    """Device start times; a source without timestamps gets its dispatches laid end to end."""
    gpu = trace.gpu
    if not len(gpu) or (gpu.start >= 0).any():
        return gpu.start, False
    dur = np.where(gpu.dur >= 0, gpu.dur, SYNTHETIC_DUR_NS).astype(np.int64)
    start: I64 = np.concatenate([[0], np.cumsum(dur)[:-1]]).astype(np.int64)
    return start, True


def launch_links(host_corr: I64, gpu_corr: I64) -> tuple[I64, I64]:
    """(gpu rows, host rows) joined by correlation id (the first host call of an id)."""
    ids, first = np.unique(host_corr, return_index=True)
    valid = ids >= 0
    ids, first = ids[valid], first[valid]
    gpu_rows = np.flatnonzero(gpu_corr >= 0)
    at = np.searchsorted(ids, gpu_corr[gpu_rows])
    at = np.minimum(at, max(len(ids) - 1, 0))
    hit = (ids[at] == gpu_corr[gpu_rows]) if len(ids) else np.zeros(len(gpu_rows), bool)
    return gpu_rows[hit].astype(np.int64), first[at[hit]].astype(np.int64)


def _chunks(size: int) -> Iterator[slice]:
    for lo in range(0, size, CHUNK):
        yield slice(lo, min(size, lo + CHUNK))


def _thread(tid: int) -> str:
    return f"thread {tid}" if tid >= 0 else "thread ?"


def _stream(stream: int) -> str:
    return f"stream {stream}" if stream >= 0 else "stream ?"


def _device_name(trace: Trace, device: int) -> str:
    if device < 0:
        return "GPU ?"
    found = next((d for d in trace.meta.devices if d.id == device), None)
    return f"GPU {device} {found.name}".rstrip() if found is not None else f"GPU {device}"


def _corr_args(correlation: int, external: int) -> str:
    parts = []
    if correlation >= 0:
        parts.append(f'"correlation":{correlation}')
    if external >= 0:
        parts.append(f'"external_id":{external}')
    return ",".join(parts)


def _slice(cat: str, name: str, pid: int, tid: int, ts: int, dur: int, args: str) -> str:
    return (
        f'{{"ph":"X","cat":"{cat}","name":{name},"pid":{pid},"tid":{tid},'
        f'"ts":{ts // 1000}.{ts % 1000:03d},"dur":{dur // 1000}.{dur % 1000:03d},'
        f'"args":{{{args}}}}}'
    )


def _flow(phase: str, flow_id: int, pid: int, tid: int, ts: int) -> str:
    bind = ',"bp":"e"' if phase == "f" else ""
    return (
        f'{{"ph":"{phase}","cat":"launch","name":"launch","id":{flow_id},"pid":{pid},'
        f'"tid":{tid},"ts":{ts // 1000}.{ts % 1000:03d}{bind}}}'
    )


def _counter(name: str, pid: int, tid: int, ts: int, key: str, value: float) -> str:
    return (
        f'{{"ph":"C","name":{name},"pid":{pid},"tid":{tid},'
        f'"ts":{ts // 1000}.{ts % 1000:03d},"args":{{{key}:{value!r}}}}}'
    )


def _json_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
