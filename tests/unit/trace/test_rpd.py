"""rocmProfileData traces: the `.rpd` database and its rpd2tracing.py JSON export.

`rpd/matmul_result.rpd` (schema 2, roctracer data source, MI200-class GPU 2) is read in place
and checked against the tool's own views (`op`, `kernel`, `top`, `busy`), the golden script, and
its JSON export `rpd/matmul_result.json`: the exporter writes `start / 1000` and
`(end - start) / 1000` in SQLite integer arithmetic, so every JSON time is the database's ns
time truncated to whole µs — 0 to 999 ns less, per op. Schema 3 (domains, rocpd_ustring,
rocpd_counter) is checked on a database made from the shipped DDL (`rpd/schema_source`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import (
    ANNOTATION,
    DTOH,
    HSA,
    HTOD,
    KERNEL,
    LIBRARY,
    MEMCPY,
    MEMSET,
    RUNTIME,
    Trace,
)
from gpuscope.trace.readers.rpd import RpdReader
from gpuscope.trace.registry import find_sources, read_trace, sniff
from tests.unit.trace.reference import FORMATS, GOLDEN, REPO, reference_file

RPD = "rpd/matmul_result.rpd"
JSON = "rpd/matmul_result.json"
SCHEMA3 = "rpd/schema_source"
SCRIPT = GOLDEN / "make_sqlite_golden.py"
GENERATOR = REPO / "benchmarks" / "make_big_sqlite.py"
READER = RpdReader()
RELATIVE = 1e-3


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def script() -> Any:
    return load(SCRIPT, "make_sqlite_golden")


@functools.cache
def trace_of(relative: str) -> Trace:
    return read_trace(str(reference_file(relative)))


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db, db:
        return db.execute(sql).fetchall()


def names(trace: Trace, table: Any) -> list[str]:
    return [trace.names[i] for i in table.name]


# -- the real database -------------------------------------------------------------------------
def test_counts_devices_and_what_it_provides() -> None:
    trace = trace_of(RPD)
    meta = trace.meta
    assert (meta.format, meta.schema, meta.vendor, meta.clock) == ("rpd", "2", "amd", "boot")
    assert Counter(trace.gpu.kind.tolist()) == {KERNEL: 29, MEMCPY: 55, MEMSET: 1}
    assert len(trace.host) == 120 and len(trace.ops) == 0
    assert [(d.id, d.name) for d in meta.devices] == [(2, "GPU2")]
    assert meta.provides == {
        "kernels",
        "timestamps",
        "copies",
        "copy_bytes",
        "host_api",
        "links",
        "markers",
        "launch_params",
    }
    assert meta.extra == {"data_source": "roctracer"}
    assert meta.event_counts == {
        "op": 85,
        "api_ops": 85,
        "api": 125,
        "kernelapi": 29,
        "copyapi": 55,
        "user_marker": 0,
        "tracer_overhead": 5,
    }


def test_every_op_matches_the_op_view() -> None:
    """Exact ns, gpuId, queueId; ops with an empty description are named by their type."""
    rows = query(
        reference_file(RPD),
        'SELECT description, opType, "start", "end", gpuId, queueId FROM op ORDER BY id',
    )
    trace = trace_of(RPD)
    gpu = trace.gpu
    assert len(rows) == len(gpu)
    for i, (desc, op_type, start, end, device, queue) in enumerate(rows):
        assert trace.names[gpu.name[i]] == (desc or op_type)
        assert (int(gpu.start[i]), int(gpu.dur[i])) == (start, end - start)
        assert (int(gpu.device[i]), int(gpu.stream[i])) == (device, queue)


def test_launch_parameters_in_work_groups() -> None:
    """roctracer wrote hipExtModuleLaunchKernel's globalWorkSize (work-items: 1792 / 256 = 7
    groups) and hipLaunchKernel's numBlocks (groups already)."""
    trace = trace_of(RPD)
    lp = trace.launch_params
    rows = query(
        reference_file(RPD), "SELECT gridX, gridY, gridZ, workgroupX FROM kernel ORDER BY id"
    )
    assert len(lp) == len(rows) == 29
    assert (int(lp.grid_x[0]), int(lp.grid_y[0]), int(lp.grid_z[0]), int(lp.block_x[0])) == (
        7,
        782,
        1,
        256,
    )
    for i, (gx, gy, gz, wx) in enumerate(rows[1:], 1):
        assert (int(lp.grid_x[i]), int(lp.grid_y[i]), int(lp.grid_z[i])) == (gx, gy, gz)
        assert int(lp.block_x[i]) == wx
    assert set(trace.gpu.kind[lp.row].tolist()) == {KERNEL}
    assert set(lp.registers.tolist()) == {-1}  # this tracer left rocpd_kernelcodeobject empty


def test_copies_sizes_directions_and_the_memset() -> None:
    trace = trace_of(RPD)
    gpu = trace.gpu
    copies = gpu.take(gpu.kind == MEMCPY)
    assert copies.bytes[:2].tolist() == [2_000_000_000, 32_000_000]
    assert Counter(copies.copy.tolist()) == {HTOD: 2, DTOH: 53}
    assert int(copies.bytes.sum()) == 2_032_000_296
    (memset,) = [i for i, k in enumerate(gpu.kind.tolist()) if k == MEMSET]
    assert (names(trace, gpu)[memset], int(gpu.bytes[memset])) == ("FillBuffer", -1)


def test_ops_link_to_the_call_that_launched_them() -> None:
    trace = trace_of(RPD)
    host, gpu = trace.host, trace.gpu
    by_corr = {int(c): i for i, c in enumerate(host.correlation)}
    launched = Counter(
        (trace.names[gpu.name[k]][:4], trace.names[host.name[by_corr[int(c)]]])
        for k, c in enumerate(gpu.correlation)
    )
    assert launched == {
        ("Copy", "hipMemcpyWithStream"): 55,
        ("Cijk", "hipExtModuleLaunchKernel"): 1,
        ("void", "hipLaunchKernel"): 28,
        ("Fill", "hipMemsetAsync"): 1,
    }
    assert set(host.domain.tolist()) == {RUNTIME} and set(host.tid.tolist()) == {1087077}
    assert "hcc_activity_callback" not in names(trace, host)  # the tracer's own records


def test_top_view_agrees() -> None:
    """`top`: per name, calls and TotalDuration = sum(ns) / 1000 in integer arithmetic."""
    trace = trace_of(RPD)
    totals: dict[str, list[int]] = {}
    for name, dur in zip(names(trace, trace.gpu), trace.gpu.dur.tolist(), strict=True):
        totals.setdefault(name, []).append(dur)
    rows = query(reference_file(RPD), "SELECT Name, TotalCalls, TotalDuration FROM top")
    assert {r[0] for r in rows} == set(totals)
    for name, calls, total_us in rows:
        assert (calls, total_us) == (len(totals[name]), sum(totals[name]) // 1000)


def test_busy_view_equals_busy_time_when_nothing_overlaps() -> None:
    ((gpu_id, gpu_time, wall, _),) = query(reference_file(RPD), "SELECT * FROM busy")
    trace = trace_of(RPD)
    assert (gpu_id, gpu_time) == (2, int(trace.gpu.dur.sum()))
    assert wall == int(trace.gpu.end.max() - trace.gpu.start.min())
    (device,) = gpuscope.analyze(str(reference_file(RPD))).to_dict()["devices"]
    assert device["busy_us"] * 1000 == pytest.approx(gpu_time, rel=1e-9)


# -- rpd2tracing JSON --------------------------------------------------------------------------
def test_json_export_is_the_database_truncated_to_whole_microseconds() -> None:
    db, js = trace_of(RPD), trace_of(JSON)
    assert js.meta.schema == "rpd2tracing" and js.meta.provides == {
        "kernels",
        "timestamps",
        "copies",
        "host_api",
        "links",
        "markers",
    }
    assert names(js, js.gpu) == names(db, db.gpu)
    assert (
        js.gpu.kind.tolist() == db.gpu.kind.tolist()
        and js.gpu.copy.tolist() == db.gpu.copy.tolist()
    )
    assert (js.gpu.start == db.gpu.start // 1000 * 1000).all()
    assert (js.gpu.dur == db.gpu.dur // 1000 * 1000).all()  # so 0..999 ns less per op
    kernels = db.gpu.kind == KERNEL
    lost = int(db.gpu.dur[kernels].sum() - js.gpu.dur[kernels].sum())
    assert lost == 13795 and 0 <= lost < 1000 * int(kernels.sum())
    assert names(js, js.host) == names(db, db.host)
    assert (js.host.start == db.host.start // 1000 * 1000).all()


def test_json_flows_link_the_same_calls() -> None:
    db, js = trace_of(RPD), trace_of(JSON)

    def launches(trace: Trace) -> list[tuple[str, int]]:
        by_corr = {int(c): i for i, c in enumerate(trace.host.correlation) if c >= 0}
        calls = [by_corr[int(c)] for c in trace.gpu.correlation]
        return [(trace.names[trace.host.name[i]], int(trace.host.start[i]) // 1000) for i in calls]

    assert launches(js) == launches(db)


def newer_export(path: Path) -> Path:
    """What the current rpd2tracing.py writes (`--format object`, `start / 1000.0`): the ops and
    calls of matmul_result.rpd as decimal µs strings inside {"traceEvents": [...]}."""
    ops = query(
        reference_file(RPD),
        'SELECT A.id, A.api_id, O.gpuId, O.queueId, O."start", O."end", '
        "CASE WHEN O.description = '' THEN O.opType ELSE O.description END, O.opType "
        "FROM op O LEFT JOIN rocpd_api_ops A ON A.op_id = O.id",
    )
    calls = query(reference_file(RPD), 'SELECT id, pid, tid, "start", "end", apiName FROM api')
    events: list[dict[str, Any]] = [{}]
    events.append({"name": "process_name", "ph": "M", "pid": "2", "args": {"name": "GPU2"}})
    for link, _, gpu, queue, start, end, name, op_type in ops:
        ts, dur = str(start / 1000.0), str((end - start) / 1000.0)
        events.append(
            {
                "pid": str(gpu),
                "tid": str(queue),
                "name": name,
                "ts": ts,
                "dur": dur,
                "ph": "X",
                "args": {"desc": op_type},
            }
        )
        events.append(
            {
                "pid": str(gpu),
                "tid": str(queue),
                "cat": "api_op",
                "name": "api_op",
                "ts": ts,
                "id": str(link),
                "ph": "f",
                "bp": "e",
            }
        )
    ends = {}
    for api_id, pid, tid, start, end, name in calls:
        events.append(
            {
                "pid": str(pid),
                "tid": str(tid),
                "name": name,
                "ts": str(start / 1000.0),
                "dur": str((end - start) / 1000.0),
                "ph": "X",
                "args": {"desc": ""},
            }
        )
        ends[api_id] = (pid, tid, end)
    for link, api, _, _, start, *_ in ops:  # the flow starts at min(call end - 2 µs, op start)
        pid, tid, end = ends[api]
        when = min(end / 1000.0 - 2, start / 1000.0)
        events.append(
            {
                "pid": str(pid),
                "tid": str(tid),
                "cat": "api_op",
                "name": "api_op",
                "ts": str(when),
                "id": str(link),
                "ph": "s",
            }
        )
    target = path / "new.json"
    target.write_text(json.dumps({"traceEvents": events}).replace("[{}, ", "[ {}\n,", 1))
    return target


def test_newer_export_with_decimal_microseconds_is_exact(tmp_path: Path) -> None:
    js, db = read_trace(str(newer_export(tmp_path))), trace_of(RPD)
    assert js.meta.schema == "rpd2tracing"
    assert (js.gpu.start == db.gpu.start).all() and (js.gpu.dur == db.gpu.dur).all()
    assert names(js, js.gpu) == names(db, db.gpu)
    assert (js.gpu.correlation >= 0).all()
    by_corr = {int(c): i for i, c in enumerate(js.host.correlation) if c >= 0}
    launched = [js.names[js.host.name[by_corr[int(c)]]] for c in js.gpu.correlation]
    assert Counter(launched) == {
        "hipMemcpyWithStream": 55,
        "hipLaunchKernel": 28,
        "hipExtModuleLaunchKernel": 1,
        "hipMemsetAsync": 1,
    }


def test_json_is_claimed_by_rpd_and_not_kineto() -> None:
    reader = sniff(str(reference_file(JSON)))
    assert reader is not None and reader.name == "rpd"


def not_rpd_json() -> list[Path]:
    candidates = sorted((REPO / "tests" / "data").glob("*.json*"))
    candidates += sorted(FORMATS.glob("rocprof-v1/*/results.json")) if FORMATS.is_dir() else []
    traces = REPO / ".." / "shared" / "reference" / "traces"
    candidates += sorted(traces.glob("*.json*"))[:6] if traces.is_dir() else []
    return candidates


@pytest.mark.parametrize("path", not_rpd_json(), ids=lambda p: p.name)
def test_other_chrome_traces_are_not_claimed(path: Path) -> None:
    assert not READER.sniff(str(path))


def test_a_directory_with_both_reads_the_database(tmp_path: Path) -> None:
    for relative in (RPD, JSON):
        shutil.copy(reference_file(relative), tmp_path)
    (source,) = find_sources(str(tmp_path))
    assert source.reader.name == "rpd" and len(source.paths) == 2
    trace = read_trace(str(tmp_path))
    assert trace.meta.schema == "2" and trace.meta.path.endswith(".rpd")


def test_truncated_json_keeps_the_complete_events(tmp_path: Path) -> None:
    text = reference_file(JSON).read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 5])  # ops come first: this cut is inside them
    trace = read_trace(str(path))
    assert trace.meta.truncated and trace.meta.warnings[0].startswith("truncated")
    assert 0 < len(trace.gpu) < 85


# -- goldens -----------------------------------------------------------------------------------
def golden_cases() -> list[Any]:
    files = {json.loads(p.read_text())["source"]["file"] for p in GOLDEN.glob("rpd__*.json")}
    if FORMATS.is_dir():
        files |= {
            p.relative_to(FORMATS).as_posix() for f, p in script().inputs(FORMATS) if f == "rpd"
        }
    return [pytest.param(f, id=f.replace("/", "__")) for f in sorted(files)]


def load_golden(relative: str) -> dict[str, Any]:
    source = reference_file(relative)
    committed = GOLDEN / f"{script().file_id('rpd', source, FORMATS)}.json"
    if not committed.is_file():  # e.g. matmul_result_large.rpd: compute it now
        return dict(script().golden("rpd", source, FORMATS))
    golden: dict[str, Any] = json.loads(committed.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], f"{source} changed: rerun {SCRIPT.name}"
    return golden


def check_golden(trace: Trace, golden: dict[str, Any]) -> None:
    gpu = trace.gpu
    for kind, key in ((KERNEL, "kernels"), (MEMCPY, "memcpy"), (MEMSET, "memset")):
        rows = gpu.kind == kind
        assert int(rows.sum()) == golden[key]["count"], key
        assert int(gpu.dur[rows].sum()) == golden[key]["time_ns"], key  # exact to the ns
    copies = gpu.kind == MEMCPY
    assert int(gpu.bytes[copies & (gpu.bytes >= 0)].sum()) == golden["memcpy"]["bytes"]
    assert int((copies & (gpu.bytes < 0)).sum()) == golden["memcpy"]["without_bytes"]
    assert len(trace.host) == golden["host_calls"]
    assert int((trace.ops.kind == ANNOTATION).sum()) == golden["markers"]


@pytest.mark.parametrize("relative", golden_cases())
def test_reader_and_analysis_match_the_golden(relative: str) -> None:
    golden = load_golden(relative)
    source = reference_file(relative)
    check_golden(read_trace(str(source)), golden)
    got = gpuscope.analyze(str(source)).to_dict()
    assert got["kernels"]["count"] == golden["kernels"]["count"]
    assert got["memcpy"]["count"] == golden["memcpy"]["count"]
    devices = {row["id"]: row for row in got["devices"]}
    for row in golden["devices"]:
        for key in ("busy", "span"):
            want = row[f"{key}_ns"] / 1000
            assert devices[row["id"]][f"{key}_us"] == pytest.approx(want, rel=RELATIVE)


def test_every_reference_file_is_claimed() -> None:
    for fmt, path in script().inputs(reference_file("rpd")):
        assert fmt == "rpd" and READER.sniff(str(path)), path


# -- generated databases: markers, schema 3, sessions ------------------------------------------
def test_user_markers_become_ranges(tmp_path: Path) -> None:
    reference_file(RPD)
    path = tmp_path / "big.rpd"
    load(GENERATOR, "make_big_sqlite").make_rpd(path, 2500)
    trace = read_trace(str(path))
    assert names(trace, trace.ops) == ["step 0", "step 1", "step 2"]
    assert len(trace.host) == 2500 and len(trace.gpu) == 2500
    check_golden(trace, script().summarize("rpd", path))


def schema3(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    for name in ("tableSchema.cmd", "utilitySchema.cmd"):
        db.executescript(reference_file(f"{SCHEMA3}/{name}").read_text())
    return db


def test_schema3_domains_ustrings_counters_and_rocprofiler_grids(tmp_path: Path) -> None:
    """Schema 3 API rows carry domain / category; UserMarker messages sit in rocpd_ustring;
    rocprofiler-sdk sourced kernel rows give the grid in work-items (its overhead records name
    the data source); a second session's ids are offset by 2**32."""
    path = tmp_path / "v3.rpd"
    session = 1 << 32
    with closing(schema3(path)) as db, db:
        strings = [
            "",
            "hip",
            "hsa",
            "roctx",
            "range",
            "hipLaunchKernel",
            "hsa_queue_create",
            "UserMarker",
            "KernelExecution",
            "my_kernel",
            "SQ_WAVES",
            "RocprofDataSource::buffer_callback",
        ]
        db.executemany(
            "INSERT INTO rocpd_string (id, string) VALUES (?, ?)",
            [(session + i + 1, s) for i, s in enumerate(strings)],
        )
        sid = {s: session + i + 1 for i, s in enumerate(strings)}
        db.execute("INSERT INTO rocpd_ustring (id, string) VALUES (?, 'epoch 3')", (session + 1,))
        api = (
            "INSERT INTO rocpd_api (id, pid, tid, start, end, apiName_id, category_id, "
            "domain_id, args_id) VALUES (?, 7, 8, ?, ?, ?, ?, ?, ?)"
        )
        db.execute(
            api, (session + 5, 100, 200, sid["hipLaunchKernel"], sid[""], sid["hip"], sid[""])
        )
        db.execute(
            api, (session + 6, 300, 400, sid["hsa_queue_create"], sid[""], sid["hsa"], sid[""])
        )
        db.execute(
            api,
            (
                session + (1 << 31) + 1,
                50,
                900,
                sid["UserMarker"],
                sid["range"],
                sid["roctx"],
                session + 1,
            ),
        )
        db.execute(
            api,
            (
                session + (1 << 31) + 2,
                950,
                990,
                sid["RocprofDataSource::buffer_callback"],
                sid[""],
                sid[""],
                sid[""],
            ),
        )
        db.execute(
            "INSERT INTO rocpd_op (id, gpuId, queueId, sequenceId, start, end, "
            "description_id, opType_id) VALUES (?, 0, 3, 0, 250, 750, ?, ?)",
            (session + 9, sid["my_kernel"], sid["KernelExecution"]),
        )
        db.execute(
            "INSERT INTO rocpd_api_ops (api_id, op_id) VALUES (?, ?)", (session + 5, session + 9)
        )
        db.execute(
            "INSERT INTO rocpd_kernelapi VALUES (?, '0x0', 1000, 4, 1, 256, 2, 1, 512, 16, ?)",
            (session + 5, sid["my_kernel"]),
        )
        db.execute(
            "INSERT INTO rocpd_counter (value, op_id, name_id) VALUES (12.5, ?, ?)",
            (session + 9, sid["SQ_WAVES"]),
        )
        db.execute("UPDATE rocpd_metadata SET value = '3' WHERE tag = 'schema_version'")
    trace = read_trace(str(path))
    assert trace.meta.schema == "3" and trace.meta.extra == {"data_source": "rocprofiler-sdk"}
    assert names(trace, trace.host) == ["hipLaunchKernel", "hsa_queue_create"]
    assert trace.host.domain.tolist() == [RUNTIME, HSA]
    assert names(trace, trace.ops) == ["epoch 3"] and trace.ops.dur.tolist() == [850]
    assert trace.meta.event_counts["tracer_overhead"] == 1
    lp = trace.launch_params
    assert (int(lp.grid_x[0]), int(lp.grid_y[0]), int(lp.block_x[0]), int(lp.block_y[0])) == (
        4,
        2,
        256,
        2,
    )  # 1000 / 256 -> 4 groups, 4 / 2 -> 2
    assert (int(lp.shared_mem[0]), int(lp.scratch[0])) == (512, 16)
    assert trace.gpu.correlation.tolist() == [session + 5] == trace.host.correlation[:1].tolist()
    assert trace.counters.value.tolist() == [12.5] and trace.counters.row.tolist() == [0]
    assert "counters" in trace.meta.provides


def test_library_domain_and_cuda_names() -> None:
    from gpuscope.trace.readers.rpd import _vocab as vocab

    assert vocab.api_domain("ncclAllReduce", "", 5) == LIBRARY
    assert vocab.api_domain("cudaLaunchKernel", "", 5) == RUNTIME
    assert vocab.api_domain("UserMarker", "", 5) == vocab.MARK
    assert vocab.api_domain("OpTable::writeRows", "", (1 << 31) + 3) == vocab.OVERHEAD
    assert vocab.api_domain("my range", "", (1 << 31) + 3) == vocab.MARK  # rpd_rangePush


# -- broken input ------------------------------------------------------------------------------
def assert_one_line(error: pytest.ExceptionInfo[ReaderError], path: Path, *words: str) -> None:
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert all(word in message for word in words), message


@pytest.mark.parametrize("size", [20_000, 50_000, 90_000])
def test_truncated_database(tmp_path: Path, size: int) -> None:
    path = tmp_path / "cut.rpd"
    path.write_bytes(reference_file(RPD).read_bytes()[:size])
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "corrupt SQLite database", "RPD")


def test_rocpd_tables_without_rocpd_op(tmp_path: Path) -> None:
    path = tmp_path / "half.rpd"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, string TEXT)")
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "a SQLite file but not an RPD trace: no rocpd_op table")


def test_sqlite_without_rocpd_tables_read_directly(tmp_path: Path) -> None:
    path = tmp_path / "x.rpd"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE t (a)")
    with pytest.raises(ReaderError, match=r"^a SQLite file but not an RPD trace: no rocpd_op"):
        READER.read(str(path))


@pytest.mark.parametrize("value", ["'oops'", "1.5", "x'00'"])
def test_a_non_integer_time_is_an_error_not_a_zero(tmp_path: Path, value: str) -> None:
    path = tmp_path / "m.rpd"
    shutil.copy(reference_file(RPD), path)
    path.chmod(0o644)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(f"UPDATE rocpd_op SET start = {value} WHERE id = 3")
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "unexpected value", "in rocpd_op; expected integers")


# the lock told by SQLite's result code, which Python gives from 3.11 on; on 3.10 by the
# exception's class alone, which a lock shares with other failures
LOCKED = "locked by another process" if sys.version_info >= (3, 11) else "is still writing it"


def test_locked_database(tmp_path: Path) -> None:
    path = tmp_path / "m.rpd"
    shutil.copy(reference_file(RPD), path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(ReaderError) as error:
            read_trace(str(path))
        assert_one_line(error, path, LOCKED, "retry")
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize(
    "content",
    [
        '[ {}\n,{"name":"thread_name","ph":"M","pid":"1",'
        '"tid":"1","args":{"name":"Hip 1"}}\n,{"ph": ]'
    ],
)
def test_broken_json(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    assert READER.sniff(str(path))
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path)


def test_cli_reports_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.rpd"
    path.write_bytes(reference_file(RPD).read_bytes()[:60_000])
    done = subprocess.run(
        [sys.executable, "-m", "gpuscope", "analyze", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "RPD" in lines[0]
    assert "Traceback" not in done.stderr
