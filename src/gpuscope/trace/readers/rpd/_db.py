"""Reading an `.rpd` database (rocmProfileData, schema 2 and 3) into a `Trace`.

Each table is read once, only the columns needed, into numpy (`_sql_scan`); tables are joined
in numpy by id (`_sql.lookup`), never row by row: `rocpd_api_ops` links an op to the API call
that launched it (the call's id is the correlation of both), `rocpd_kernelapi` /
`rocpd_copyapi` hang off that call. Ids of a second tracing session are offset by 2**32: joins
by id are unaffected. Times are ns on the host's boot clock.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscope.errors import ReaderError
from gpuscope.trace import _sql
from gpuscope.trace._builder import TraceParts, trace_meta
from gpuscope.trace._jsonstream import Progress
from gpuscope.trace._sql_scan import Scan
from gpuscope.trace.model import I64, KERNEL, MEMCPY, UNKNOWN_MEMORY, Device, Trace
from gpuscope.trace.readers.rpd import _host
from gpuscope.trace.readers.rpd import _vocab as vocab

_OP = ("id", "gpuId", "queueId", '"start"', '"end"', "description_id", "opType_id")
_GRID = ("gridX", "gridY", "gridZ", "workgroupX", "workgroupY", "workgroupZ")
_KERNEL_API = ("api_ptr_id", *_GRID, "groupSegmentSize", "privateSegmentSize", "kernelName_id")


@dataclass
class Tables:
    """The database, the rows read per table and the strings looked up so far."""

    scan: Scan
    names: dict[str, str]
    strings: dict[int, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def db(self) -> sqlite3.Connection:
        return self.scan.db

    def ints(self, table: str, exprs: tuple[str, ...], what: str) -> list[I64]:
        if table not in self.names:
            return [np.zeros(0, np.int64) for _ in exprs]
        columns = self.scan.ints(table, exprs, what)
        self.counts[table.removeprefix("rocpd_")] = len(columns[0])
        return columns

    def text(self, *ids: Any, table: str = "rocpd_string") -> dict[int, str]:
        wanted = {int(i) for column in ids for i in _sql.factorize(np.asarray(column))[0]}
        if table != "rocpd_string":
            return _sql.strings(self.db, table, wanted) if table in self.names else {}
        missing = wanted - self.strings.keys()
        if missing:
            self.strings.update(_sql.strings(self.db, table, missing))
        return self.strings


@dataclass
class Ops:
    """The ops that are device work (KERNEL / MEMCPY / MEMSET), with their launching call."""

    id: I64
    gpu: I64
    queue: I64
    start: I64
    dur: I64
    desc: I64
    type: I64
    kind: I64
    corr: I64


def read(db: sqlite3.Connection, path: str, progress: Progress | None) -> Trace:
    names = _sql.objects(db)
    for table in ("rocpd_op", "rocpd_api", "rocpd_string"):
        if table not in names:
            raise ReaderError(f"a SQLite file but not an RPD trace: no {table} table")
    views = frozenset(name for name, kind in names.items() if kind == "view")
    tables = Tables(Scan(path, db, views, progress), names)
    parts = TraceParts()
    api = _host.read_api(tables)
    _host.add_api(tables, parts, api)
    calls = _Calls(api.id, api.name, api.text, api.name_set)
    del api  # the call table is held once, by the trace; only ids and names are needed on
    ops = _read_ops(tables)
    source = vocab.is_rocprofiler_source(calls.name_set, _type_names(tables, ops))
    _add_ops(tables, parts, ops, calls, source)
    op_ids = ops.id
    del ops
    _counters(tables, parts, op_ids)
    trace = parts.build(trace_meta(path, "rpd"))
    return _with_meta(tables, trace, path, calls.name_set, source)


@dataclass(frozen=True)
class _Calls:
    """What the ops need of the API calls: ids, name ids and their text."""

    id: I64
    name: I64
    text: dict[int, str]
    name_set: set[str]


def _read_ops(tables: Tables) -> Ops:
    op_id, gpu, queue, start, end, desc, op_type = tables.ints("rocpd_op", _OP, "rocpd_op")
    text = tables.text(op_type)
    kinds = _sql.per_id(op_type, lambda i: vocab.op_kind(text.get(i, "")))
    keep = kinds >= 0
    _count_skipped(tables, op_type[~keep], text)
    op_id = op_id[keep]
    link_api, link_op = tables.ints("rocpd_api_ops", ("api_id", "op_id"), "rocpd_api_ops")
    return Ops(
        id=op_id,
        gpu=gpu[keep],
        queue=queue[keep],
        start=start[keep],
        dur=(end - start)[keep],
        desc=desc[keep],
        type=op_type[keep],
        kind=kinds[keep],
        corr=_take(link_api, _sql.lookup(link_op, op_id)),
    )


def _take(values: I64, at: I64) -> I64:
    """values[at], -1 where at is -1."""
    if len(values) == 0:
        return np.full(len(at), -1, np.int64)
    result: I64 = np.where(at >= 0, values[np.maximum(at, 0)], -1)
    return result


def _type_names(tables: Tables, ops: Ops) -> set[str]:
    text = tables.text(ops.type)
    return {text.get(int(i), "") for i in _sql.factorize(ops.type)[0]}


def _count_skipped(tables: Tables, op_types: I64, text: dict[int, str]) -> None:
    """Barriers and markers are not device work: counted by type, not read."""
    unique, inverse = _sql.factorize(op_types)
    for type_id, count in zip(unique, np.bincount(inverse, minlength=len(unique)), strict=True):
        key = f"op:{text.get(int(type_id), type_id)}"
        tables.counts[key] = tables.counts.get(key, 0) + int(count)


def _add_ops(tables: Tables, parts: TraceParts, ops: Ops, api: _Calls, source: bool) -> None:
    kernel = ops.kind == KERNEL
    kapi = tables.ints("rocpd_kernelapi", _kernel_api_exprs(), "rocpd_kernelapi")
    kapi_at = np.where(kernel, _sql.lookup(kapi[0], ops.corr), -1)
    nbytes, memcpy_kind = _copy_api(tables, ops.corr, ~kernel)
    name_ids = _name_ids(tables, ops, _take(kapi[-1], kapi_at))
    size, first = len(ops.id), parts.rows("gpu")
    parts.add(
        "gpu",
        size,
        kind=ops.kind.astype(np.int8),
        name=_sql.intern_ids(parts, name_ids, tables.text(name_ids)),
        start=ops.start,
        dur=ops.dur,
        device=ops.gpu,
        stream=ops.queue,
        correlation=ops.corr,
        bytes=nbytes,
        copy=_directions(tables, ops, memcpy_kind),
        host_memory=np.full(size, UNKNOWN_MEMORY, np.int8),
    )
    launch = _launch_api_names(api, ops.corr)
    _launch_params(parts, kapi, kapi_at, launch, first, api.text, source)


def _kernel_api_exprs() -> tuple[str, ...]:
    return tuple(_sql.integer(_sql.quote(column)) for column in _KERNEL_API)


def _copy_api(tables: Tables, corr: I64, copies: Any) -> tuple[I64, I64]:
    """Bytes (size, else width × height for 2-D copies) and hipMemcpyKind per op (-1: none)."""
    size, width, height = (_sql.integer(c) for c in ("size", "width", "height"))
    exprs = (
        "api_ptr_id",
        f"(CASE WHEN {size} > 0 THEN {size} WHEN {width} > 0 AND {height} > 0 "
        f"THEN {width} * {height} ELSE -1 END)",
        _sql.integer("kind"),
    )
    api_id, nbytes, kind = tables.ints("rocpd_copyapi", exprs, "rocpd_copyapi")
    at = np.where(copies, _sql.lookup(api_id, corr), -1)
    return _take(nbytes, at), _take(kind, at)


def _name_ids(tables: Tables, ops: Ops, kernel_name: I64) -> I64:
    """The op's description (the kernel name); else the launch's kernel name; else its type."""
    text = tables.text(ops.desc)
    empty = _sql.per_id(ops.desc, lambda i: int(text.get(i, "") == ""), 1).astype(bool)
    fallback = np.where(kernel_name >= 0, kernel_name, ops.type)
    result: I64 = np.where(empty, fallback, ops.desc)
    return result


def _directions(tables: Tables, ops: Ops, memcpy_kind: I64) -> Any:
    """COPY_KINDS index per op, decided once per (op type, hipMemcpyKind) pair."""
    text = tables.text(ops.type)
    keys = (ops.type << 3) | np.clip(memcpy_kind + 1, 0, 7)
    found = _sql.per_id(keys, lambda k: vocab.copy_direction(text.get(k >> 3, ""), (k & 7) - 1))
    return np.where(ops.kind == MEMCPY, found, -1).astype(np.int8)


def _launch_api_names(api: _Calls, corr: I64) -> I64:
    return _take(api.name, _sql.lookup(api.id, corr))


def _launch_params(
    parts: TraceParts,
    kapi: list[I64],
    at: I64,
    launch: I64,
    first: int,
    text: dict[int, str],
    source: bool,
) -> None:
    """Grid in work-groups: divided by the work-group size where the tracer wrote work-items.

    `at` is each op's row in rocpd_kernelapi (-1: none), `launch` its call's name id.
    """
    ops = np.flatnonzero(at >= 0)
    k = at[ops]
    in_items = _sql.per_id(
        launch[ops], lambda i: int(vocab.grid_in_work_items(text.get(i, ""), source)), 0
    ).astype(bool)
    columns: dict[str, Any] = {}
    for axis, grid, group in zip("xyz", kapi[1:4], kapi[4:7], strict=True):
        size, block = grid[k], group[k]
        columns[f"grid_{axis}"] = np.where(in_items, _sql.ceil_div(size, block), size)
        columns[f"block_{axis}"] = block
    parts.add(
        "launch_params",
        len(ops),
        row=ops.astype(np.int64) + first,
        shared_mem=kapi[7][k],
        scratch=kapi[8][k],
        **columns,
    )


def _counters(tables: Tables, parts: TraceParts, gpu_ops: I64) -> None:
    """Schema 3 `rocpd_counter` values per op."""
    if "rocpd_counter" not in tables.names:
        return
    sql = "SELECT op_id, name_id, value FROM rocpd_counter"
    op_id, name_id, values = _sql.float_columns(tables.db, sql, 3)
    if len(op_id) == 0:
        return
    ops, names = op_id.astype(np.int64), name_id.astype(np.int64)
    parts.add(
        "counters",
        len(ops),
        row=_sql.lookup(gpu_ops, ops),
        name=_sql.intern_ids(parts, names, tables.text(names)),
        value=values,
    )
    tables.counts["counter"] = len(ops)


def _with_meta(tables: Tables, trace: Trace, path: str, apis: set[str], source: bool) -> Trace:
    nvidia = any(name.startswith("cu") for name in apis)
    gpus = sorted(int(d) for d in _sql.factorize(trace.gpu.device.astype(np.int64))[0])
    meta = trace_meta(
        path,
        "rpd",
        schema=_schema_version(tables.db),
        vendor="nvidia" if nvidia else "amd",
        devices=tuple(Device(g, f"GPU{g}") for g in gpus),
        event_counts=dict(tables.counts),
        extra={"data_source": "rocprofiler-sdk" if source else "roctracer"},
        provides=_provides(tables),
        clock="" if nvidia else "boot",
    )
    return dataclasses.replace(trace, meta=meta)


def _schema_version(db: sqlite3.Connection) -> str:
    try:
        row = db.execute("SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no metadata table: the oldest files
        return "1"
    return str(row[0]) if row else "1"


def _provides(tables: Tables) -> frozenset[str]:
    """rpd_tracer records all of these; device names / architectures it does not."""
    keys = {"kernels", "timestamps", "copies", "copy_bytes", "host_api", "links", "markers"}
    keys.add("launch_params")
    if tables.counts.get("counter", 0):
        keys.add("counters")
    return frozenset(keys)
