"""rocprof v1 `results.db`: the SQLite file tblextr.py builds before it writes the JSON and CSVs.

Tables: `KERN` (`A` before ROCm 5; the dispatch records, i.e. results.csv's rows, often empty),
`HIP` / `HSA` (API calls), `OPS` (kernels of the op trace), `COPY` (copies and fills) and
`rocTX` (user ranges). Every row's `Index` is its correlation id, except in KERN (the dispatch
index). Columns moved between versions (ROCm 4's OPS has `proc-id` and the stream as `tid`;
later ones `stream-id` and `__lane`), so every column is looked up by name.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace.model import ANNOTATION, HSA, I64, KERNEL, MEMCPY, MEMSET, RUNTIME
from gpuscope.trace.readers._rocprof_dispatch import (
    LAUNCH_COLUMNS,
    counter_block,
    is_counter,
    launch_params,
)
from gpuscope.trace.readers._rocprof_flows import Track
from gpuscope.trace.readers._rocprof_piece import (
    BARRIER_NAMES,
    CounterBlock,
    Piece,
    Table,
    copy_kinds,
    full,
    strip_kd,
    to_ints,
)
from gpuscope.trace.readers._rocprof_sizes import data_sizes, sizes_from_calls

KNOWN_TABLES = frozenset({"A", "KERN", "HIP", "HSA", "COPY", "OPS", "rocTX", "MM", "B", "C"})
# HIP and HSA number their calls independently: HSA ids are moved out of HIP's range
HSA_CORRELATION_OFFSET = 1 << 40
FETCH = 100_000
_EXPECTED = "rocprof's results.db (tables KERN or A, HIP, HSA, OPS, COPY, rocTX)"
_TIMED = ("BeginNs", "EndNs", "Name")
_REQUIRED = {"HIP": _TIMED, "HSA": _TIMED, "OPS": _TIMED, "COPY": _TIMED, "rocTX": _TIMED}
_DISPATCH_INTS = ("Index", "gpu-id", "queue-id", *LAUNCH_COLUMNS, "BeginNs", "EndNs")


def is_rocprof_db(path: str) -> bool:
    names = _sniff.sqlite_names(path) - {"sqlite_sequence"}
    return bool(names) and names <= KNOWN_TABLES and bool(names & {"A", "KERN"})


def read_db(path: str) -> Piece:
    try:
        with _sniff.connect(path) as db:
            return _Reader(path, db).piece()
    except sqlite3.Error as error:
        raise _sniff.sqlite_error(error, _EXPECTED) from None


@dataclass
class _Ops:
    """Device rows of one table, with the memory-copy info of each."""

    names: list[str]
    columns: dict[str, Any]
    data: list[str]


@dataclass
class _Extras:
    """What the dispatch records add to their kernels: Index, launch parameters, counters."""

    index: I64
    launch: dict[str, Any]
    counters: CounterBlock | None

    def padded(self, size: int) -> _Extras:
        """For `size` gpu rows: the copies after the kernels have none of these."""
        extra = size - len(self.index)
        counters = self.counters
        if counters is not None:
            nan = np.full((extra, len(counters.names)), np.nan)
            counters = CounterBlock(
                counters.names, np.vstack([counters.values, nan]), counters.units
            )
        return _Extras(
            np.concatenate([self.index, full(extra, -1)]),
            {k: np.concatenate([v, full(extra, -1)]) for k, v in self.launch.items()},
            counters,
        )


class _Reader:
    def __init__(self, path: str, db: sqlite3.Connection) -> None:
        self.path, self.db = path, db
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        self.tables = {str(r[0]) for r in rows}
        if not self.tables & {"A", "KERN"}:
            raise ReaderError(f"expected {_EXPECTED}; found tables {sorted(self.tables)}")
        for table in sorted(self.tables & _REQUIRED.keys()):
            missing = [c for c in _REQUIRED[table] if c not in self.columns(table)]
            if missing:
                raise ReaderError(f"table {table} has no column {', '.join(missing)}; "
                                  f"expected {_EXPECTED}")  # fmt: skip

    def columns(self, table: str) -> list[str]:
        return [str(r[1]) for r in self.db.execute(f'PRAGMA table_info("{table}")')]

    def select(self, table: str, wanted: list[str]) -> dict[str, list[Any]]:
        """The `wanted` columns of `table` (absent ones are lists of None)."""
        present = [c for c in wanted if c in self.columns(table)]
        out: dict[str, list[Any]] = {c: [] for c in wanted}
        if present:
            quoted = ", ".join(f'"{c}"' for c in present)
            cursor = self.db.execute(f'SELECT {quoted} FROM "{table}"')
            while rows := cursor.fetchmany(FETCH):
                for i, column in enumerate(present):
                    out[column].extend(row[i] for row in rows)
        size = max((len(v) for v in out.values()), default=0)
        for column in wanted:
            if column not in present:
                out[column] = [None] * size
        return out

    def piece(self) -> Piece:
        host, host_cols = self._host()
        gpu, extras = self._gpu(host, host_cols)
        piece = Piece(
            self.path,
            "db/rocm4" if "A" in self.tables else "db",
            kind="db",
            gpu=gpu,
            host=host,
            markers=self._markers(),
            timed=True,
        )
        if extras is not None:
            piece.dispatch, piece.launch, piece.counters = (
                extras.index,
                extras.launch,
                extras.counters,
            )
        piece.provides = self._provides(piece)
        return piece

    # -- host calls -------------------------------------------------------------------------
    def _host(self) -> tuple[Table | None, dict[str, Any]]:
        parts = [self._calls(t, d) for t, d in (("HIP", RUNTIME), ("HSA", HSA)) if t in self.tables]
        if not parts:
            return None, {}
        names = [n for part in parts for n in part[0]]
        cols = {key: np.concatenate([part[1][key] for part in parts]) for key in parts[0][1]}
        args = [a for part in parts for a in part[2]]
        keep = np.array([n != "hsa_dispatch" for n in names], bool)  # not a call: a marker
        table = Table(names, {k: v for k, v in cols.items() if k != "pid"}).take(keep)
        span = {"pid": cols["pid"][keep], "args": [a for a, k in zip(args, keep, strict=True) if k]}
        return table, span

    def _calls(self, table: str, domain: int) -> tuple[list[str], dict[str, Any], list[str]]:
        raw = self.select(table, ["BeginNs", "EndNs", "tid", "Name", "args", "Index"])
        start, end = to_ints(raw["BeginNs"]), to_ints(raw["EndNs"])
        corr = to_ints(raw["Index"])
        if domain == HSA:
            corr = np.where(corr >= 0, corr + HSA_CORRELATION_OFFSET, -1)
        size = len(start)
        cols = {
            "start": start,
            "dur": np.where(end >= start, end - start, -1),
            "tid": to_ints(raw["tid"]),
            "correlation": corr,
            "domain": np.full(size, domain, np.int8),
            "pid": full(size, domain),
        }
        return _texts(raw["Name"]), cols, [a if isinstance(a, str) else "" for a in raw["args"]]

    # -- device ops -------------------------------------------------------------------------
    def _gpu(self, host: Table | None, host_cols: dict[str, Any]) -> tuple[Any, _Extras | None]:
        """Kernels (the op trace's, else the dispatch records) then copies."""
        kernels = self._ops("OPS") if "OPS" in self.tables else None
        extras = None
        if kernels is None or not len(kernels.names):
            kernels, extras = self._dispatches()
        copies = self._ops("COPY") if "COPY" in self.tables else None
        parts = [p for p in (kernels, copies) if p is not None and len(p.names)]
        if not parts:
            return None, None
        gpu = Table([n for p in parts for n in p.names], _concat([p.columns for p in parts]))
        _sizes(gpu, [d for p in parts for d in p.data], host, host_cols)
        return gpu, extras.padded(len(gpu)) if extras is not None else None

    def _ops(self, table: str) -> _Ops:
        wanted = ["BeginNs", "EndNs", "dev-id", "Name", "tid", "stream-id", "__lane", "Index"]
        raw = self.select(table, [*wanted, "Data"])
        names = strip_kd(_texts(raw["Name"]))
        keep = np.array([n not in BARRIER_NAMES for n in names], bool)
        start, end = to_ints(raw["BeginNs"]), to_ints(raw["EndNs"])
        present = self.columns(table)
        corr = to_ints(raw["Index"])
        if table == "COPY" and "dev-id" not in present:  # HSA async copies: HSA call ids
            corr = np.where(corr >= 0, corr + HSA_CORRELATION_OFFSET, -1)
        kind = _kinds(table, names)
        cols = {
            "kind": kind,
            "start": start,
            "dur": np.where(end >= start, end - start, -1),
            "device": to_ints(raw["dev-id"]),
            "stream": _stream(raw, present),
            "correlation": corr,
            "copy": copy_kinds(names, kind),
        }
        data = [d if isinstance(d, str) else "" for d in raw["Data"]]
        kept = np.flatnonzero(keep).tolist()
        return _Ops(
            [names[i] for i in kept], {k: v[keep] for k, v in cols.items()}, [data[i] for i in kept]
        )

    def _dispatches(self) -> tuple[_Ops | None, _Extras | None]:
        """Kernels from the dispatch records (KERN / A) when they were filled with times."""
        table = "KERN" if "KERN" in self.tables else "A"
        present = self.columns(table)
        if "BeginNs" not in present:
            return None, None
        raw = self.select(table, ["KernelName", *_DISPATCH_INTS])
        ints = {key: to_ints(raw[key]) for key in _DISPATCH_INTS}
        names = strip_kd(_texts(raw["KernelName"]))
        size = len(names)
        begin, end = ints["BeginNs"], ints["EndNs"]
        cols = {
            "kind": np.full(size, KERNEL, np.int8),
            "start": begin,
            "dur": np.where(end >= begin, end - begin, -1),
            "device": ints["gpu-id"],
            "stream": ints["queue-id"],
            "correlation": full(size, -1),
            "copy": np.full(size, -1, np.int8),
        }
        extras = _Extras(
            ints["Index"], launch_params(ints), self._dispatch_counters(table, present)
        )
        return _Ops(names, cols, [""] * size), extras

    def _dispatch_counters(self, table: str, present: list[str]) -> CounterBlock | None:
        names = [c for c in present if is_counter(c)]
        if not names:
            return None
        raw = self.select(table, names)
        return counter_block(names, np.array([[_float(v) for v in raw[n]] for n in names]).T)

    # -- user ranges ------------------------------------------------------------------------
    def _markers(self) -> Table | None:
        if "rocTX" not in self.tables:
            return None
        raw = self.select("rocTX", ["BeginNs", "EndNs", "tid", "Name"])
        start, end = to_ints(raw["BeginNs"]), to_ints(raw["EndNs"])
        dur = np.where(end >= start, end - start, -1)
        return Table(
            [n.strip('"') for n in _texts(raw["Name"])],
            {
                "kind": np.full(len(start), ANNOTATION, np.int8),
                "start": start,
                "dur": np.where(dur == 1, 0, dur),  # a roctxMark is stored as [t, t + 1]
                "tid": to_ints(raw["tid"]),
            },
        )

    def _provides(self, piece: Piece) -> set[str]:
        found = set()
        if piece.kernels() or "OPS" in self.tables:
            found |= {"kernels", "timestamps"}
        if self.tables & {"HIP", "HSA"}:
            found |= {"host_api", "links", "copies", "timestamps"}
        if "rocTX" in self.tables:
            found.add("markers")
        gpu = piece.gpu
        if gpu is not None and (gpu.columns["kind"] != KERNEL).any():
            found.add("copies")
        if gpu is not None and (gpu.columns["bytes"] >= 0).any():
            found.add("copy_bytes")
        if piece.launch is not None:
            found.add("launch_params")
        if piece.counters is not None:
            found.add("counters")
        return found


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def _texts(values: list[Any]) -> list[str]:
    return ["" if v is None else str(v).strip('"') for v in values]


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _stream(raw: dict[str, list[Any]], present: list[str]) -> Any:
    """`stream-id`, else the lane rocprof drew the op on (ROCm 4: `tid` was that lane)."""
    for column in ("stream-id", "__lane", "tid"):
        if column in present:
            return to_ints(raw[column])
    return full(len(raw["Name"]), -1)


def _kinds(table: str, names: list[str]) -> Any:
    if table == "OPS":
        return np.full(len(names), KERNEL, np.int8)
    return np.array([MEMSET if "Fill" in n else MEMCPY for n in names], np.int8)


def _sizes(gpu: Table, data: list[str], host: Table | None, host_cols: dict[str, Any]) -> None:
    sizes, memory = data_sizes(data)
    gpu.columns["host_memory"] = memory
    kind = gpu.columns["kind"]
    if host is not None:
        span = Track(host_cols["pid"], host.columns["tid"], host.columns["start"],
                           host.columns["dur"])  # fmt: skip
        called = sizes_from_calls(
            kind, gpu.columns["start"], gpu.columns["correlation"],
            host.columns["correlation"], host_cols["args"], span,
        )  # fmt: skip
        sizes = np.where(sizes >= 0, sizes, called)
    gpu.columns["bytes"] = np.where(kind == MEMCPY, sizes, -1)
