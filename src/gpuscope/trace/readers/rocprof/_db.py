"""rocprof v1 `results.db`: the SQLite file tblextr.py builds before it writes the JSON and CSVs.

Tables: `KERN` (`A` before ROCm 5; the dispatch records, i.e. results.csv's rows, often empty),
`HIP` / `HSA` (API calls), `OPS` (kernels of the op trace), `COPY` (copies and fills) and
`rocTX` (user ranges). Every row's `Index` is its correlation id, except in KERN (the dispatch
index). Columns moved between versions (ROCm 4's OPS has `proc-id` and the stream as `tid`;
later ones `stream-id` and `__lane`), so every column is looked up by name.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sniff
from gpuscope.trace.model import ANNOTATION, HSA, I64, KERNEL, MEMCPY, MEMSET, RUNTIME
from gpuscope.trace.readers.rocprof._dispatch import (
    LAUNCH_COLUMNS,
    counter_block,
    is_counter,
    launch_params,
)
from gpuscope.trace.readers.rocprof._flows import Track
from gpuscope.trace.readers.rocprof._piece import (
    BARRIER_NAMES,
    CounterBlock,
    Piece,
    Table,
    copy_kinds,
    full,
    strip_kd,
    to_ints,
)
from gpuscope.trace.readers.rocprof._sizes import data_sizes, sizes_from_calls

KNOWN_TABLES = frozenset({"A", "KERN", "HIP", "HSA", "COPY", "OPS", "rocTX", "MM", "B", "C"})
# HIP and HSA number their calls independently: HSA ids are moved out of HIP's range
HSA_CORRELATION_OFFSET = 1 << 40
FETCH = 100_000
_COPY_ARGS = ("CASE WHEN Name GLOB 'hipMemcpy*' OR Name GLOB 'hipMemset*' OR Name GLOB "
              "'hsa_amd_memory_async_copy*' THEN args END")  # fmt: skip
_EXPECTED = "rocprof's results.db (tables KERN or A, HIP, HSA, OPS, COPY, rocTX)"
_TIMED = ("BeginNs", "EndNs", "Name")
_REQUIRED = {"HIP": _TIMED, "HSA": _TIMED, "OPS": _TIMED, "COPY": _TIMED, "rocTX": _TIMED}
_DISPATCH_INTS = ("Index", "gpu-id", "queue-id", *LAUNCH_COLUMNS, "BeginNs", "EndNs")


def is_rocprof_db(path: str) -> bool:
    names = _sniff.sqlite_names(path) - {"sqlite_sequence"}
    return bool(names) and names <= KNOWN_TABLES and bool(names & {"A", "KERN"})


def read_db(path: str) -> Piece:
    try:
        with closing(_sniff.connect(path)) as db:
            return _Reader(path, db).piece()
    except (sqlite3.Error, UnicodeDecodeError) as error:
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

    def select(
        self,
        table: str,
        ints: tuple[str, ...] = (),
        texts: tuple[str, ...] = (),
        floats: tuple[str, ...] = (),
        sql: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Columns of `table` in one pass, batch by batch: ints as int64 (-1 when absent),
        floats (NaN), texts ("" for NULL; equal texts share one string). `sql` gives an
        expression to select instead of a column."""
        present = set(self.columns(table))
        keys = [*ints, *floats, *texts]
        exprs = [(sql or {}).get(k) or (f'"{k}"' if k in present else "NULL") for k in keys]
        parts: dict[str, list[Any]] = {k: [] for k in keys}
        shared: dict[str, str] = {}
        cursor = self.db.execute(f'SELECT {", ".join(exprs)} FROM "{table}"')
        while rows := cursor.fetchmany(FETCH):
            for key, values in zip(keys, zip(*rows, strict=True), strict=True):
                if key in texts:
                    parts[key].extend(shared.setdefault(v, v) if v else "" for v in values)
                else:
                    parts[key].append(to_ints(values) if key in ints else _floats(values))
        return {k: v if k in texts else _joined(v, k in ints) for k, v in parts.items()}

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
        copy_args = "args" in self.columns(table)  # only copies' arguments are ever needed
        raw = self.select(
            table,
            ints=("BeginNs", "EndNs", "tid", "Index"),
            texts=("Name", "args"),
            sql={"args": _COPY_ARGS} if copy_args else None,
        )
        start, end = raw["BeginNs"], raw["EndNs"]
        corr = raw["Index"]
        if domain == HSA:
            corr = np.where(corr >= 0, corr + HSA_CORRELATION_OFFSET, -1)
        size = len(start)
        cols = {
            "start": start,
            "dur": np.where(end >= start, end - start, -1),
            "tid": raw["tid"],
            "correlation": corr,
            "domain": np.full(size, domain, np.int8),
            "pid": full(size, domain),
        }
        return _names(raw["Name"]), cols, raw["args"]

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
        ints = ("BeginNs", "EndNs", "dev-id", "tid", "stream-id", "__lane", "Index")
        raw = self.select(table, ints=ints, texts=("Name", "Data"))
        names = strip_kd(_names(raw["Name"]))
        keep = np.array([n not in BARRIER_NAMES for n in names], bool)
        start, end = raw["BeginNs"], raw["EndNs"]
        present = self.columns(table)
        corr = raw["Index"]
        if table == "COPY" and "dev-id" not in present:  # HSA async copies: HSA call ids
            corr = np.where(corr >= 0, corr + HSA_CORRELATION_OFFSET, -1)
        kind = _kinds(table, names)
        cols = {
            "kind": kind,
            "start": start,
            "dur": np.where(end >= start, end - start, -1),
            "device": raw["dev-id"],
            "stream": _stream(raw, present),
            "correlation": corr,
            "copy": copy_kinds(names, kind),
        }
        data = raw["Data"]
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
        raw = self.select(table, ints=_DISPATCH_INTS, texts=("KernelName",))
        ints = {key: raw[key] for key in _DISPATCH_INTS}
        names = strip_kd(_names(raw["KernelName"]))
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
        raw = self.select(table, floats=tuple(names))
        return counter_block(names, np.column_stack([raw[n] for n in names]))

    # -- user ranges ------------------------------------------------------------------------
    def _markers(self) -> Table | None:
        if "rocTX" not in self.tables:
            return None
        raw = self.select("rocTX", ints=("BeginNs", "EndNs", "tid"), texts=("Name",))
        start, end = raw["BeginNs"], raw["EndNs"]
        dur = np.where(end >= start, end - start, -1)
        return Table(
            _names(raw["Name"]),
            {
                "kind": np.full(len(start), ANNOTATION, np.int8),
                "start": start,
                "dur": np.where(dur == 1, 0, dur),  # a roctxMark is stored as [t, t + 1]
                "tid": raw["tid"],
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


def _names(values: list[str]) -> list[str]:
    """Names as text: rocprof stored some with their CSV quotes (`"<barrier packet>"`)."""
    cache: dict[str, str] = {}
    return [cache.setdefault(v, v.strip('"') if isinstance(v, str) else str(v)) for v in values]


def _floats(values: tuple[Any, ...]) -> Any:
    try:
        return np.array(values, np.float64)
    except (TypeError, ValueError):
        return np.array([_float(v) for v in values], np.float64)


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _joined(parts: list[Any], ints: bool) -> Any:
    if parts:
        return np.concatenate(parts)
    return np.zeros(0, np.int64 if ints else np.float64)


def _stream(raw: dict[str, Any], present: list[str]) -> Any:
    """`stream-id`, else the lane rocprof drew the op on (ROCm 4: `tid` was that lane)."""
    for column in ("stream-id", "__lane", "tid"):
        if column in present:
            return raw[column]
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
