"""rocprofv3's rocpd SQLite database (`<pid>_results.db`).

The real MI300X database (`rocprofv3/rocpd-db-gfx942/15_results.db`, read in place) is checked
against the tool's own views (`kernels`, `top_kernels`, `busy`) and against the independent
golden script; merged runs, markers, memory copies and counters are checked on databases built
by `benchmarks/make_big_sqlite.py` from the real schema; broken files must give one-line errors.
The generator's builtin schema (for tests on a clone without ../shared) must read like the real
one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import ANNOTATION, KERNEL, MEMCPY, RUNTIME, Trace
from gpuscope.trace.readers.rocpd import RocpdReader
from gpuscope.trace.registry import find_sources, read_trace
from tests.unit.trace.reference import FORMATS, GOLDEN, REPO, reference_file

REFERENCE = "rocprofv3/rocpd-db-gfx942/15_results.db"
SCRIPT = GOLDEN / "make_sqlite_golden.py"
GENERATOR = REPO / "benchmarks" / "make_big_sqlite.py"
RELATIVE = 1e-3  # busy / span: 0.1 %
READER = RocpdReader()


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
def generator() -> Any:
    return load(GENERATOR, "make_big_sqlite")


@functools.cache
def reference() -> Trace:
    return read_trace(str(reference_file(REFERENCE)))


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db, db:
        return db.execute(sql).fetchall()


def names(trace: Trace, table: Any) -> list[str]:
    return [trace.names[i] for i in table.name]


@pytest.fixture
def merged(tmp_path: Path) -> Path:
    """Two merged runs of 500 ops each, with copies and ROCTX ranges (the real schema)."""
    reference_file(REFERENCE)
    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 500, runs=2)
    return path


# -- the real database -------------------------------------------------------------------------
def test_counts_devices_and_what_it_provides() -> None:
    trace = reference()
    meta = trace.meta
    assert (meta.format, meta.schema, meta.vendor, meta.clock) == ("rocpd", "3", "amd", "boot")
    assert len(trace.gpu) == 301 and set(trace.gpu.kind.tolist()) == {KERNEL}
    assert len(trace.host) == 623 and len(trace.ops) == 0 and len(trace.counters) == 0
    # traced: kernels + HIP runtime / compiler API (no memory copy, marker or counter options)
    assert meta.provides == {
        "kernels",
        "timestamps",
        "launch_params",
        "devices",
        "host_api",
        "links",
    }
    assert meta.extra["tracing_options"] == {
        "hip_compiler_api_trace": True,
        "hip_runtime_api_trace": True,
        "kernel_trace": True,
    }
    (device,) = meta.devices
    assert (device.id, device.name, device.arch, device.compute_units) == (
        2,
        "AMD Instinct MI300X",
        "gfx942",
        304,
    )
    assert set(trace.gpu.device.tolist()) == {2}
    assert meta.profiler_span == (127394157482700, 127395752257831)
    assert meta.event_counts == {"kernel_dispatch": 301, "region": 623, "marker": 0}


def test_every_dispatch_matches_the_kernels_view() -> None:
    """Names, exact ns, device, stream, launch parameters: row for row against `kernels`."""
    rows = query(
        reference_file(REFERENCE),
        "SELECT name, start, duration, agent_log_index, stream_id, grid_x, grid_y, grid_z, "
        "workgroup_x, workgroup_y, workgroup_z, lds_size, scratch_size, vgpr_count, "
        "accum_vgpr_count, sgpr_count FROM kernels ORDER BY id",
    )
    trace = reference()
    gpu, lp = trace.gpu, trace.launch_params
    assert len(rows) == len(gpu) == len(lp) and lp.row.tolist() == list(range(len(gpu)))
    for i, row in enumerate(rows):
        name, start, dur, device, stream, gx, gy, gz, wx, wy, wz, lds, scratch, v, a, s = row
        assert (trace.names[gpu.name[i]], int(gpu.start[i]), int(gpu.dur[i])) == (name, start, dur)
        assert (int(gpu.device[i]), int(gpu.stream[i])) == (device, stream)
        grid = [-(-g // w) for g, w in ((gx, wx), (gy, wy), (gz, wz))]  # work-items -> groups
        assert [int(lp.grid_x[i]), int(lp.grid_y[i]), int(lp.grid_z[i])] == grid
        assert [int(lp.block_x[i]), int(lp.block_y[i]), int(lp.block_z[i])] == [wx, wy, wz]
        assert (int(lp.shared_mem[i]), int(lp.scratch[i])) == (lds, scratch)
        assert (int(lp.registers[i]), int(lp.accum_registers[i]), int(lp.scalar_registers[i])) == (
            v,
            a,
            s,
        )


def test_known_dispatch_values() -> None:
    trace = reference()
    gpu, lp = trace.gpu, trace.launch_params
    assert names(trace, gpu)[2] == (
        "void batched_matrix_multiplication_matrix_core_64x64x4<64u, 64u, 8u>(unsigned int, "
        "unsigned int, unsigned int, unsigned int, std::bfloat16_t const*, std::bfloat16_t const*,"
        " std::bfloat16_t*, dim3, dim3, dim3, int)"
    )
    assert (int(gpu.start[2]), int(gpu.dur[2]), int(gpu.correlation[2])) == (
        127395722405733,
        76136,
        13,
    )
    assert (int(lp.grid_x[2]), int(lp.grid_y[2]), int(lp.grid_z[2])) == (8, 2, 128)
    assert (int(lp.shared_mem[2]), int(lp.registers[2]), int(lp.accum_registers[2])) == (
        2048,
        44,
        20,
    )
    assert Counter(names(trace, gpu)) == {
        "__amd_rocclr_fillBufferAligned": 151,  # the `.kd` of the symbol name is not kept
        names(trace, gpu)[2]: 150,
    }


def test_kernels_link_to_the_call_that_launched_them() -> None:
    """rocprofiler's internal correlation id: the dispatch event's stack_id = the call's."""
    trace = reference()
    host, gpu = trace.host, trace.gpu
    by_corr = {int(c): i for i, c in enumerate(host.correlation)}
    assert len(by_corr) == len(host)  # one id per call
    launched = [by_corr[int(c)] for c in gpu.correlation]
    assert Counter(trace.names[host.name[i]] for i in launched) == {
        "hipLaunchKernel": 150,
        "hipMemset": 151,
    }
    assert all(host.start[h] < gpu.start[k] for k, h in enumerate(launched))
    assert set(gpu.external_id.tolist()) == {-1}  # no external correlation was set


def test_host_calls() -> None:
    trace = reference()
    host = trace.host
    counts = Counter(names(trace, host))
    assert counts["hipMemset"] == 151 and counts["__hipPushCallConfiguration"] == 150
    assert counts["hipMemcpy"] == 3 and counts["__hipRegisterFatBinary"] == 1
    assert set(host.domain.tolist()) == {RUNTIME} and set(host.tid.tolist()) == {15}
    first = names(trace, host)[0], int(host.start[0]), int(host.dur[0])
    assert first == ("__hipRegisterFatBinary", 127394683079632, 20507)


def test_top_kernels_view_agrees() -> None:
    """`top_kernels` gives µs floats: calls exact, total × 1000 equal to the ns sum."""
    trace = reference()
    totals: dict[str, list[int]] = {}
    for name, dur in zip(names(trace, trace.gpu), trace.gpu.dur.tolist(), strict=True):
        totals.setdefault(name, []).append(dur)
    rows = query(
        reference_file(REFERENCE), "SELECT name, total_calls, total_duration FROM top_kernels"
    )
    assert len(rows) == len(totals)
    for name, calls, total_us in rows:
        assert calls == len(totals[name])
        assert total_us * 1000 == pytest.approx(sum(totals[name]), abs=0.5)


def test_busy_view_sums_while_busy_time_is_the_union() -> None:
    """`busy` adds the dispatch durations (GpuTime) over max end - min start (WallTime); this
    trace has 2 dispatches overlapping their predecessor, so the interval union is 98 ns less."""
    ((agent, kind, gpu_time, wall, _),) = query(reference_file(REFERENCE), "SELECT * FROM busy")
    trace = reference()
    assert (agent, kind) == (2, "GPU")
    assert gpu_time == int(trace.gpu.dur.sum()) == 11029243
    assert wall == int(trace.gpu.end.max() - trace.gpu.start.min()) == 26213329
    analysis = gpuscope.analyze(str(reference_file(REFERENCE))).to_dict()
    (device,) = analysis["devices"]
    assert device["busy_us"] * 1000 == pytest.approx(11029145, rel=1e-9)
    assert device["span_us"] * 1000 == pytest.approx(wall, rel=1e-9)


# -- goldens -----------------------------------------------------------------------------------
def golden_cases() -> list[Any]:
    committed = [json.loads(p.read_text()) for p in GOLDEN.glob("rocpd__*.json")]
    files = {g["source"]["file"] for g in committed}
    if FORMATS.is_dir():
        files |= {
            p.relative_to(FORMATS).as_posix() for f, p in script().inputs(FORMATS) if f == "rocpd"
        }
    return [pytest.param(f, id=f.replace("/", "__")) for f in sorted(files)]


def load_golden(relative: str) -> dict[str, Any]:
    source = reference_file(relative)
    committed = GOLDEN / f"{script().file_id('rocpd', source, FORMATS)}.json"
    if not committed.is_file():  # a reference file without a committed golden: compute it now
        return dict(script().golden("rocpd", source, FORMATS))
    golden: dict[str, Any] = json.loads(committed.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], f"{source} changed: rerun {SCRIPT.name}"
    return golden


def check_golden(trace: Trace, golden: dict[str, Any]) -> None:
    gpu = trace.gpu
    for kind, key in ((KERNEL, "kernels"), (MEMCPY, "memcpy")):
        rows = gpu.kind == kind
        assert int(rows.sum()) == golden[key]["count"], key
        assert int(gpu.dur[rows].sum()) == golden[key]["time_ns"], key  # exact to the ns
    copies = gpu.kind == MEMCPY
    assert int(gpu.bytes[copies & (gpu.bytes >= 0)].sum()) == golden["memcpy"]["bytes"]
    assert len(trace.host) == golden["host_calls"]
    assert int((trace.ops.kind == ANNOTATION).sum()) == golden["markers"]


@pytest.mark.parametrize("relative", golden_cases())
def test_reader_and_analysis_match_the_golden(relative: str) -> None:
    golden = load_golden(relative)
    source = reference_file(relative)
    check_golden(read_trace(str(source)), golden)
    got = gpuscope.analyze(str(source)).to_dict()
    assert got["kernels"]["count"] == golden["kernels"]["count"]
    devices = {row["id"]: row for row in got["devices"]}
    for row in golden["devices"]:
        for key in ("busy", "span"):
            want = row[f"{key}_ns"] / 1000
            assert devices[row["id"]][f"{key}_us"] == pytest.approx(want, rel=RELATIVE)


def test_committed_goldens_cover_every_reference_database() -> None:
    found = [p for f, p in script().inputs(reference_file("rocprofv3")) if f == "rocpd"]
    for path in found:
        assert READER.sniff(str(path)), path
    assert GOLDEN.joinpath("rocpd__rocpd-db-gfx942__15_results_db.json").is_file()


# -- the generator's builtin schema (no reference needed) --------------------------------------
def test_the_builtin_schema_reads_like_the_real_one(tmp_path: Path) -> None:
    """The same workload on the builtin and on the real schema: the same trace, but the ids the
    small tables give (the GPU's agent, the thread)."""
    real, builtin = tmp_path / "1_results.db", tmp_path / "2_results.db"
    generator().make_rocpd(real, 300, runs=2, reference=reference_file(REFERENCE))
    generator().make_rocpd(builtin, 300, runs=2, reference=None)
    a, b = READER.read(str(real)), READER.read(str(builtin))
    assert a.names == b.names and a.meta.event_counts == b.meta.event_counts
    assert a.meta.provides == b.meta.provides
    for table, differ in ((a.gpu, b.gpu), (a.host, b.host)):
        for column in ("kind", "name", "start", "dur", "stream", "correlation", "bytes"):
            if hasattr(table, column):
                assert np.array_equal(getattr(table, column), getattr(differ, column)), column
    assert [d.name for d in a.meta.devices] == [d.name for d in b.meta.devices]


def test_a_database_on_the_builtin_schema_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "7_results.db"
    generator().make_rocpd(path, 300, runs=2, reference=None)
    trace = read_trace(str(path))
    assert Counter(trace.gpu.kind.tolist()) == {KERNEL: 594, MEMCPY: 6}
    assert len(trace.host) == 600 and [d.name for d in trace.meta.devices] == [
        "AMD Instinct MI300X"
    ]
    assert {"kernels", "host_api", "links", "copies", "markers"} <= trace.meta.provides
    check_golden(trace, script().summarize("rocpd", path))


# -- merged runs, copies, markers, counters ----------------------------------------------------
def test_merged_runs_are_one_trace_with_ids_kept_apart(merged: Path) -> None:
    trace = read_trace(str(merged))
    gpu, host = trace.gpu, trace.host
    assert Counter(gpu.kind.tolist()) == {KERNEL: 990, MEMCPY: 10}
    assert len(host) == 1000 and len(trace.ops) == 2
    assert len(set(gpu.correlation.tolist())) == 1000  # run 2's ids were offset
    assert set(gpu.correlation.tolist()) == set(host.correlation.tolist())
    assert "2 merged runs" in trace.meta.warnings[0]
    assert len(trace.meta.extra["guids"]) == 2
    assert {"copies", "copy_bytes", "markers"} <= trace.meta.provides
    check_golden(trace, script().summarize("rocpd", merged))


def test_copies_run_on_their_gpu_side_with_sizes(merged: Path) -> None:
    trace = read_trace(str(merged))
    copies = trace.gpu.take(trace.gpu.kind == MEMCPY)
    assert set(names(trace, copies)) == {"MEMORY_COPY_HOST_TO_DEVICE"}
    assert set(copies.copy.tolist()) == {0} and set(copies.device.tolist()) == {2}
    assert (copies.bytes == copies.dur * 10).all()  # what the generator wrote


def test_roctx_ranges_and_marks(merged: Path) -> None:
    with closing(sqlite3.connect(merged)) as db, db:
        suffix = db.execute(
            "SELECT substr(name, 22) FROM sqlite_master WHERE name LIKE 'rocpd_kernel_dispatch_%'"
            " AND type = 'table' ORDER BY name LIMIT 1"
        ).fetchone()[0]
        category = db.execute(
            f"SELECT id FROM rocpd_string{suffix} WHERE string = 'MARKER_CORE_API'"
        ).fetchone()[0]
        db.execute(
            f"INSERT INTO rocpd_track{suffix} (id, nid, pid, tid, name_id) "
            f"SELECT 1, nid, pid, id, {category} FROM rocpd_info_thread{suffix}"
        )
        db.execute(
            f"INSERT INTO rocpd_event{suffix} (id, category_id, stack_id, extdata) "
            f'VALUES (99999, {category}, 0, \'{{"message":"checkpoint"}}\')'
        )
        db.execute(
            f"INSERT INTO rocpd_sample{suffix} (id, track_id, timestamp, event_id) "
            "VALUES (1, 1, 1000000000123, 99999)"
        )
    trace = read_trace(str(merged))
    ops = trace.ops
    assert set(ops.kind.tolist()) == {ANNOTATION}
    assert sorted(names(trace, ops)) == ["checkpoint", "step 0", "step 0"]
    mark = names(trace, ops).index("checkpoint")
    assert (int(ops.start[mark]), int(ops.dur[mark]), int(ops.tid[mark])) == (1000000000123, 0, 15)


def test_counters_are_summed_over_instances(merged: Path) -> None:
    with closing(sqlite3.connect(merged)) as db, db:
        table = db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'rocpd_info_pmc_%'"
            " ORDER BY name LIMIT 1"
        ).fetchone()[0]
        suffix = table.removeprefix("rocpd_info_pmc")
        db.execute(
            f"INSERT INTO {table} (id, nid, pid, agent_id, name, symbol, units) "
            "SELECT 7, nid, pid, 2, 'SQ_WAVES', 'SQ_WAVES', 'waves' FROM "
            f"rocpd_info_process{suffix}"
        )
        event = db.execute(
            f"SELECT event_id FROM rocpd_kernel_dispatch{suffix} WHERE id = 1"
        ).fetchone()[0]
        for value in (10.0, 32.0):  # two instances (e.g. XCDs) of one counter
            db.execute(
                f"INSERT INTO rocpd_pmc_event{suffix} (event_id, pmc_id, value) "
                f"VALUES ({event}, 7, {value})"
            )
    trace = read_trace(str(merged))
    counters = trace.counters
    assert len(counters) == 1 and trace.names[counters.name[0]] == "SQ_WAVES"
    assert float(counters.value[0]) == 42.0 and int(counters.row[0]) == 0
    assert trace.meta.counter_units == {"SQ_WAVES": "waves"}


def test_progress_reports_rows(merged: Path) -> None:
    seen: list[tuple[int, int]] = []
    READER.read(str(merged), progress=lambda done, total: seen.append((done, total)))
    assert seen and all(done <= total for done, total in seen)


# -- sources -----------------------------------------------------------------------------------
def test_group_key_is_the_process_prefix() -> None:
    assert READER.group_key("out/host/15_results.db") == str(Path("out/host/15"))
    assert READER.group_key("out/merged.db") == str(Path("out/merged"))


def test_a_directory_with_the_database_reads_it(tmp_path: Path) -> None:
    shutil.copy(reference_file(REFERENCE), tmp_path / "15_results.db")
    (sources,) = [find_sources(str(tmp_path))]
    assert [(s.reader.name, s.key) for s in sources] == [("rocpd", str(tmp_path / "15"))]


def test_the_file_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "15_results.db"
    shutil.copy(reference_file(REFERENCE), path)
    before = hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns
    read_trace(str(path))
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["15_results.db"]


# -- broken input ------------------------------------------------------------------------------
def assert_one_line(error: pytest.ExceptionInfo[ReaderError], path: Path, *words: str) -> None:
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert all(word in message for word in words), message


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.9])
def test_truncated_database(tmp_path: Path, fraction: float) -> None:
    data = reference_file(REFERENCE).read_bytes()
    path = tmp_path / "15_results.db"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "corrupt SQLite database", "rocpd")


def test_sqlite_without_the_tables(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE samples (a INTEGER)")
    with pytest.raises(ReaderError) as error:
        READER.read(str(path))
    assert str(error.value) == "a SQLite file but not a rocpd database: no rocpd_metadata table"
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "not a profiler output", "rocpd")


@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00" + b"\x00" * 50, b"\x7fELF junk"])
def test_empty_or_garbage(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "1_results.db"
    path.write_bytes(content)
    with pytest.raises(ReaderError) as error:
        read_trace(str(path))
    assert_one_line(error, path, "expected")


def test_not_sqlite_read_directly(tmp_path: Path) -> None:
    path = tmp_path / "1_results.db"
    path.write_text("Kind,Agent_Id\n")
    with pytest.raises(ReaderError, match=r"^not a SQLite database; expected a rocprofv3 rocpd"):
        READER.read(str(path))


# the lock told by SQLite's result code, which Python gives from 3.11 on; on 3.10 by the
# exception's class alone, which a lock shares with other failures
LOCKED = "locked by another process" if sys.version_info >= (3, 11) else "is still writing it"


def test_locked_database(tmp_path: Path) -> None:
    path = tmp_path / "15_results.db"
    shutil.copy(reference_file(REFERENCE), path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(ReaderError) as error:
            read_trace(str(path))
        assert_one_line(error, path, LOCKED, "retry")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(read_trace(str(path)).gpu) == 301  # readable again once released


def test_cli_reports_one_error_line(tmp_path: Path) -> None:
    data = reference_file(REFERENCE).read_bytes()
    path = tmp_path / "15_results.db"
    path.write_bytes(data[: len(data) // 2])
    done = subprocess.run(
        [sys.executable, "-m", "gpuscope", "analyze", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "corrupt" in lines[0]
    assert "Traceback" not in done.stderr


def test_merged_database_matches_its_views(merged: Path) -> None:
    """The un-suffixed views of a merged database union both runs: same totals as the reader."""
    ((count, total),) = query(merged, "SELECT count(*), sum(duration) FROM kernels")
    trace = read_trace(str(merged))
    kernels = trace.gpu.kind == KERNEL
    assert (count, total) == (int(kernels.sum()), int(trace.gpu.dur[kernels].sum()))
    assert np.array_equal(
        np.sort(trace.gpu.start[kernels]),
        np.sort([r[0] for r in query(merged, "SELECT start FROM kernels")]),
    )
