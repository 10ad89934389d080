"""One `Trace` from the files of one rocprof v1 run: each kind of data from the best file for it.

Kernels: the kernel trace CSV (results.csv) when it has times, else results.json, else results.db,
else a counter CSV without times (rows with unknown start/duration). Host calls, copies and ROCTX
ranges: results.json, else results.db. Counters: joined onto the kernels by dispatch Index (and a
matching kernel name). Totals of a stats file only where no per-event rows of that kind were read.
Devices: results.sysinfo.txt, else the rocminfo dump inside results.json.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace.model import HSA, I64, KERNEL, MEMCPY, MEMSET, RUNTIME, Trace
from gpuscope.trace.readers.rocprof._piece import TRUNCATED, Agent, Piece, Table
from gpuscope.trace.readers.rocprof._sysinfo import devices_for

_KIND_NAMES = {KERNEL: "kernels", MEMCPY: "memcpy", MEMSET: "memset"}


@dataclass
class _Merged:
    """What has been put into the trace so far, and from which files."""

    parts: TraceParts = field(default_factory=TraceParts)
    used: list[Piece] = field(default_factory=list)
    provides: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    domains: set[int] = field(default_factory=set)  # of the host calls read
    devices: set[int] = field(default_factory=set)  # ids the gpu rows use
    units: dict[str, str] = field(default_factory=dict)

    def use(self, piece: Piece, provides: set[str]) -> None:
        if piece not in self.used:
            self.used.append(piece)
        self.provides |= provides

    def add(self, table: str, rows: Table) -> None:
        if not len(rows):
            return
        self.parts.add(table, name=self.parts.intern(rows.names), **rows.columns)
        if table == "gpu":
            kinds, counts = np.unique(rows.columns["kind"], return_counts=True)
            for kind, count in zip(kinds.tolist(), counts.tolist(), strict=True):
                what = _KIND_NAMES[kind]
                self.counts[what] = self.counts.get(what, 0) + count
            self.devices |= {int(d) for d in np.unique(rows.columns["device"]) if d >= 0}
        elif table == "host":
            self.domains |= {int(d) for d in np.unique(rows.columns["domain"])}
        counted = {"host": "host_calls", "ops": "markers", "totals": "totals"}.get(table)
        if counted is not None:
            self.counts[counted] = self.counts.get(counted, 0) + len(rows)


def merge(key: str, pieces: list[Piece], warnings: list[str]) -> Trace:
    out = _Merged(warnings=list(warnings))
    kernels = _kernel_source(pieces)
    events = _events_source(pieces)
    base = _add_kernels(out, kernels, events)
    if events is not None:
        _add_events(out, events)
    _add_counters(out, pieces, kernels, base)
    _add_totals(out, pieces)
    devices = _devices(out, pieces)
    return out.parts.build(_meta(key, pieces, out, devices))


def _kernel_source(pieces: list[Piece]) -> Piece | None:
    """The file whose kernel rows become the trace's kernels."""
    csvs = [p for p in pieces if p.kind == "csv" and p.gpu is not None]
    timed = sorted((p for p in csvs if p.timed), key=lambda p: not p.variant.startswith("trace"))
    if timed:
        return timed[0]
    for piece in _by_preference(pieces):
        if piece.gpu is not None and (piece.gpu.columns["kind"] == KERNEL).any():
            return piece
    return csvs[0] if csvs else None


def _events_source(pieces: list[Piece]) -> Piece | None:
    """results.json, else results.db: host calls, copies and ranges come from one of them."""
    found = _by_preference(pieces)
    return found[0] if found else None


def _by_preference(pieces: list[Piece]) -> list[Piece]:
    json = [p for p in pieces if p.kind == "json"]
    return json + [p for p in pieces if p.kind == "db"]


@dataclass
class _Base:
    """The trace's kernels: names and dispatch Index, to join counters onto."""

    names: list[str]
    dispatch: I64 | None
    mask: Any  # the kernel rows among the source's gpu rows


def _add_kernels(out: _Merged, source: Piece | None, events: Piece | None) -> _Base | None:
    if source is None or source.gpu is None:
        return None
    mask = source.gpu.columns["kind"] == KERNEL
    kernels = source.gpu.take(mask)
    if source is not events and events is not None and events.gpu is not None:
        _borrow_links(kernels, events.gpu)
    out.add("gpu", kernels)
    if source.launch is not None:
        _add_launch(out.parts, {k: v[mask] for k, v in source.launch.items()})
    out.use(source, _kernel_provides(source))
    dispatch = source.dispatch[mask] if source.dispatch is not None else None
    return _Base(kernels.names, dispatch, mask)


def _kernel_provides(source: Piece) -> set[str]:
    keys = {"kernels", "timestamps", "launch_params", "counters", "links"} & source.provides
    return keys if source.timed else keys - {"kernels", "timestamps"}


def _borrow_links(kernels: Table, other: Table) -> None:
    """Correlation ids of the same dispatches in results.json / .db (same BeginNs and EndNs)."""
    linked = (other.columns["kind"] == KERNEL) & (other.columns["correlation"] >= 0)
    if not linked.any():
        return
    start, dur = other.columns["start"][linked], other.columns["dur"][linked]
    keys = zip(start.tolist(), dur.tolist(), strict=True)
    ids = dict(zip(keys, other.columns["correlation"][linked].tolist(), strict=True))
    pairs = zip(kernels.columns["start"].tolist(), kernels.columns["dur"].tolist(), strict=True)
    kernels.columns["correlation"] = np.array([ids.get(p, -1) for p in pairs], np.int64)


def _add_launch(parts: TraceParts, launch: dict[str, Any]) -> None:
    """Launch rows for the kernels (the first gpu rows) that have any parameter."""
    known = (launch["grid_x"] >= 0) | (launch["block_x"] >= 0) | (launch["registers"] >= 0)
    rows = np.flatnonzero(known)
    if len(rows):
        parts.add("launch_params", row=rows, **{k: v[rows] for k, v in launch.items()})


def _add_events(out: _Merged, events: Piece) -> None:
    """Copies, host calls and ranges (the kernels were taken by `_add_kernels`)."""
    if events.gpu is not None:
        out.add("gpu", events.gpu.take(events.gpu.columns["kind"] != KERNEL))
    if events.host is not None:
        out.add("host", events.host)
    if events.markers is not None:
        out.add("ops", events.markers)
    keys = {"host_api", "links", "copies", "copy_bytes", "markers", "timestamps"}
    out.use(events, events.provides & keys)


def _add_counters(
    out: _Merged, pieces: list[Piece], kernels: Piece | None, base: _Base | None
) -> None:
    """Counters of the kernel file itself, then of every other counter CSV, joined by Index."""
    for piece in pieces:
        block = piece.counters
        if block is None or piece.dispatch is None or piece.gpu is None:
            continue
        values = block.values
        if piece is kernels and base is not None:
            values = values[base.mask]
            rows = np.arange(len(values), dtype=np.int64)
        else:
            rows = _join(piece, base, out)
        for j, name in enumerate(block.names):
            ok = np.isfinite(values[:, j])
            if ok.any():
                index = out.parts.intern_one(name)
                out.parts.add("counters", row=rows[ok], name=np.full(int(ok.sum()), index),
                              value=values[ok, j])  # fmt: skip
        out.use(piece, {"counters"})
        out.units.update(block.units)


def _join(piece: Piece, base: _Base | None, out: _Merged) -> I64:
    """Row of the trace's kernels of each dispatch of `piece`: same Index and kernel name."""
    assert piece.dispatch is not None and piece.gpu is not None
    rows = np.full(len(piece.dispatch), -1, np.int64)
    if base is None or base.dispatch is None:
        out.warnings.append(f"{Path(piece.path).name}: no kernel trace with dispatch indices to "
                            "attach its counters to")  # fmt: skip
        return rows
    where: dict[int, int] = {}
    for position, dispatch in enumerate(base.dispatch.tolist()):
        where.setdefault(int(dispatch), position)
    for i, dispatch in enumerate(piece.dispatch.tolist()):
        found = where.get(int(dispatch))
        if found is not None and same_kernel(base.names[found], piece.gpu.names[i]):
            rows[i] = found
    missing = int((rows < 0).sum())
    if missing:
        out.warnings.append(f"{Path(piece.path).name}: counters of {missing:,} dispatches match "
                            "no kernel of the trace (Index and name)")  # fmt: skip
    return rows


def same_kernel(a: str, b: str) -> bool:
    """Equal names, or one is the other's base name (`--basenames on`)."""
    return a == b or _base_name(a) == _base_name(b)


def _base_name(name: str) -> str:
    head = name.split("(", 1)[0].split("<", 1)[0].strip()
    return head.rsplit(" ", 1)[-1].rsplit("::", 1)[-1]


def _add_totals(out: _Merged, pieces: list[Piece]) -> None:
    """A stats file's totals, unless rows of its kind (kernels, copies, API calls) were read."""
    for piece in pieces:
        totals = piece.totals
        if totals is None or not len(totals) or _has_rows_for(out, piece.summary):
            continue
        out.add("totals", totals)
        out.use(piece, {"totals"})


def _has_rows_for(out: _Merged, summary: str) -> bool:
    if summary == "hip":
        return RUNTIME in out.domains
    if summary == "hsa":
        return HSA in out.domains
    if summary == "copies":
        return bool(out.counts.get("memcpy") or out.counts.get("memset"))
    return bool(out.counts.get("kernels"))


def _devices(out: _Merged, pieces: list[Piece]) -> tuple[Any, ...]:
    sysinfo = [p for p in pieces if p.kind == "sysinfo"]
    carriers = sysinfo or [p for p in pieces if p.agents]
    if not carriers:
        return ()
    agents: tuple[Agent, ...] = carriers[0].agents
    out.use(carriers[0], {"devices"})
    return devices_for(agents, sorted(out.devices))


def _meta(key: str, pieces: list[Piece], out: _Merged, devices: tuple[Any, ...]) -> Any:
    counts = {**out.counts, "launch_params": out.parts.rows("launch_params"),
              "counters": out.parts.rows("counters")}  # fmt: skip
    warnings = list(out.warnings)
    for piece in pieces:  # a file left unused (no rows) still says that it was cut
        said = [w for w in piece.warnings if piece in out.used or w.startswith(TRUNCATED)]
        name = Path(piece.path).name if len(pieces) > 1 else ""
        warnings += [_located(w, name) for w in said]
    return trace_meta(
        key if len(pieces) > 1 else pieces[0].path,
        "rocprof",
        schema="+".join(dict.fromkeys(p.variant for p in out.used)),
        vendor="amd",
        devices=devices,
        event_counts={k: v for k, v in counts.items() if v},
        truncated=any(p.truncated for p in pieces),
        warnings=tuple(warnings),
        provides=frozenset(out.provides),
        clock="boot" if out.provides & {"timestamps"} else "",
        files=tuple(p.path for p in pieces),
        counter_units=dict(out.units),
    )


def _located(warning: str, name: str) -> str:
    """`warning` naming its file; truncation warnings keep their leading word (the analysis
    flags a trace as truncated by it)."""
    if not name:
        return warning
    if warning.startswith(TRUNCATED):
        return f"{TRUNCATED} {name}{warning[len(TRUNCATED) :]}"
    return f"{name}: {warning}"
