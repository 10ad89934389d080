"""`TraceFrame`: one `Trace` seen as DataFrames, one row per event.

    >>> import gpuscope
    >>> t = gpuscope.load("trace.json.gz")                        # doctest: +SKIP
    >>> k = t.kernels()                                           # one row per kernel dispatch
    >>> k.groupby("name").duration_ns.sum().nlargest(5)           # doctest: +SKIP
    >>> t.kernels(backend="polars")                               # doctest: +SKIP

Every table is built from the trace's numpy columns in one pass (no Python per row). Times are
int64 nanoseconds on the trace's own clock (`meta.clock`); a value the source does not record
is missing (NA / null), never -1 or 0.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from gpuscope.frames._columns import Column, Columns, Labels, Maybe, Text, frame
from gpuscope.trace.model import (
    ANNOTATION,
    COPY_KINDS,
    DOMAINS,
    KERNEL,
    MEMCPY,
    MEMSET,
    OP,
    Trace,
)

_OP_KINDS = ("op", "annotation", "python")
_HOST_MEMORY = ("pageable", "pinned")


class TraceFrame:
    """One trace (a rank / process) with a DataFrame per kind of event.

    `trace` is the vendor-neutral columnar `gpuscope.trace.model.Trace` underneath. Each table
    method takes `backend="pandas" | "polars" | "arrow"`.
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    @property
    def meta(self) -> Any:
        """Where the trace came from: format, vendor, devices, clock, reader warnings."""
        return self.trace.meta

    def __repr__(self) -> str:
        meta = self.trace.meta
        gpu = self.trace.gpu
        kernels = int((gpu.kind == KERNEL).sum())
        return (
            f"<TraceFrame {meta.path!r}: {meta.format} ({meta.vendor}), {kernels:,} kernels, "
            f"{len(gpu) - kernels:,} copies/memsets, {len(self.trace.host):,} API calls, "
            f"{len(self.trace.ops):,} CPU ops>"
        )

    @functools.cached_property
    def _labels(self) -> Labels:
        return Labels(self.trace.names)

    @functools.cached_property
    def _links(self) -> Any:
        from gpuscope.analysis.launch import link

        return link(self.trace)

    @functools.cached_property
    def _owners(self) -> Any:
        from gpuscope.analysis import owner_rows

        return owner_rows(self.trace, self._links)

    @functools.cached_property
    def _classes(self) -> Any:
        from gpuscope.analysis.categories import classify, load_rules

        return classify(self.trace, load_rules())

    def _names(self, codes: Any) -> Text:
        return Text(codes, self._labels)

    def _timed(self, table: Any, rows: Any) -> dict[str, Any]:
        start, dur = table.start[rows], table.dur[rows]
        known = dur >= 0
        return {
            "start_ns": start,
            "end_ns": Maybe(np.where(known, start + dur, -1), known),
            "duration_ns": Maybe(dur, known),
        }

    def _launching(self, rows: Any) -> dict[str, Any]:
        """The operator that launched each GPU row and the host call that did."""
        op_names = _at(self.trace.ops.name, self._owners[rows])
        calls = _at(self.trace.host.name, self._links.host_index[rows])
        return {"op": self._names(op_names), "launch_call": self._names(calls)}

    def kernels(self, backend: str = "pandas") -> Any:
        """One row per kernel dispatch: name, category (gpuscope's kernel categories), family,
        device, stream, start / end / duration (ns), correlation and External ids, the launching
        `op` (framework operator) and `launch_call` (runtime API), whether a graph launched it,
        and the launch configuration where the format records it (grid in blocks / work-groups,
        block in threads, shared memory / LDS bytes, registers per thread)."""
        return frame(self.kernel_columns(), backend)

    def kernel_columns(self) -> Columns:
        """The columns of `kernels()` as numpy arrays (and coded text)."""
        from gpuscope.analysis.categories import CATEGORIES

        gpu = self.trace.gpu
        rows = np.flatnonzero(gpu.kind == KERNEL)
        classes = self._classes
        family = classes.family[rows] if len(classes.family) == len(gpu) else np.full(len(rows), -1)
        return {
            "name": self._names(gpu.name[rows]),
            "category": Text(classes.category[rows], Labels(CATEGORIES)),
            "family": Text(family, Labels(classes.families)),
            "device": gpu.device[rows],
            "stream": Maybe.of(gpu.stream[rows]),
            **self._timed(gpu, rows),
            "correlation": Maybe.of(gpu.correlation[rows]),
            "external_id": Maybe.of(gpu.external_id[rows]),
            **self._launching(rows),
            "graph": self._links.graph[rows],
            **self._launch_params(rows),
        }

    def _launch_params(self, rows: Any) -> dict[str, Any]:
        params = self.trace.launch_params
        where = np.full(len(self.trace.gpu), -1, np.int64)
        where[params.row[params.row >= 0]] = np.flatnonzero(params.row >= 0)
        at = where[rows]
        found = at >= 0
        columns = {}
        for name in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                     "shared_mem", "registers", "scratch"):  # fmt: skip
            values = np.full(len(rows), -1, np.int64)
            values[found] = getattr(params, name)[at[found]]
            key = "shared_mem_bytes" if name == "shared_mem" else name
            key = "scratch_bytes" if name == "scratch" else key
            columns[key] = Maybe.of(values)
        return columns

    def copies(self, backend: str = "pandas") -> Any:
        """One row per memcpy and memset on the device: `kind` (HtoD, DtoH, DtoD, HtoH, PtoP,
        other, or memset), name, device, stream, times (ns), bytes, host memory (pageable or
        pinned), correlation id, the launching op and API call."""
        gpu = self.trace.gpu
        rows = np.flatnonzero((gpu.kind == MEMCPY) | (gpu.kind == MEMSET))
        copy = gpu.copy[rows].astype(np.int32)
        kind = np.where(gpu.kind[rows] == MEMSET, len(COPY_KINDS), copy)
        columns = {
            "kind": Text(kind, Labels((*COPY_KINDS, "memset"))),
            "name": self._names(gpu.name[rows]),
            "device": gpu.device[rows],
            "stream": Maybe.of(gpu.stream[rows]),
            **self._timed(gpu, rows),
            "bytes": Maybe.of(gpu.bytes[rows]),
            "host_memory": Text(gpu.host_memory[rows].astype(np.int32), Labels(_HOST_MEMORY)),
            "correlation": Maybe.of(gpu.correlation[rows]),
            **self._launching(rows),
        }
        return frame(columns, backend)

    def api_calls(self, backend: str = "pandas") -> Any:
        """One row per runtime / driver / HSA / library API call: name, domain, thread, times
        (ns), correlation and External ids, and how many device ops it launched."""
        host = self.trace.host
        launched = self._links.host_index
        counts = np.bincount(launched[launched >= 0], minlength=len(host))[: len(host)]
        columns = {
            "name": self._names(host.name),
            "domain": Text(host.domain.astype(np.int32), Labels(DOMAINS)),
            "tid": host.tid,
            **self._timed(host, slice(None)),
            "correlation": Maybe.of(host.correlation),
            "external_id": Maybe.of(host.external_id),
            "device_ops": counts.astype(np.int64),
        }
        return frame(columns, backend)

    def ops(self, backend: str = "pandas", *, all_kinds: bool = False) -> Any:
        """One row per CPU operator (`aten::mm`, ...): name, thread, times (ns), External id,
        autograd sequence number and the recorded inputs as the tracer wrote them (JSON text:
        `input_dims` holds the input shapes, `input_types`, `concrete_inputs`). With
        `all_kinds`, user ranges and Python functions too (column `kind`)."""
        ops = self.trace.ops
        rows = np.arange(len(ops)) if all_kinds else np.flatnonzero(ops.kind == OP)
        columns = {
            "kind": Text(ops.kind[rows].astype(np.int32), Labels(_OP_KINDS)),
            "name": self._names(ops.name[rows]),
            "tid": ops.tid[rows],
            **self._timed(ops, rows),
            "external_id": Maybe.of(ops.external_id[rows]),
            "sequence": Maybe.of(ops.sequence[rows]),
            "input_dims": self._names(ops.input_dims[rows]),
            "input_types": self._names(ops.input_types[rows]),
            "concrete_inputs": self._names(ops.concrete[rows]),
        }
        return frame(columns, backend)

    def markers(self, backend: str = "pandas") -> Any:
        """User ranges: `record_function`, ProfilerStep#N, NVTX / ROCTX ranges (`track` "host",
        with their thread) and their GPU-side spans (`track` "device", with their device)."""
        ops, spans = self.trace.ops, self.trace.gpu_annotations
        rows = np.flatnonzero(ops.kind == ANNOTATION)
        host, device = len(rows), len(spans)
        starts = np.concatenate([ops.start[rows], spans.start])
        durs = np.concatenate([ops.dur[rows], spans.dur])
        known = durs >= 0
        columns: dict[str, Column] = {
            "name": self._names(np.concatenate([ops.name[rows], spans.name])),
            "track": Text(
                np.repeat(np.array([0, 1], np.int32), [host, device]), Labels(("host", "device"))
            ),
            "tid": Maybe(
                np.concatenate([ops.tid[rows], np.full(device, -1)]),
                np.repeat([True, False], [host, device]),
            ),
            "device": Maybe(
                np.concatenate([np.full(host, -1), spans.device]).astype(np.int64),
                np.repeat([False, True], [host, device]),
            ),
            "start_ns": starts,
            "end_ns": Maybe(np.where(known, starts + durs, -1), known),
            "duration_ns": Maybe(durs, known),
        }
        return frame(columns, backend)

    def counters(self, backend: str = "pandas") -> Any:
        """Hardware counters / metrics in long form, one row per (dispatch, counter): the
        kernel's row in `kernels()` order is not kept; `kernel` names it and `dispatch` is its
        row in the trace (NA when the dispatch is not in the trace). Values in base units;
        `unit` where the source gives one."""
        counters, gpu = self.trace.counters, self.trace.gpu
        row = counters.row
        present = (row >= 0) & (row < len(gpu))
        kernel = _at(gpu.name, np.where(present, row, -1))
        units = self.trace.meta.counter_units
        names = np.unique(counters.name)
        unit_of = np.full(len(self.trace.names), -1, np.int32)
        unit_labels = tuple(sorted({units.get(self.trace.names[n], "") for n in names}))
        for n in names:
            unit_of[n] = unit_labels.index(units.get(self.trace.names[n], ""))
        columns: dict[str, Column] = {
            "kernel": self._names(kernel),
            "dispatch": Maybe(np.where(present, row, -1), present),
            "counter": self._names(counters.name),
            "value": counters.value,
            "unit": Text(
                unit_of[counters.name] if len(counters) else counters.name, Labels(unit_labels)
            ),
        }
        return frame(columns, backend)

    def kernels_launched(self, start_ns: int, end_ns: int, backend: str = "pandas") -> Any:
        """The rows of `kernels()` launched in [start_ns, end_ns): by the start of their host
        launch call (the trace's launch links), by their own start when they have none — so
        the kernels a window of host time issued, on every stream (communication included),
        wherever on the device they ran."""
        from gpuscope.frames._columns import take
        from gpuscope.frames.series import launch_called

        called = launch_called(self.trace, self._links.host_index)
        when = called[self.trace.gpu.kind == KERNEL]
        inside = (when >= start_ns) & (when < end_ns)
        return frame(take(self.kernel_columns(), inside), backend)

    def steps(self, backend: str = "pandas") -> Any:
        """The steps the analysis finds (`gpuscope.analysis.stepranges`: the ProfilerStep#N
        ranges that hold something, else the stretches that end with each optimizer step), by
        start: step (position), name, start / end / duration (ns) on the host."""
        from gpuscope.analysis.stepranges import find_steps

        found = find_steps(self.trace)
        return frame(_step_columns(found.names, found.start, found.end), backend)

    def step_kernels(self, step: int | str, backend: str = "pandas") -> Any:
        """Every kernel step `step` launched (`kernels_launched` over its range), NCCL and
        other communication kernels included: `step` is a position in `steps()` (negative
        from the end) or a step's name ("ProfilerStep#5")."""
        from gpuscope.analysis.stepranges import find_steps

        found = find_steps(self.trace)
        i = step_position(found.names, step)
        return self.kernels_launched(int(found.start[i]), int(found.end[i]), backend)

    def queue_length(self, backend: str = "pandas") -> Any:
        """The launch queue of every stream over time: one row per (device, stream, moment its
        length changes) with `queued`, the device ops (kernels, copies, memsets) launched — at
        the start of their host launch call, by the trace's launch links; at their own start
        when unlinked — and not yet finished, from `time_ns` on (HTA's queue length)."""
        from gpuscope.frames.series import queue_columns

        return frame(queue_columns(self.trace, self._links.host_index), backend)

    def memory_bandwidth(self, backend: str = "pandas") -> Any:
        """Copy bandwidth over time: one row per (device, copy kind — HtoD, DtoH, DtoD, HtoH,
        PtoP, other, memset —, moment it changes) with `bytes_per_s`, the sum over the copies
        running from `time_ns` on of each one's bytes ÷ duration, and `copies`, how many run.
        Copies of unknown size are left out."""
        from gpuscope.frames.series import bandwidth_columns

        return frame(bandwidth_columns(self.trace), backend)

    def memory(self, backend: str = "pandas") -> Any:
        """The allocator's timeline (torch.profiler `profile_memory=True`): one row per
        allocation or free by time — `action`, signed `bytes`, the block's `addr`, and the
        allocator's `allocated_bytes` / `reserved_bytes` on that device after it; `device` is
        missing for host (CPU) memory. Empty, with `df.attrs["note"]` saying why, when the
        trace has no allocator events."""
        from gpuscope.frames._columns import with_note
        from gpuscope.frames.series import NO_MEMORY, memory_columns

        table = frame(memory_columns(self.trace), backend)
        return table if len(self.trace.memory) else with_note(table, NO_MEMORY, backend)

    def idle_time(self, backend: str = "pandas") -> Any:
        """Idle time per stream: one row per (device, stream) with its ops, span (first start
        to last end), busy (the union of its ops), idle (span − busy) and its share, gaps, and
        the idle time by what the op after each gap waited for (`host_wait_ns`,
        `kernel_wait_ns`, `unknown_ns`; see `gpuscope.frames.idle`)."""
        from gpuscope.frames.idle import stream_idle_columns

        return frame(stream_idle_columns(self.trace, self._links.host_index), backend)

    def devices(self, backend: str = "pandas") -> Any:
        """The GPUs the trace names: id, name, architecture, compute units (CUs / SMs)."""
        from gpuscope.frames._columns import records_frame

        rows = [
            {
                "id": d.id,
                "name": d.name,
                "arch": d.arch or None,
                "compute_units": d.compute_units or None,
            }
            for d in self.trace.meta.devices
        ]
        return records_frame(rows, backend)


def _at(values: Any, index: Any) -> Any:
    """`values[index]`, -1 where the index is -1 (no such row)."""
    result = np.full(len(index), -1, np.int64)
    found = index >= 0
    result[found] = values[index[found]]
    return result


def step_position(names: list[str], step: int | str) -> int:
    """The position of `step` (a position, negative from the end, or a name) among `names`."""
    if isinstance(step, str):
        if step not in names:
            raise KeyError(f"no step {step!r}; the steps are: {', '.join(names) or 'none'}")
        return names.index(step)
    if not -len(names) <= step < len(names):
        found = f"{len(names)} steps" if names else "no steps (no ProfilerStep#N ranges)"
        raise IndexError(f"step {step}: this trace has {found}")
    return step % len(names)


def _step_columns(names: list[str], lo: Any, hi: Any) -> dict[str, Any]:
    from gpuscope.frames._columns import Labels, Text

    return {
        "step": np.arange(len(names), dtype=np.int64),
        "name": Text(np.arange(len(names), dtype=np.int32), Labels(tuple(names))),
        "start_ns": np.asarray(lo, np.int64),
        "end_ns": np.asarray(hi, np.int64),
        "duration_ns": np.asarray(hi, np.int64) - np.asarray(lo, np.int64),
    }
