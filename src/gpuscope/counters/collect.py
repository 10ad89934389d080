"""Counter values per kernel dispatch, gathered from one or several traces.

One collection often spans several files: rocprofv3 and rocprof run the application once per
`pmc:` pass, and rocprof v1 writes the counters (no times) apart from the kernel trace (times,
another run of the same program). Dispatches are matched across them by kernel name and
occurrence (the k-th dispatch of kernel K in each file), never by dispatch id, which differs
between runs. A file without counters lends its kernel durations to the others the same way.
The dispatches are then grouped by kernel name *and* launch configuration (grid, block): one
kernel launched on 1 and on 1,024 blocks is two `Kernel`s, never one with the first one's grid.

>>> from gpuscope.trace.registry import read_traces          # doctest: +SKIP
>>> collection = collect(read_traces("rocprof_output/"))      # doctest: +SKIP
>>> collection.kernels[0].name, collection.kernels[0].counters["SQ_WAVES"]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpuscope.trace.model import F64, KERNEL, Device, Trace

# rocprof's derived metrics in kilobytes (1024 B); readers that do not convert them leave the
# unit unset, so a value without the "byte" unit is still in KiB
KIB_METRICS = ("FETCH_SIZE", "WRITE_SIZE")
LAUNCH_FIELDS = (
    *("registers", "accum_registers", "scalar_registers", "shared_mem", "scratch"),
    *("block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z"),
)


@dataclass
class Kernel:
    """Every dispatch of one kernel with one launch configuration (grid and block) that has
    counters: durations (ns, NaN when unknown) and each counter's value per dispatch (NaN where
    that dispatch lacks it). One kernel launched on 1 and on 1,024 blocks is two `Kernel`s."""

    name: str
    device: int
    duration_ns: F64
    counters: dict[str, F64]
    launch: dict[str, int] = field(default_factory=dict)  # first dispatch's launch parameters
    rules: list[dict[str, Any]] = field(default_factory=list)  # ncu's rule rows (see ncu_rules)

    @property
    def grid(self) -> tuple[int, int, int]:
        return _triple(self.launch, "grid")

    @property
    def block(self) -> tuple[int, int, int]:
        return _triple(self.launch, "block")

    @property
    def dispatches(self) -> int:
        return len(self.duration_ns)

    @property
    def time_ns(self) -> float | None:
        """Total duration, None when any dispatch's duration is unknown."""
        known = np.isfinite(self.duration_ns)
        return float(self.duration_ns.sum()) if len(known) and known.all() else None


@dataclass
class Collection:
    """The kernels of a counter collection, hottest first, with where they came from."""

    kernels: list[Kernel]
    vendor: str
    devices: tuple[Device, ...]
    paths: tuple[str, ...]
    formats: tuple[str, ...]
    units: dict[str, str]
    notes: list[str] = field(default_factory=list)

    @property
    def counter_names(self) -> list[str]:
        return sorted({name for k in self.kernels for name in k.counters})


@dataclass
class _Pass:
    """One trace's counter dispatches in dispatch order, keyed by (name, occurrence)."""

    trace: Trace
    keys: list[tuple[str, int]]
    devices: list[int]
    durations: F64
    counters: dict[str, F64]
    launch: list[dict[str, int]]
    rules: list[list[dict[str, Any]]]


def collect(traces: Sequence[Trace]) -> Collection:
    """The counter dispatches of `traces` (files of one collection), merged across passes."""
    with_counters = [t for t in traces if len(t.counters)]
    timing = [t for t in traces if not len(t.counters) and t.provides("kernels")]
    notes: list[str] = []
    passes = [_pass(t) for t in with_counters]
    keys, durations, counters, devices, launch, rules = _merge(passes, notes)
    _borrow_durations(keys, durations, timing, notes)
    kernels = _kernels(keys, durations, counters, devices, launch, rules)
    first = with_counters[0] if with_counters else (traces[0] if traces else None)
    units: dict[str, str] = {}
    for trace in with_counters:
        units.update(trace.meta.counter_units)
    return Collection(
        kernels=kernels,
        vendor=first.meta.vendor if first else "unknown",
        devices=_devices(with_counters or list(traces)),
        paths=tuple(p for t in traces for p in (t.meta.files or (t.meta.path,))),
        formats=tuple(sorted({t.meta.format for t in with_counters})),
        units=units,
        notes=notes,
    )


def _pass(trace: Trace) -> _Pass:
    rows = trace.counters.row
    ok = (rows >= 0) & (rows < len(trace.gpu))
    used = np.unique(rows[ok])
    used = used[trace.gpu.kind[used] == KERNEL]
    order = _dispatch_order(trace, used)
    position = np.full(len(trace.gpu), -1, np.int64)
    position[order] = np.arange(len(order))
    counters = _pivot(trace, position, len(order))
    names = [trace.names[i] for i in trace.gpu.name[order]]
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        keys.append((name, seen.get(name, 0)))
        seen[name] = seen.get(name, 0) + 1
    dur = trace.gpu.dur[order].astype(np.float64)
    dur[trace.gpu.dur[order] < 0] = np.nan
    by_row = rules_by_row(trace)
    rules = [by_row.get(row, []) for row in order.tolist()]
    return _Pass(
        trace, keys, trace.gpu.device[order].tolist(), dur, counters, _launch(trace, order), rules
    )


def _dispatch_order(trace: Trace, rows: np.ndarray) -> np.ndarray:
    """Rows in dispatch order: by correlation id, else start, else file order."""
    for column in (trace.gpu.correlation, trace.gpu.start):
        values = column[rows]
        if len(values) and (values >= 0).all():
            return rows[np.argsort(values, kind="stable")]
    return rows


def _pivot(trace: Trace, position: np.ndarray, size: int) -> dict[str, F64]:
    """counter name -> value per dispatch position (the first value where one repeats)."""
    table = trace.counters
    at = np.where(table.row >= 0, position[np.maximum(table.row, 0)], -1)
    out: dict[str, F64] = {}
    for code in np.unique(table.name[at >= 0]):
        name = trace.names[int(code)]
        pick = (table.name == code) & (at >= 0)
        column = np.full(size, np.nan)
        where, values = at[pick][::-1], table.value[pick][::-1]  # reversed: first one wins
        column[where] = values
        if name in KIB_METRICS and trace.meta.counter_units.get(name) != "byte":
            column = column * 1024.0
        out[name] = column
    return out


def _launch(trace: Trace, order: np.ndarray) -> list[dict[str, int]]:
    params = trace.launch_params
    by_row = {int(r): i for i, r in enumerate(params.row)}
    out = []
    for row in order.tolist():
        i = by_row.get(row)
        out.append({} if i is None else {f: int(getattr(params, f)[i]) for f in LAUNCH_FIELDS})
    return out


def _merge(passes: list[_Pass], notes: list[str]) -> tuple[
    list[tuple[str, int]], F64, dict[str, F64], list[int], list[dict[str, int]],
    list[list[dict[str, Any]]],
]:  # fmt: skip
    """One dispatch per (name, occurrence) over every pass; the first pass's order leads."""
    index: dict[tuple[str, int], int] = {}
    keys: list[tuple[str, int]] = []
    devices: list[int] = []
    launch: list[dict[str, int]] = []
    rules: list[list[dict[str, Any]]] = []
    for p in passes:
        for i, key in enumerate(p.keys):
            if key not in index:
                index[key] = len(keys)
                keys.append(key)
                devices.append(p.devices[i])
                launch.append(p.launch[i])
                rules.append(p.rules[i])
            elif not rules[index[key]]:
                rules[index[key]] = p.rules[i]
    durations = np.full(len(keys), np.nan)
    counters: dict[str, F64] = {}
    for p in passes:
        at = np.array([index[k] for k in p.keys], np.int64)
        free = np.isnan(durations[at])
        durations[at[free]] = p.durations[free]
        for name, values in p.counters.items():
            column = counters.setdefault(name, np.full(len(keys), np.nan))
            empty = np.isnan(column[at])
            column[at[empty]] = values[empty]
    if len(passes) > 1:
        sizes = sorted({len(p.keys) for p in passes})
        notes.append(
            f"counters of {len(passes)} passes merged by kernel name and occurrence"
            + (f" (passes hold {', '.join(map(str, sizes))} dispatches)" if len(sizes) > 1 else "")
        )
    return keys, durations, counters, devices, launch, rules


def _borrow_durations(
    keys: list[tuple[str, int]], durations: F64, timing: list[Trace], notes: list[str]
) -> None:
    """Durations of dispatches without one, from a kernel trace of the same program."""
    missing = np.isnan(durations)
    if not missing.any():
        return
    for trace in timing:
        kernels = np.flatnonzero((trace.gpu.kind == KERNEL) & (trace.gpu.dur >= 0))
        order = _dispatch_order(trace, kernels)
        seen: dict[str, int] = {}
        found: dict[tuple[str, int], int] = {}
        for row in order.tolist():
            name = trace.names[int(trace.gpu.name[row])]
            found[(name, seen.get(name, 0))] = int(trace.gpu.dur[row])
            seen[name] = seen.get(name, 0) + 1
        filled = 0
        for i in np.flatnonzero(np.isnan(durations)).tolist():
            if keys[i] in found:
                durations[i] = found[keys[i]]
                filled += 1
        if filled:
            notes.append(
                f"durations of {filled:,} dispatches taken from {Path(trace.meta.path).name} "
                "(a kernel trace of another run of the same program, matched by kernel name "
                "and occurrence)"
            )


def _kernels(
    keys: list[tuple[str, int]],
    durations: F64,
    counters: dict[str, F64],
    devices: list[int],
    launch: list[dict[str, int]],
    rules: list[list[dict[str, Any]]],
) -> list[Kernel]:
    """One Kernel per (name, grid, block): a launch configuration is part of what ran."""
    groups: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    for i, (name, _) in enumerate(keys):
        config = tuple(launch[i].get(f"{p}_{a}", -1) for p in ("grid", "block") for a in "xyz")
        groups.setdefault((name, config), []).append(i)
    kernels = []
    for (name, _), rows in groups.items():
        at = np.array(rows, np.int64)
        present = {n: v[at] for n, v in counters.items() if np.isfinite(v[at]).any()}
        first = rows[0]
        kernels.append(Kernel(name, devices[first], durations[at], present, launch[first],
                              merge_rules([rules[i] for i in rows])))  # fmt: skip
    kernels.sort(key=lambda k: (-np.nansum(k.duration_ns), -k.dispatches, k.name))
    return kernels


def _triple(launch: dict[str, int], prefix: str) -> tuple[int, int, int]:
    x, y, z = (launch.get(f"{prefix}_{a}", -1) for a in "xyz")
    return x, y, z


def _devices(traces: Sequence[Trace]) -> tuple[Device, ...]:
    for trace in traces:
        if trace.meta.devices:
            return trace.meta.devices
    return ()


def rules_by_row(trace: Trace) -> dict[int, list[dict[str, Any]]]:
    """ncu's rule rows per row of trace.gpu (empty for other formats)."""
    rules = trace.meta.extra.get("ncu_rules") or {}
    ids = trace.meta.extra.get("ncu_ids") or []
    return {row: list(rules[i]) for row, i in enumerate(ids) if i in rules}


def merge_rules(per_dispatch: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per rule of a kernel group (the first dispatch's text and speedup) and the number of
    dispatches it fired on; a rule that fires several times per launch (WorkloadImbalance of SMs,
    L1, L2 …) keeps each occurrence."""
    merged: dict[tuple[str, str, int], dict[str, Any]] = {}
    for rules in per_dispatch:
        seen: dict[tuple[str, str], int] = {}
        for rule in rules:
            name = (str(rule.get("section", "")), str(rule.get("rule", "")))
            nth = seen[name] = seen.get(name, -1) + 1
            key = (*name, nth)
            if key in merged:
                merged[key]["dispatches"] += 1
            else:
                merged[key] = {**rule, "dispatches": 1}
    return list(merged.values())
