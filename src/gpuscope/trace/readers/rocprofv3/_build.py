"""The `Part`s of one rocprofv3 process -> one `Trace`.

Kernel rows come from the kernel trace (CSV or JSON); without one, from the counter collection
(one row per dispatch). Counter values join the kernel rows by dispatch id (correlation id for
ROCm 6.1 traces without one) and kernel name, so the files of AMD's documentation, which are
from several runs, never attach one run's counters to another run's kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._copies import copy_kind
from gpuscope.trace._kernel_names import without_suffixes
from gpuscope.trace.model import (
    ANNOTATION,
    DTOD,
    DTOH,
    HSA,
    HTOD,
    I32,
    I64,
    KERNEL,
    LIBRARY,
    MEMCPY,
    PTOP,
    RUNTIME,
    Trace,
)
from gpuscope.trace.readers.rocprofv3 import _agents as agents_
from gpuscope.trace.readers.rocprofv3._join import concat_dispatches, first_rows, match
from gpuscope.trace.readers.rocprofv3._provides import event_counts, provides, schema
from gpuscope.trace.readers.rocprofv3._tables import Agent, Calls, Copies, Dispatches, Part

_SKIP = -1  # marker domains that are not user ranges (roctxNameOsThread, profiler pause, ...)
_MARKER = -2


def build(key: str, parts: list[Part], warnings: list[str], extra: dict[str, Any]) -> Trace:
    """One Trace from the parts of one process (`key` names it in messages)."""
    out = TraceParts()
    agents = _agents(parts)
    kernels = _kernel_rows(parts)
    names = _add_kernels(out, kernels, agents)
    unmatched = _add_counters(out, parts, kernels, names)
    for part in parts:
        for copies in part.copies:
            _add_copies(out, copies, agents)
        for calls in part.calls:
            _add_calls(out, calls)
    domain_stats = _add_totals(out, parts)
    notes = [*warnings, *_part_warnings(parts)]
    if unmatched:
        notes.append(f"{unmatched:,} counter values belong to dispatches that are not in the "
                     "kernel trace (another run's files?): kept with no kernel row")  # fmt: skip
    found = provides(parts)
    meta = trace_meta(
        key,
        "rocprofv3",
        schema=schema(parts),
        vendor="amd",
        devices=agents_.devices(agents),
        profiler_span=_span(parts),
        event_counts=event_counts(parts),
        truncated=any(p.truncated for p in parts),
        warnings=tuple(notes),
        extra=_extra(parts, extra, domain_stats),
        provides=found,
        clock="boot" if found & {"timestamps", "host_api", "markers"} else "",
        files=tuple(p.path for p in parts),
    )
    return out.build(meta)


def _agents(parts: list[Part]) -> list[Agent]:
    unique = {(a.logical_id, a.is_gpu): a for p in parts for a in p.agents}
    return agents_.with_type_index(list(unique.values()))


def _kernel_rows(parts: list[Part]) -> Dispatches | None:
    traced = [d for p in parts for d in p.dispatches]
    if traced:
        return concat_dispatches(traced)
    counted = [c.kernels for p in parts for c in p.counters]
    if not counted:
        return None
    rows = concat_dispatches(counted)
    key = _join_key(rows)
    names = np.unique(rows.names, return_inverse=True)[1] if len(rows) else key
    # one row per dispatch: two counter files of one run (or the docs' mix) may repeat one
    keep = (match(key, names, key, names) == np.arange(len(rows))) | (key < 0)
    return rows.take(keep)


def _join_key(rows: Dispatches) -> I64:
    return rows.dispatch if (rows.dispatch >= 0).any() else rows.correlation


def _add_kernels(out: TraceParts, rows: Dispatches | None, agents: list[Agent]) -> I32:
    """Kernel rows and their launch parameters; returns the rows' name indices."""
    if rows is None or not len(rows):
        return np.zeros(0, np.int32)
    first = out.rows("gpu")
    start, dur = _times(rows.start, rows.end)
    names = out.intern(clean_names(rows.names))
    out.add(
        "gpu",
        kind=np.full(len(rows), KERNEL, np.int8),
        name=names,
        start=start,
        dur=dur,
        device=agents_.device_ids(rows.agent, agents),
        stream=rows.stream,
        correlation=rows.correlation,
        external_id=rows.external,
    )
    block = rows.block
    grid = np.where((rows.grid >= 0) & (block > 0), -(-rows.grid // np.maximum(block, 1)), -1)
    launch: dict[str, Any] = {
        "row": np.arange(first, first + len(rows), dtype=np.int64),
        "shared_mem": rows.lds,
        "scratch": rows.scratch,
        "registers": rows.vgpr,
        "accum_registers": rows.accum,
        "scalar_registers": rows.sgpr,
    }
    for i, axis in enumerate("xyz"):
        launch[f"grid_{axis}"] = grid[:, i]
        launch[f"block_{axis}"] = np.where(block[:, i] > 0, block[:, i], -1)
    out.add("launch_params", **launch)
    return names


def clean_names(names: list[str]) -> list[str]:
    """Kernel names without the code-object symbol suffix (`.kd`, ` [clone .kd]`)."""
    return without_suffixes(names)


def _times(start: I64, end: I64) -> tuple[I64, I64]:
    known = (start >= 0) & (end >= start)
    return np.where(known, start, -1), np.where(known, end - start, -1)


def _add_counters(
    out: TraceParts, parts: list[Part], kernels: Dispatches | None, kernel_names: I32
) -> int:
    """Counter rows joined to the kernel rows; returns how many found no kernel row."""
    unmatched = 0
    kernel_key = _join_key(kernels) if kernels is not None else np.zeros(0, np.int64)
    for counters in (c for p in parts for c in p.counters):
        own = counters.kernels
        own_names = out.intern(clean_names(own.names))
        own_key = _join_key(own)
        by_dispatch = first_rows(own_key, counters.dispatch)
        names = np.where(by_dispatch >= 0, own_names[np.maximum(by_dispatch, 0)], -1)
        rows = match(kernel_key, kernel_names, counters.dispatch, names)
        unmatched += int((rows < 0).sum())
        out.add("counters", row=rows, name=out.intern(counters.names), value=counters.values)
    return unmatched


def _add_copies(out: TraceParts, copies: Copies, agents: list[Agent]) -> None:
    table = {d: copy_kind(d) for d in set(copies.directions)}
    kinds = np.array([table[d] for d in copies.directions], np.int8)
    src = agents_.device_ids(copies.src, agents)
    dst = agents_.device_ids(copies.dst, agents)
    device = np.where(np.isin(kinds, (HTOD, DTOD, PTOP)), dst, np.where(kinds == DTOH, src, -1))
    start, dur = _times(copies.start, copies.end)
    out.add(
        "gpu",
        kind=np.full(len(copies), MEMCPY, np.int8),
        name=out.intern(copies.directions),
        start=start,
        dur=dur,
        device=device,
        stream=copies.stream,
        correlation=copies.correlation,
        external_id=copies.external,
        bytes=copies.bytes,
        copy=kinds,
    )


def _add_calls(out: TraceParts, calls: Calls) -> None:
    table = {d: _domain(d) for d in set(calls.domains)}
    domain = np.array([table[d] for d in calls.domains], np.int8)
    start, dur = _times(calls.start, calls.end)
    host = np.flatnonzero(domain >= 0)
    if len(host):
        out.add(
            "host",
            name=out.intern([calls.functions[i] for i in host]),
            start=start[host],
            dur=dur[host],
            tid=calls.tid[host],
            correlation=calls.correlation[host],
            external_id=calls.external[host],
            domain=domain[host],
        )
    ranges = np.flatnonzero(domain == _MARKER)
    if len(ranges):
        out.add(
            "ops",
            kind=np.full(len(ranges), ANNOTATION, np.int8),
            name=out.intern([calls.functions[i] for i in ranges]),
            start=start[ranges],
            dur=dur[ranges],
            tid=calls.tid[ranges],
        )


def _domain(name: str) -> int:
    """Model domain of a rocprofv3 domain / buffer kind name; _MARKER for ROCTX ranges."""
    upper = name.upper()
    if upper.startswith("MARKER_"):
        return _MARKER if upper.startswith("MARKER_CORE") else _SKIP
    if upper.startswith("HIP_"):
        return RUNTIME
    if upper.startswith("HSA_"):
        return HSA
    return LIBRARY


def _add_totals(out: TraceParts, parts: list[Part]) -> dict[str, dict[str, int]]:
    """Per-name totals; per-domain rows (`domain_stats`) are returned for `meta.extra`."""
    domains: dict[str, dict[str, int]] = {}
    for stats in (s for p in parts for s in p.stats):
        if stats.kind == "domain":
            for i, name in enumerate(stats.names):
                domains[name] = {
                    "calls": int(stats.calls[i]),
                    "total_ns": int(stats.total[i]),
                    "min_ns": int(stats.min[i]),
                    "max_ns": int(stats.max[i]),
                }
            continue
        names = clean_names(stats.names) if stats.kind == KERNEL else stats.names
        out.add(
            "totals",
            kind=np.full(len(names), stats.kind, np.int8),
            name=out.intern(names),
            count=stats.calls,
            total_ns=stats.total,
            min_ns=stats.min,
            max_ns=stats.max,
        )
    return domains


def _part_warnings(parts: list[Part]) -> list[str]:
    several = len(parts) > 1
    return [f"{_name(p.path)}: {w}" if several else w for p in parts for w in p.warnings]


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _span(parts: list[Part]) -> tuple[int, int] | None:
    """The JSON's process [init, fini) span, widened to any record outside it (`fini_time` is
    taken when main returns; buffered records of the exit path may come later)."""
    spans = [p.extra["span"] for p in parts if "span" in p.extra]
    if not spans:
        return None
    first, last = min(s[0] for s in spans), max(s[1] for s in spans)
    tables: list[Dispatches | Copies | Calls] = []
    for part in parts:
        tables += [*part.dispatches, *part.copies, *part.calls]
    for table in tables:
        known = (table.start >= 0) & (table.end >= table.start)
        if known.any():
            first = min(first, int(table.start[known].min()))
            last = max(last, int(table.end[known].max()))
    return first, last


def _extra(
    parts: list[Part], given: dict[str, Any], domain_stats: dict[str, dict[str, int]]
) -> dict[str, Any]:
    """pids, command, per-domain statistics and the files of the group left unread."""
    found: dict[str, Any] = dict(given)
    if domain_stats:
        found["domain_stats"] = domain_stats
    pids = sorted({p.extra["pid"] for p in parts if p.extra.get("pid", -1) >= 0})
    if pids:
        found["pids"] = pids
    commands = [p.extra["command"] for p in parts if "command" in p.extra]
    if commands:
        found["command"] = commands[0]
    unread = [_name(p.path) for p in parts if "unread" in p.extra]
    if unread:  # statistics of domains without Totals rows (markers, allocations, ...)
        found["not_read"] = [*found.get("not_read", []), *unread]
    return found
