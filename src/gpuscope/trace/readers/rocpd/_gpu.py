"""Device work of one rocpd run: kernel dispatches with their launch parameters, memory copies,
and the hardware counters collected per dispatch.

rocprofv3 writes each dispatch's grid in work-items (the AQL packet's grid size): it is divided
by the work-group size to give work-groups, as `LaunchParams` wants. LDS and scratch are the
dispatch's own sizes; register counts come from the kernel symbol.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuscope.trace import _sql
from gpuscope.trace.model import I64, KERNEL, MEMCPY, UNKNOWN_MEMORY
from gpuscope.trace.readers.rocpd._meta import DISPATCH
from gpuscope.trace.readers.rocpd._run import RunReader, copy_kinds, external, kernel_name

_DISPATCH_COLUMNS = (
    ("start", 'K."start"'),
    ("end", 'K."end"'),
    ("agent", "K.agent_id"),
    ("kernel", "K.kernel_id"),
    ("stream", "K.stream_id"),
    ("tid", "ifnull(K.tid, -1)"),
    ("grid_x", "K.grid_size_x"),
    ("grid_y", "K.grid_size_y"),
    ("grid_z", "K.grid_size_z"),
    ("block_x", "K.workgroup_size_x"),
    ("block_y", "K.workgroup_size_y"),
    ("block_z", "K.workgroup_size_z"),
    ("lds", "ifnull(K.group_segment_size, -1)"),
    ("scratch", "ifnull(K.private_segment_size, -1)"),
    ("event", "ifnull(K.event_id, -1)"),
)
_COPY_COLUMNS = (
    ("start", 'M."start"'),
    ("end", 'M."end"'),
    ("name", "M.name_id"),
    ("dst", "ifnull(M.dst_agent_id, -1)"),
    ("src", "ifnull(M.src_agent_id, -1)"),
    ("bytes", "ifnull(M.size, -1)"),
    ("stream", "ifnull(M.stream_id, -1)"),
    ("tid", "ifnull(M.tid, -1)"),
)


def kernels(reader: RunReader) -> tuple[I64, int]:
    """Add the run's dispatches; returns their event ids and the gpu row of the first one."""
    first = reader.parts.rows("gpu")
    if reader.table(DISPATCH) is None:
        return np.zeros(0, np.int64), first
    cols = _select(reader, DISPATCH, "K", _DISPATCH_COLUMNS, "kernel dispatches")
    size = len(cols["start"])
    names, registers = _symbols(reader, cols["kernel"])
    reader.parts.add(
        "gpu",
        size,
        kind=np.full(size, KERNEL, np.int8),
        name=names,
        start=cols["start"],
        dur=cols["end"] - cols["start"],
        device=reader.agents.device_ids(cols["agent"]),
        stream=_stream(reader, cols["stream"]),
        correlation=reader.correlation(cols["corr"]),
        external_id=external(cols["external"]),
    )
    _launch_params(reader, cols, registers, first)
    reader.counts["kernel_dispatch"] = reader.counts.get("kernel_dispatch", 0) + size
    return cols["event"], first


def _select(reader: RunReader, base: str, alias: str, columns: Any, what: str) -> dict[str, I64]:
    """Selected columns plus the event's stack id ("corr") and external id ("external")."""
    stack, extern, join = reader.event_join(alias)
    names = [name for name, _ in columns] + ["corr", "external"]
    exprs = [expr for _, expr in columns] + [stack, extern]
    table = reader.run.table(base) or base
    return dict(zip(names, reader.scan.ints(table, exprs, what, alias, join), strict=True))


def _stream(reader: RunReader, stream: I64) -> I64:
    result: I64 = np.where(stream >= 0, stream + reader.offset, -1)
    return result


def _symbols(reader: RunReader, kernel_ids: I64) -> tuple[Any, dict[str, I64]]:
    """Kernel name index per dispatch and the registers (VGPR, AGPR, SGPR) of its symbol."""
    table = reader.table("rocpd_info_kernel_symbol")
    sql = (
        f"SELECT id, kernel_name, display_name, ifnull(arch_vgpr_count, -1), "
        f"ifnull(accum_vgpr_count, -1), ifnull(sgpr_count, -1) FROM {table}"
    )
    rows = reader.db.execute(sql).fetchall() if table else []
    text = {int(r[0]): kernel_name(r[1] or "", r[2] or "") for r in rows}
    ids = np.array([r[0] for r in rows], np.int64)
    at = _sql.lookup(ids, kernel_ids)
    registers: dict[str, I64] = {}
    for column, key in enumerate(("registers", "accum_registers", "scalar_registers"), 3):
        values = np.array([r[column] if type(r[column]) is int else -1 for r in rows], np.int64)
        registers[key] = np.where(at >= 0, values[np.maximum(at, 0)] if len(values) else -1, -1)
    return _sql.intern_ids(reader.parts, kernel_ids, text, "unknown_kernel"), registers


def _launch_params(
    reader: RunReader, cols: dict[str, I64], registers: dict[str, I64], first: int
) -> None:
    size = len(cols["start"])
    reader.parts.add(
        "launch_params",
        size,
        row=np.arange(first, first + size, dtype=np.int64),
        **{f"grid_{a}": _sql.ceil_div(cols[f"grid_{a}"], cols[f"block_{a}"]) for a in "xyz"},
        **{f"block_{a}": cols[f"block_{a}"] for a in "xyz"},
        shared_mem=cols["lds"],
        scratch=cols["scratch"],
        **registers,
    )


def copies(reader: RunReader) -> None:
    """Add the run's memory copies; the device is the GPU side of the copy."""
    if reader.table("rocpd_memory_copy") is None:
        return
    cols = _select(reader, "rocpd_memory_copy", "M", _COPY_COLUMNS, "memory copies")
    size = len(cols["start"])
    if size == 0:
        return
    text = reader.text(cols["name"])
    unique, inverse = np.unique(cols["name"], return_inverse=True)
    kinds = copy_kinds([text.get(int(i), "") for i in unique])[inverse.reshape(-1)]
    reader.parts.add(
        "gpu",
        size,
        kind=np.full(size, MEMCPY, np.int8),
        name=_sql.intern_ids(reader.parts, cols["name"], text, "MEMORY_COPY"),
        start=cols["start"],
        dur=cols["end"] - cols["start"],
        device=_gpu_side(reader, cols["dst"], cols["src"]),
        stream=_stream(reader, cols["stream"]),
        correlation=reader.correlation(cols["corr"]),
        external_id=external(cols["external"]),
        bytes=cols["bytes"],
        copy=kinds,
        host_memory=np.full(size, UNKNOWN_MEMORY, np.int8),
    )
    reader.counts["memory_copy"] = reader.counts.get("memory_copy", 0) + size


def _gpu_side(reader: RunReader, dst: I64, src: I64) -> I64:
    """The device of a copy: its destination agent when that is a GPU or the source is not."""
    gpus = np.array(sorted(reader.agents.gpus), np.int64)
    agent = np.where(np.isin(dst, gpus) | ~np.isin(src, gpus), dst, src)
    return reader.agents.device_ids(agent)


def counters(reader: RunReader, events: I64, first: int) -> dict[str, str]:
    """Add the run's PMC values (summed over instances, as the counters_collection view does);
    returns the unit of each counter that has one."""
    table, info = reader.table("rocpd_pmc_event"), reader.table("rocpd_info_pmc")
    if table is None or info is None:
        return {}
    sql = f"SELECT event_id, pmc_id, sum(value) FROM {table} GROUP BY event_id, pmc_id"
    rows = reader.db.execute(sql).fetchall()
    if not rows:
        return {}
    names = {
        int(i): (str(n), str(u or ""))
        for i, n, u in reader.db.execute(f"SELECT id, name, units FROM {info}")
    }
    event_ids = np.array([r[0] if type(r[0]) is int else -1 for r in rows], np.int64)
    at = _sql.lookup(events, event_ids)
    reader.parts.add(
        "counters",
        len(rows),
        row=np.where(at >= 0, at + first, -1),
        name=reader.parts.intern(names.get(int(r[1]), (f"pmc {r[1]}", ""))[0] for r in rows),
        value=np.array([float(r[2]) if r[2] is not None else np.nan for r in rows], np.float64),
    )
    reader.counts["pmc_event"] = reader.counts.get("pmc_event", 0) + len(rows)
    return {name: unit for name, unit in names.values() if unit}
