"""Make large rocpd (rocprofv3) and RPD (rocmProfileData) databases from the real schemas.

The DDL is copied at run time from the reference databases' `sqlite_master` — rocpd from
`rocprofv3/rocpd-db-gfx942/15_results.db`, RPD from `rpd/matmul_result.rpd` — so the output has
exactly the tables, views and column types the profilers write. The small tables (strings,
agents, kernel symbols, process, threads, queues, streams, metadata) are copied from the
reference. Without the reference (a clone without ../shared), `make_rocpd(..., reference=None)`
(`--rocpd-reference builtin`) uses the rocpd tables written out below instead: the same tables
and columns, no foreign keys, indexes or data views, one made-up MI300X process. The event tables
are synthesised: N kernel dispatches (a few hundred kernel names,
log-normal durations, exponential gaps, a second stream running 10 % of the work), each launched
by a `hipLaunchKernel` call, a memory copy every 100 ops and a ROCTX range every 1000.

`--runs K` writes K rocpd runs into one database, as `rocpd merge` does: every run keeps its own
uuid-suffixed tables and the un-suffixed views become `UNION ALL`s of them.

    python benchmarks/make_big_sqlite.py --rows 1000000            # -> bench-data/big_*.{db,rpd}
    python benchmarks/make_big_sqlite.py --rows 1000 --runs 2 --format rocpd --out /tmp/x
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

REPO = Path(__file__).resolve().parents[1]
FORMATS = REPO / ".." / "shared" / "reference" / "formats"
ROCPD_REFERENCE = FORMATS / "rocprofv3" / "rocpd-db-gfx942" / "15_results.db"
RPD_REFERENCE = FORMATS / "rpd" / "matmul_result.rpd"
START_NS = 1_000_000_000_000  # boot-clock ns of the first op
KERNEL_NAMES = 300
ROCPD_SMALL = (
    "rocpd_metadata",
    "rocpd_string",
    "rocpd_info_node",
    "rocpd_info_process",
    "rocpd_info_thread",
    "rocpd_info_agent",
    "rocpd_info_queue",
    "rocpd_info_stream",
    "rocpd_info_code_object",
    "rocpd_info_kernel_symbol",
    "rocpd_info_pmc",
)


# -- synthetic workload ------------------------------------------------------------------------
class Workload:
    """N ops on one GPU: kernel name index, start, end, stream, and whether the op is a copy."""

    def __init__(self, rows: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.rows = rows
        weights = 1.0 / np.arange(1, KERNEL_NAMES + 1)  # a few hot kernels, a long tail
        self.kernel = rng.choice(KERNEL_NAMES, rows, p=weights / weights.sum())
        self.dur = np.maximum(rng.lognormal(np.log(20_000), 1.0, rows), 1_000).astype(np.int64)
        gaps = rng.exponential(5_000, rows).astype(np.int64)
        self.stream = (rng.random(rows) < 0.1).astype(np.int64)
        clock = np.cumsum(self.dur * (self.stream == 0) + gaps)  # stream 1 overlaps stream 0
        self.start = START_NS + clock - self.dur
        self.end = self.start + self.dur
        self.copy = np.arange(rows) % 100 == 99
        self.launch = self.start - rng.integers(5_000, 50_000, rows)  # host call before the op
        self.launch_dur = rng.integers(2_000, 8_000, rows)
        self.grid = rng.choice([1, 8, 64, 304, 1024, 4096], rows)
        self.block = rng.choice([64, 128, 256, 512], rows)


def kernel_names() -> list[str]:
    """Realistic kernel names: Tensile GEMMs, ATen elementwise / reductions, rocclr helpers."""
    names = []
    for i in range(KERNEL_NAMES):
        family = i % 3
        if family == 0:
            names.append(f"Cijk_Ailk_Bljk_BBS_BH_MT128x{64 + i % 64}x32_MI16x16x16x1_SN_ISA942_{i}")
        elif family == 1:
            names.append(
                f"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<"
                f"at::native::BinaryFunctor<float, float, float, Op{i}> > >(int, Op{i})"
            )
        else:
            names.append(f"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<{i}> >()")
    return names


def insert(
    db: sqlite3.Connection, table: str, columns: str, rows: Iterable[tuple[Any, ...]]
) -> None:
    marks = ",".join("?" * len(columns.split(",")))
    db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def fast(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")


def attach(db: sqlite3.Connection, reference: Path) -> None:
    db.execute(f"ATTACH DATABASE 'file:{quote(str(reference.resolve()))}?mode=ro' AS ref")


# -- rocpd without the reference -------------------------------------------------------------------
# rocpd schema 3 (shared/notes/formats.md §3.8) written out by hand: every table with the columns
# rocprofv3 writes (after `id`, `guid`; `extdata` last but in two), so the readers' SELECTs and the
# generator's INSERTs see what they see in a real database. Not the real DDL's bytes: no foreign
# keys, CHECKs, indexes or data views (gpuscope reads the physical tables).
BUILTIN_SUFFIX = "_00000000_0000_0000_0000_000000000000"
_ROCPD_TABLES = {
    "rocpd_string": "string TEXT NOT NULL UNIQUE ON CONFLICT ABORT",
    "rocpd_info_node": (
        "hash BIGINT NOT NULL UNIQUE, machine_id TEXT NOT NULL UNIQUE, "
        "system_name TEXT, hostname TEXT, release TEXT, version TEXT, hardware_name TEXT, "
        "domain_name TEXT"
    ),
    "rocpd_info_process": (
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, "
        'fini BIGINT, start BIGINT, "end" BIGINT, command TEXT, '
        "environment JSONB DEFAULT '{}' NOT NULL"
    ),
    "rocpd_info_thread": (
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, "
        'tid INTEGER NOT NULL, name TEXT, start BIGINT, "end" BIGINT'
    ),
    "rocpd_info_agent": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, type TEXT, absolute_index INTEGER, "
        "logical_index INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, "
        "vendor_name TEXT, product_name TEXT, user_name TEXT"
    ),
    "rocpd_info_queue": "nid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT",
    "rocpd_info_stream": "nid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT",
    "rocpd_info_pmc": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, agent_id INTEGER, "
        "target_arch TEXT, event_code INT, instance_id INTEGER, name TEXT NOT NULL, "
        "symbol TEXT NOT NULL, description TEXT, long_description TEXT DEFAULT '', component TEXT, "
        "units TEXT DEFAULT '', value_type TEXT, block TEXT, expression TEXT, is_constant INTEGER, "
        "is_derived INTEGER"
    ),
    "rocpd_info_code_object": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, agent_id INTEGER, "
        "uri TEXT, load_base BIGINT, load_size BIGINT, load_delta BIGINT, storage_type TEXT"
    ),
    "rocpd_info_kernel_symbol": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, "
        "code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT, "
        "kernel_object INTEGER, kernarg_segment_size INTEGER, kernarg_segment_alignment INTEGER, "
        "group_segment_size INTEGER, private_segment_size INTEGER, sgpr_count INTEGER, "
        "arch_vgpr_count INTEGER, accum_vgpr_count INTEGER"
    ),
    "rocpd_track": "nid INTEGER NOT NULL, pid INTEGER, tid INTEGER, name_id INTEGER",
    "rocpd_event": (
        "category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER, "
        "correlation_id INTEGER, call_stack JSONB DEFAULT '{}' NOT NULL, "
        "line_info JSONB DEFAULT '{}' NOT NULL"
    ),
    "rocpd_arg": (
        "event_id INTEGER NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, "
        "name TEXT NOT NULL, value TEXT"
    ),
    "rocpd_pmc_event": "event_id INTEGER, pmc_id INTEGER NOT NULL, value REAL DEFAULT 0.0",
    "rocpd_region": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL, "
        'start BIGINT NOT NULL, "end" BIGINT NOT NULL, name_id INTEGER NOT NULL, event_id INTEGER'
    ),
    "rocpd_sample": "track_id INTEGER NOT NULL, timestamp BIGINT NOT NULL, event_id INTEGER",
    "rocpd_kernel_dispatch": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER, "
        "agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, "
        "queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, start BIGINT NOT NULL, "
        '"end" BIGINT NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER, '
        "workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, "
        "workgroup_size_z INTEGER NOT NULL, grid_size_x INTEGER NOT NULL, "
        "grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, region_name_id INTEGER, "
        "event_id INTEGER"
    ),
    "rocpd_memory_copy": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER, "
        'start BIGINT NOT NULL, "end" BIGINT NOT NULL, name_id INTEGER NOT NULL, '
        "dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, "
        "size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER, region_name_id INTEGER, "
        "event_id INTEGER"
    ),
    "rocpd_memory_allocate": (
        "nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER, "
        'agent_id INTEGER, type TEXT, level TEXT, start BIGINT NOT NULL, "end" BIGINT NOT NULL, '
        "address INTEGER, size INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER, "
        "event_id INTEGER"
    ),
}
_NO_EXTDATA = ("rocpd_string", "rocpd_info_node")
# rocprofv3 --kernel-trace --hip-runtime-trace (the reference's options but thread trace)
_ENVIRONMENT = '{"ROCPROF_KERNEL_TRACE": "1", "ROCPROF_HIP_RUNTIME_API_TRACE": "1"}'
_MI300X = (
    '{"cu_count": 304, "simd_count": 1216, "num_xcc": 8, "wave_front_size": 64, '
    '"max_waves_per_cu": 32, "lds_size_in_kb": 64, "max_engine_clk_fcompute": 2100}'
)
# the small tables: one node, process (pid 4242, thread 4242), CPU agent 0, GPU agent 1, a queue,
# the default stream, one code object and one kernel symbol
_ROCPD_SMALL_ROWS = {
    "rocpd_info_node": ("id,hash,machine_id,system_name,hostname,hardware_name",
                        [(1, 1, "0" * 32, "Linux", "gpuscope-test", "x86_64")]),
    "rocpd_info_process": ("id,nid,ppid,pid,command,environment",
                           [(4242, 1, 1, 4242, "python train.py", _ENVIRONMENT)]),
    "rocpd_info_thread": ("id,nid,ppid,pid,tid", [(4242, 1, 1, 4242, 4242)]),
    "rocpd_info_agent": (
        "id,nid,pid,type,absolute_index,logical_index,type_index,name,vendor_name,product_name,"
        "extdata",
        [(0, 1, 4242, "CPU", 0, 0, 0, "CPU", "CPU", "CPU", "{}"),
         (1, 1, 4242, "GPU", 1, 1, 0, "gfx942", "AMD", "AMD Instinct MI300X", _MI300X)],
    ),
    "rocpd_info_queue": ("id,nid,pid,name", [(0, 1, 4242, "Default Queue")]),
    "rocpd_info_stream": ("id,nid,pid,name", [(0, 1, 4242, "Default Stream")]),
    "rocpd_info_code_object": ("id,nid,pid,agent_id,uri,storage_type",
                               [(1, 1, 4242, 1, "memory://4242#offset=0x0&size=4096", "MEMORY")]),
    "rocpd_info_kernel_symbol": (
        "id,nid,pid,code_object_id,kernel_name,display_name,kernarg_segment_size,sgpr_count,"
        "arch_vgpr_count",
        [(1, 1, 4242, 1, "__amd_rocclr_fillBufferAligned.kd", "__amd_rocclr_fillBufferAligned",
          64, 16, 8)],
    ),
}  # fmt: skip


def attach_builtin(db: sqlite3.Connection) -> None:
    """The builtin rocpd schema and small tables as the attached `ref` database (in memory)."""
    suffix, guid = BUILTIN_SUFFIX, BUILTIN_SUFFIX[1:].replace("_", "-")
    db.execute("ATTACH DATABASE ':memory:' AS ref")
    db.execute(
        f'CREATE TABLE ref."rocpd_metadata{suffix}" '
        "(id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL, value TEXT NOT NULL)"
    )
    metadata = [("schema_version", "3"), ("uuid", suffix), ("guid", guid)]
    insert(db, f'ref."rocpd_metadata{suffix}"', "tag,value", metadata)
    for base, columns in _ROCPD_TABLES.items():
        extdata = "" if base in _NO_EXTDATA else ", extdata JSONB DEFAULT '{}' NOT NULL"
        db.execute(
            f'CREATE TABLE ref."{base}{suffix}" (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
            f"guid TEXT DEFAULT '{guid}' NOT NULL, {columns}{extdata})"
        )
    for base, (names, rows) in _ROCPD_SMALL_ROWS.items():
        insert(db, f'ref."{base}{suffix}"', names, rows)


# -- rocpd -----------------------------------------------------------------------------------------
def make_rocpd(
    path: Path, rows: int, runs: int = 1, reference: Path | None = ROCPD_REFERENCE
) -> None:
    """Write a rocpd database of `runs` merged runs with `rows` kernel dispatches each, on the
    reference's schema (None: the builtin one)."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None, uri=True)
    fast(db)
    if reference is None:
        attach_builtin(db)
    else:
        attach(db, reference)
    schema = db.execute("SELECT type, name, sql FROM ref.sqlite_master WHERE sql IS NOT NULL")
    schema = [row for row in schema if not row[1].startswith("sqlite_")]
    old = _rocpd_suffix([name for kind, name, _ in schema if kind == "table"])
    old_guid = old[1:].replace("_", "-")
    suffixes = []
    db.execute("BEGIN")
    for run in range(runs):
        suffix = f"_0000{run:04x}_e16d_716d_b3cc_a4a0629bb{run:03x}"
        suffixes.append(suffix)
        guid = suffix[1:].replace("_", "-")
        for kind, _, sql in schema:
            if kind == "table":
                db.execute(sql.replace(old, suffix).replace(old_guid, guid))
        _copy_small(db, old, suffix, guid)
        _rocpd_events(db, suffix, Workload(rows, seed=run))
    db.execute("COMMIT")
    _rocpd_views(db, schema, suffixes)
    db.close()


def _rocpd_suffix(tables: list[str]) -> str:
    for name in tables:
        match = re.match(r"^rocpd_kernel_dispatch(_.+)$", name)
        if match:
            return match.group(1)
    raise SystemExit("the reference has no rocpd_kernel_dispatch_<uuid> table")


def _copy_small(db: sqlite3.Connection, old: str, suffix: str, guid: str) -> None:
    for base in ROCPD_SMALL:
        db.execute(f"INSERT INTO {base}{suffix} SELECT * FROM ref.{base}{old}")
        if base != "rocpd_metadata":
            db.execute(f"UPDATE {base}{suffix} SET guid = ?", (guid,))
    db.execute(f"UPDATE rocpd_metadata{suffix} SET value = ? WHERE tag = 'uuid'", (suffix,))
    db.execute(f"UPDATE rocpd_metadata{suffix} SET value = ? WHERE tag = 'guid'", (guid,))


def _string_ids(db: sqlite3.Connection, suffix: str, strings: list[str]) -> list[int]:
    table = f"rocpd_string{suffix}"
    for text in strings:
        db.execute(f"INSERT OR IGNORE INTO {table} (string) VALUES (?)", (text,))
    found = dict(db.execute(f"SELECT string, id FROM {table}"))
    return [int(found[text]) for text in strings]


def _rocpd_symbols(db: sqlite3.Connection, suffix: str) -> list[int]:
    table = f"rocpd_info_kernel_symbol{suffix}"
    first = int(db.execute(f"SELECT max(id) FROM {table}").fetchone()[0]) + 1
    nid, pid = db.execute(f"SELECT nid, pid FROM {table} LIMIT 1").fetchone()
    rows = [
        (first + i, nid, pid, 1, f"kernel_{i}.kd", name, 0, 64, 16, i % 4 * 1024, 0, 32, 64, 0)
        for i, name in enumerate(kernel_names())
    ]
    insert(
        db,
        table,
        "id,nid,pid,code_object_id,kernel_name,display_name,kernel_object,kernarg_segment_size,"
        "kernarg_segment_alignment,group_segment_size,private_segment_size,sgpr_count,"
        "arch_vgpr_count,accum_vgpr_count",
        rows,
    )
    return [first + i for i in range(len(rows))]


def _rocpd_events(db: sqlite3.Connection, suffix: str, work: Workload) -> None:
    symbols = np.array(_rocpd_symbols(db, suffix), np.int64)
    names = _string_ids(
        db,
        suffix,
        [
            "KERNEL_DISPATCH",
            "HIP_RUNTIME_API_EXT",
            "MEMORY_COPY",
            "hipLaunchKernel",
            "hipMemcpyAsync",
            "MEMORY_COPY_HOST_TO_DEVICE",
            "MARKER_CORE_RANGE_API",
            "roctxRangePushA",
        ],
    )
    dispatch_cat, api_cat, copy_cat, launch, memcpy, h2d, marker_cat, push = names
    nid, pid = db.execute(f"SELECT nid, pid FROM rocpd_info_process{suffix}").fetchone()
    agent = db.execute(f"SELECT id FROM rocpd_info_agent{suffix} WHERE type = 'GPU'").fetchone()[0]
    tid = db.execute(f"SELECT id FROM rocpd_info_thread{suffix}").fetchone()[0]
    queue = db.execute(f"SELECT max(id) FROM rocpd_info_queue{suffix}").fetchone()[0]
    streams = _streams(db, suffix, nid, pid)
    corr = np.arange(1, work.rows + 1, dtype=np.int64)
    api_events, op_events = corr, corr + work.rows  # event ids: calls first, then ops
    _events(db, suffix, api_events, np.full(work.rows, api_cat), corr)
    _events(db, suffix, op_events, np.where(work.copy, copy_cat, dispatch_cat), corr)
    call_names = np.where(work.copy, memcpy, launch)
    insert(
        db,
        f"rocpd_region{suffix}",
        "id,nid,pid,tid,start,end,name_id,event_id",
        zip(
            corr.tolist(),
            [nid] * work.rows,
            [pid] * work.rows,
            [tid] * work.rows,
            work.launch.tolist(),
            (work.launch + work.launch_dur).tolist(),
            call_names.tolist(),
            api_events.tolist(),
            strict=True,
        ),
    )
    kernels = ~work.copy
    insert(
        db,
        f"rocpd_kernel_dispatch{suffix}",
        "id,nid,pid,tid,agent_id,kernel_id,dispatch_id,queue_id,stream_id,start,end,"
        "private_segment_size,group_segment_size,workgroup_size_x,workgroup_size_y,"
        "workgroup_size_z,grid_size_x,grid_size_y,grid_size_z,region_name_id,event_id",
        _dispatch_rows(
            work, kernels, symbols, corr, op_events, nid, pid, tid, agent, queue, streams, launch
        ),
    )
    copies = work.copy
    insert(
        db,
        f"rocpd_memory_copy{suffix}",
        "id,nid,pid,tid,start,end,name_id,dst_agent_id,src_agent_id,size,stream_id,event_id",
        zip(
            corr[copies].tolist(),
            *[[v] * int(copies.sum()) for v in (nid, pid, tid)],
            work.start[copies].tolist(),
            work.end[copies].tolist(),
            [h2d] * int(copies.sum()),
            [agent] * int(copies.sum()),
            [0] * int(copies.sum()),
            (work.dur[copies] * 10).tolist(),
            streams[work.stream[copies]].tolist(),
            op_events[copies].tolist(),
            strict=True,
        ),
    )
    _rocpd_markers(db, suffix, work, (nid, pid, tid), marker_cat, push)
    _process_row(db, suffix, work)


def _streams(db: sqlite3.Connection, suffix: str, nid: int, pid: int) -> Any:
    db.execute(
        f"INSERT OR IGNORE INTO rocpd_info_stream{suffix} (id, nid, pid, name) VALUES (1, ?, ?, ?)",
        (nid, pid, "Stream 0"),
    )
    return np.array([0, 1], np.int64)


def _events(db: sqlite3.Connection, suffix: str, ids: Any, category: Any, corr: Any) -> None:
    size = len(ids)
    insert(
        db,
        f"rocpd_event{suffix}",
        "id,category_id,stack_id,parent_stack_id,correlation_id",
        zip(ids.tolist(), category.tolist(), corr.tolist(), corr.tolist(), [0] * size, strict=True),
    )


def _dispatch_rows(
    work: Workload, kernels: Any, symbols: Any, corr: Any, events: Any, *fixed: Any
) -> Iterable[tuple[Any, ...]]:
    nid, pid, tid, agent, queue, streams, region = fixed
    size = int(kernels.sum())
    block = work.block[kernels]
    return zip(
        corr[kernels].tolist(),
        [nid] * size,
        [pid] * size,
        [tid] * size,
        [agent] * size,
        symbols[work.kernel[kernels]].tolist(),
        corr[kernels].tolist(),
        [queue] * size,
        streams[work.stream[kernels]].tolist(),
        work.start[kernels].tolist(),
        work.end[kernels].tolist(),
        [0] * size,
        ((work.kernel[kernels] % 4) * 1024).tolist(),
        block.tolist(),
        [1] * size,
        [1] * size,
        (work.grid[kernels] * block).tolist(),
        [1] * size,
        [1] * size,
        [region] * size,
        events[kernels].tolist(),
        strict=True,
    )


def _rocpd_markers(
    db: sqlite3.Connection,
    suffix: str,
    work: Workload,
    ids: tuple[int, int, int],
    cat: int,
    push: int,
) -> None:
    nid, pid, tid = ids
    steps = np.arange(0, work.rows, 1000)
    first_event = 2 * work.rows + 1
    first_region = work.rows + 1
    rows = []
    for n, i in enumerate(steps.tolist()):
        last = min(i + 999, work.rows - 1)
        event = first_event + n
        rows.append(
            (first_region + n, nid, pid, tid, int(work.launch[i]), int(work.end[last]), push, event)
        )
        db.execute(
            f"INSERT INTO rocpd_event{suffix} (id, category_id, stack_id, parent_stack_id, "
            "correlation_id, extdata) VALUES (?, ?, ?, 0, 0, ?)",
            (event, cat, first_region + n, f'{{"message":"step {n}"}}'),
        )
    insert(db, f"rocpd_region{suffix}", "id,nid,pid,tid,start,end,name_id,event_id", rows)


def _process_row(db: sqlite3.Connection, suffix: str, work: Workload) -> None:
    lo, hi = int(work.launch.min()) - 1_000_000, int(work.end.max()) + 1_000_000
    db.execute(
        f'UPDATE rocpd_info_process{suffix} SET init = ?, start = ?, fini = ?, "end" = ?, '
        "environment = json_set(environment, '$.ROCPROF_MEMORY_COPY_TRACE', '1', "
        "'$.ROCPROF_MARKER_API_TRACE', '1')",
        (lo, lo, hi, hi),
    )


def _rocpd_views(db: sqlite3.Connection, schema: list[Any], suffixes: list[str]) -> None:
    """Un-suffixed base views as UNION ALLs of every run (what `rocpd merge` does), then the
    data views of the reference, which read the base views."""
    tables = [name for kind, name, _ in schema if kind == "table"]
    old = _rocpd_suffix(tables)
    for name in tables:
        base = name[: -len(old)]
        union = " UNION ALL ".join(f"SELECT * FROM {base}{s}" for s in suffixes)
        db.execute(f"CREATE VIEW {base} AS {union}")
    for kind, name, sql in schema:
        if kind == "view" and not name.startswith("rocpd_"):
            db.execute(sql)


# -- RPD -----------------------------------------------------------------------------------------
def make_rpd(path: Path, rows: int, reference: Path = RPD_REFERENCE, seed: int = 0) -> None:
    """Write an RPD (schema 2) database with `rows` GPU ops and their API calls."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None, uri=True)
    fast(db)
    attach(db, reference)
    schema = db.execute("SELECT type, name, sql FROM ref.sqlite_master WHERE sql IS NOT NULL")
    schema = [row for row in schema if not row[1].startswith("sqlite_")]
    db.execute("BEGIN")
    for kind, _, sql in schema:
        if kind == "table":
            db.execute(sql)
    db.execute("INSERT INTO rocpd_metadata SELECT * FROM ref.rocpd_metadata")
    db.execute("INSERT INTO rocpd_string SELECT * FROM ref.rocpd_string")
    _rpd_events(db, Workload(rows, seed))
    db.execute("COMMIT")
    for kind, _, sql in schema:
        if kind in ("view", "index"):
            db.execute(sql)
    db.close()


def _rpd_strings(db: sqlite3.Connection, strings: list[str]) -> list[int]:
    found = dict(db.execute("SELECT string, id FROM rocpd_string"))
    for text in strings:
        if text not in found:
            cursor = db.execute("INSERT INTO rocpd_string (string) VALUES (?)", (text,))
            found[text] = cursor.lastrowid
    return [int(found[text]) for text in strings]


def _rpd_events(db: sqlite3.Connection, work: Workload) -> None:
    names = np.array(_rpd_strings(db, kernel_names()), np.int64)
    fixed = _rpd_strings(
        db,
        [
            "",
            "KernelExecution",
            "CopyHostToDevice",
            "hipLaunchKernel",
            "hipMemcpyAsync",
            "UserMarker",
        ],
    )
    empty, kernel_op, copy_op, launch, memcpy, marker = fixed
    pid = tid = 4242
    ids = np.arange(1, work.rows + 1, dtype=np.int64)
    desc = np.where(work.copy, empty, names[work.kernel])
    insert(
        db,
        "rocpd_op",
        "id,gpuId,queueId,sequenceId,completionSignal,start,end,description_id,opType_id",
        zip(
            ids.tolist(),
            [0] * work.rows,
            work.stream.tolist(),
            [0] * work.rows,
            [""] * work.rows,
            work.start.tolist(),
            work.end.tolist(),
            desc.tolist(),
            np.where(work.copy, copy_op, kernel_op).tolist(),
            strict=True,
        ),
    )
    insert(
        db,
        "rocpd_api",
        "id,pid,tid,start,end,apiName_id,args_id",
        zip(
            ids.tolist(),
            [pid] * work.rows,
            [tid] * work.rows,
            work.launch.tolist(),
            (work.launch + work.launch_dur).tolist(),
            np.where(work.copy, memcpy, launch).tolist(),
            [empty] * work.rows,
            strict=True,
        ),
    )
    insert(
        db,
        "rocpd_api_ops",
        "id,api_id,op_id",
        zip(ids.tolist(), ids.tolist(), ids.tolist(), strict=True),
    )
    _rpd_launches(db, work, ids, names, empty)
    _rpd_markers(db, work, pid, marker)


def _rpd_launches(db: sqlite3.Connection, work: Workload, ids: Any, names: Any, empty: int) -> None:
    kernels, copies = ~work.copy, work.copy
    size = int(kernels.sum())
    insert(
        db,
        "rocpd_kernelapi",
        "api_ptr_id,stream,gridX,gridY,gridZ,workgroupX,workgroupY,workgroupZ,groupSegmentSize,"
        "privateSegmentSize,kernelArgAddress,aquireFence,releaseFence,codeObject_id,kernelName_id",
        zip(
            ids[kernels].tolist(),
            ["0x0"] * size,
            work.grid[kernels].tolist(),
            [1] * size,
            [1] * size,
            work.block[kernels].tolist(),
            [1] * size,
            [1] * size,
            [0] * size,
            [0] * size,
            [""] * size,
            [""] * size,
            [""] * size,
            [""] * size,
            names[work.kernel[kernels]].tolist(),
            strict=True,
        ),
    )
    count = int(copies.sum())
    insert(
        db,
        "rocpd_copyapi",
        "api_ptr_id,stream,size,width,height,kind,dst,src,dstDevice,srcDevice,sync,pinned",
        zip(
            ids[copies].tolist(),
            ["0x0"] * count,
            (work.dur[copies] * 10).tolist(),
            [""] * count,
            [""] * count,
            [1] * count,
            ["0x1"] * count,
            ["0x2"] * count,
            [0] * count,
            [0] * count,
            [0] * count,
            [0] * count,
            strict=True,
        ),
    )


def _rpd_markers(db: sqlite3.Connection, work: Workload, pid: int, marker: int) -> None:
    """ROCTX ranges: `UserMarker` rows in the annotation id space (2**31 + n), message in args."""
    steps = list(range(0, work.rows, 1000))
    labels = _rpd_strings(db, [f"step {n}" for n in range(len(steps))])
    rows = [
        (
            (1 << 31) + n + 1,
            pid,
            pid,
            int(work.launch[i]),
            int(work.end[min(i + 999, work.rows - 1)]),
            marker,
            labels[n],
        )
        for n, i in enumerate(steps)
    ]
    insert(db, "rocpd_api", "id,pid,tid,start,end,apiName_id,args_id", rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="GPU ops per run")
    parser.add_argument("--runs", type=int, default=1, help="rocpd runs merged in one file")
    parser.add_argument("--format", choices=("rocpd", "rpd", "both"), default="both")
    parser.add_argument("--out", type=Path, default=REPO / "bench-data")
    parser.add_argument(
        "--rocpd-reference",
        type=lambda text: None if text == "builtin" else Path(text),
        default=ROCPD_REFERENCE,
        help="a rocpd database whose schema to copy, or `builtin`",
    )
    parser.add_argument("--rpd-reference", type=Path, default=RPD_REFERENCE)
    args = parser.parse_args(argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = []
    if args.format in ("rocpd", "both"):
        target = args.out / f"big_{args.rows}x{args.runs}_results.db"
        jobs.append((target, lambda t: make_rocpd(t, args.rows, args.runs, args.rocpd_reference)))
    if args.format in ("rpd", "both"):
        target = args.out / f"big_{args.rows}.rpd"
        jobs.append((target, lambda t: make_rpd(t, args.rows, args.rpd_reference)))
    for target, make in jobs:
        began = time.perf_counter()
        make(target)
        seconds = time.perf_counter() - began
        print(f"wrote {target} ({target.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
