"""The nsys reader on real Nsight Systems outputs (read in place), on synthetic exports made with
the real 3.x schema, on what the fake `nsys` writes, and on damaged copies.

Reference files: `shared/reference/formats/nsys/vectoraddition-a100-nsys2022.2/` — one CUDA
unified-memory vector add on an A100, exported by nsys 2022.2 (schema 2.9.1) and re-exported by
nsys 2025.3 (3.20.3) with its `nsys stats` CSVs (see PROVENANCE.md). The golden numbers were
written by `tests/data/golden/formats/make_nvidia_golden.py`, which shares no code with gpuscope.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import (
    ANNOTATION,
    API,
    COPY_KINDS,
    DRIVER,
    DTOH,
    HTOD,
    KERNEL,
    MEMCPY,
    MEMSET,
    PINNED,
    RUNTIME,
    Trace,
)
from gpuscope.trace.readers.nsys import NsysReader
from gpuscope.trace.readers.nsys import _export as nsys_export
from gpuscope.trace.registry import find_sources, read_trace, read_traces, sniff
from tests.unit.trace.reference import GOLDEN, REPO, reference_file

VA = "nsys/vectoraddition-a100-nsys2022.2"
STATS = f"{VA}/stats-by-nsys2025.3"
REPORT4 = f"{VA}/report4.sqlite"
REEXPORT = f"{STATS}/va4_reexported_nsys2025.3.sqlite"
SCHEMA_3X = f"{STATS}/va4_reexported_nsys2025.3.schema.sql"
GOLDENS = sorted(GOLDEN.glob("nsys__*.json"))
FAKE_BIN = REPO / "tests" / "fakes" / "bin"
RELATIVE = 1e-3
KERNEL_NAME = "add(int, float *, float *)"


@functools.cache
def trace_of(relative: str) -> Trace:
    return read_trace(str(reference_file(relative)))


def stats_group() -> Trace:
    folder = reference_file(STATS)
    return NsysReader().read_group(sorted(str(p) for p in folder.glob("va4_cuda_*.csv")))


def names(trace: Trace, table: Any) -> list[str]:
    return [trace.names[i] for i in table.name]


def cli(*args: str | Path, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    if path is not None:
        env["PATH"] = path
    argv = [sys.executable, "-m", "gpuscope", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def assert_one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    for word in words:
        assert word in lines[0]


# -- the 2022 export (schema 2.9.1) -----------------------------------------------------------
def test_report4_kernel_copies_calls_and_sync() -> None:
    trace = trace_of(REPORT4)
    meta = trace.meta
    assert (meta.format, meta.schema, meta.vendor, meta.clock) == (
        "nsys",
        "2.9.1",
        "nvidia",
        "session",
    )
    assert meta.event_counts == {"kernel": 1, "memcpy": 1792, "runtime": 8, "driver": 1, "sync": 1}
    assert meta.base_time_ns == 1684406205203098174
    assert meta.profiler_span == (723836471, 3073165495)
    assert meta.extra == {
        "nsys_version": "2022.2.1.31",
        "processes": {"38787": "./vecadd_gpu_256t_manyblocks_prefetch"},
    }
    gpu = trace.gpu
    kernel = int(np.flatnonzero(gpu.kind == KERNEL)[0])
    assert trace.names[gpu.name[kernel]] == KERNEL_NAME
    assert (gpu.start[kernel], gpu.dur[kernel]) == (1332568602, 130855114)
    assert (gpu.device[kernel], gpu.stream[kernel], gpu.correlation[kernel]) == (0, 7, 109)
    copies = gpu.kind == MEMCPY
    assert copies.sum() == 1792 and gpu.bytes[copies].sum() == 805306368
    assert gpu.dur[copies].sum() == 33434334
    assert ((gpu.copy == HTOD).sum(), (gpu.copy == DTOH).sum()) == (256, 1536)
    # unified-memory page migrations: no stream, no launching call, host side unknown
    assert set(gpu.stream[copies]) == {-1} and set(gpu.correlation[copies]) == {-1}
    assert set(gpu.host_memory[copies]) == {-1}
    assert set(names(trace, gpu.take(copies))) == {
        "[CUDA memcpy Unified Host-to-Device]",
        "[CUDA memcpy Unified Device-to-Host]",
    }


def test_report4_api_calls_domains_links_and_sync_name() -> None:
    trace = trace_of(REPORT4)
    host = trace.host
    calls = names(trace, host)
    assert calls[0] == "cuModuleGetLoadingMode" and host.domain[0] == DRIVER  # eventClass 1
    assert set(host.domain[1:]) == {RUNTIME}
    assert "cudaLaunchKernel" in calls and not any("_v" in c for c in calls)  # _v7000 stripped
    launch = calls.index("cudaLaunchKernel")
    assert (host.start[launch], host.dur[launch], host.correlation[launch]) == (
        1314556453,
        47061,
        109,
    )
    assert set(host.tid) == {38787}  # globalTid & 0xFFFFFF
    assert names(trace, trace.syncs) == ["Context Sync"]  # from its cudaDeviceSynchronize
    assert (trace.syncs.start[0], trace.syncs.dur[0]) == (1314614715, 148812733)
    assert (trace.syncs.device[0], trace.syncs.stream[0]) == (0, -1)  # 0xFFFFFFFF: no stream


def test_report4_launch_params_and_device() -> None:
    trace = trace_of(REPORT4)
    lp = trace.launch_params
    assert len(lp) == 1 and trace.gpu.kind[lp.row[0]] == KERNEL
    got = (lp.grid_x[0], lp.grid_y[0], lp.grid_z[0], lp.block_x[0], lp.block_y[0], lp.block_z[0])
    assert got == (1, 1, 1, 256, 1, 1)
    assert (lp.registers[0], lp.shared_mem[0], lp.scratch[0]) == (24, 0, 0)
    (device,) = trace.meta.devices
    assert (device.id, device.name, device.arch, device.compute_units) == (
        0,
        "NVIDIA A100-SXM4-40GB",
        "sm_80",
        108,
    )
    assert device.properties["busLocation"] == "0000:03:00.0"


def test_report4_provides() -> None:
    provides = trace_of(REPORT4).meta.provides
    assert provides == {
        "kernels",
        "timestamps",
        "copies",
        "copy_bytes",
        "host_api",
        "links",
        "launch_params",
        "devices",
    }


def test_no_secret_reaches_the_meta() -> None:
    """The exports hold the process environment (StringIds, META_DATA_CAPTURE)."""
    for relative in (REPORT4, REEXPORT):
        trace = trace_of(relative)
        text = json.dumps([trace.meta.extra, trace.meta.warnings, trace.names], default=str)
        assert "REDACTED" not in text and "SLURM" not in text and "PATH=" not in text


# -- the same run, exported twice ---------------------------------------------------------------
def test_2022_and_2025_exports_of_one_run_are_identical() -> None:
    old, new = trace_of(REPORT4), trace_of(REEXPORT)
    assert new.meta.schema == "3.20.3" and new.meta.extra["nsys_version"] == "2025.3.2.0"
    assert old.meta.event_counts == new.meta.event_counts
    for table in ("gpu", "host", "syncs", "launch_params"):
        a, b = getattr(old, table), getattr(new, table)
        for column in a.__dataclass_fields__:
            got, want = getattr(b, column), getattr(a, column)
            if column == "name":
                got, want = [new.names[i] for i in got], [old.names[i] for i in want]
            assert np.array_equal(got, want), (table, column)
    assert old.meta.devices == new.meta.devices
    assert (old.meta.base_time_ns, old.meta.profiler_span) == (
        new.meta.base_time_ns,
        new.meta.profiler_span,
    )
    # only the 3.x export records that NVTX was traced (META_DATA_CAPTURE); 2.x cannot say
    assert new.meta.provides - old.meta.provides == {"markers"}


# -- nsys stats of the same run ---------------------------------------------------------------
def test_stats_files_group_into_one_trace() -> None:
    folder = reference_file(STATS)
    sources = [s for s in find_sources(str(folder)) if s.key.endswith("/va4")]
    assert len(sources) == 1 and sources[0].reader.name == "nsys"
    assert sorted(Path(p).name for p in sources[0].paths) == sorted(
        p.name for p in folder.glob("va4_cuda_*.csv")
    )


def test_gpu_trace_csv_matches_the_export_to_the_ns() -> None:
    db, csv_trace = trace_of(REPORT4), stats_group()
    for trace in (db, csv_trace):
        assert (trace.gpu.kind == KERNEL).sum() == 1 and (trace.gpu.kind == MEMCPY).sum() == 1792
    order_db, order_csv = np.argsort(db.gpu.start), np.argsort(csv_trace.gpu.start)
    for column in ("kind", "start", "dur", "device", "stream", "correlation", "copy"):
        got = getattr(csv_trace.gpu, column)[order_csv]
        assert np.array_equal(got, getattr(db.gpu, column)[order_db]), column
    assert names(csv_trace, csv_trace.gpu.take(order_csv)) == names(db, db.gpu.take(order_db))
    # sizes are printed in MB (10^6 B) with 3 decimals: each copy within 500 B
    copies = db.gpu.kind[order_db] == MEMCPY
    diff = csv_trace.gpu.bytes[order_csv][copies] - db.gpu.bytes[order_db][copies]
    assert np.abs(diff).max() <= 500 and diff.sum() == -314368  # 0.04 % of 805,306,368 B
    lp_db, lp_csv = db.launch_params, csv_trace.launch_params
    assert (lp_csv.grid_x[0], lp_csv.block_x[0], lp_csv.registers[0], lp_csv.shared_mem[0]) == (
        lp_db.grid_x[0],
        lp_db.block_x[0],
        lp_db.registers[0],
        lp_db.shared_mem[0],
    )
    assert [d.name for d in csv_trace.meta.devices] == ["NVIDIA A100-SXM4-40GB"]


def test_summaries_match_the_export() -> None:
    db, stats = trace_of(REPORT4), stats_group()
    totals = {
        (int(stats.totals.kind[i]), stats.names[stats.totals.name[i]]): (
            int(stats.totals.count[i]),
            int(stats.totals.total_ns[i]),
        )
        for i in range(len(stats.totals))
    }
    kernel = db.gpu.kind == KERNEL
    assert totals[(KERNEL, KERNEL_NAME)] == (1, int(db.gpu.dur[kernel].sum()))
    for name in {db.names[i] for i in db.gpu.name[db.gpu.kind == MEMCPY]}:
        rows = (db.gpu.kind == MEMCPY) & (db.gpu.name == db.names.index(name))
        assert totals[(MEMCPY, name)] == (int(rows.sum()), int(db.gpu.dur[rows].sum()))
    calls: dict[str, list[int]] = {}
    for name, dur in zip(names(db, db.host), db.host.dur, strict=True):
        entry = calls.setdefault(name, [0, 0])
        entry[0] += 1
        entry[1] += int(dur)
    assert {n: (c, t) for (k, n), (c, t) in totals.items() if k == API} == {
        n: (c, t) for n, (c, t) in calls.items()
    }
    sizes = stats.meta.extra["copy_bytes"]
    for name, entry in sizes.items():
        rows = (db.gpu.kind == MEMCPY) & (db.gpu.name == db.names.index(name))
        assert entry["count"] == rows.sum()
        assert abs(entry["bytes"] - int(db.gpu.bytes[rows].sum())) <= 500  # MB with 3 decimals
    assert stats.meta.provides == {
        "kernels",
        "timestamps",
        "copies",
        "copy_bytes",
        "launch_params",
        "devices",
        "links",
        "totals",
    }


def test_kernel_exec_trace_links_the_launch_to_the_kernel() -> None:
    alone = read_trace(str(reference_file(f"{STATS}/va4_cuda_kern_exec_trace.csv")))
    assert names(alone, alone.host) == ["cudaLaunchKernel"]
    assert (alone.gpu.start[0], alone.gpu.dur[0]) == (1332568602, 130855114)
    assert alone.gpu.correlation[0] == alone.host.correlation[0]
    assert (alone.launch_params.grid_x[0], alone.launch_params.block_x[0]) == (1, 256)
    assert "host_api" not in alone.meta.provides  # launch calls only: no syncs, no copies
    grouped = stats_group()  # beside the gpu_trace: the call takes the kernel's CorrId
    assert list(grouped.host.correlation) == [109]


def test_single_summary_files() -> None:
    kernels = read_trace(str(reference_file(f"{STATS}/va4_cuda_gpu_kern_sum.csv")))
    assert kernels.meta.provides == {"totals"} and kernels.meta.clock == ""
    assert (kernels.totals.count[0], kernels.totals.total_ns[0]) == (1, 130855114)
    sizes = read_trace(str(reference_file(f"{STATS}/va4_cuda_gpu_mem_size_sum.csv")))
    assert sizes.meta.extra["copy_bytes"] == {
        "[CUDA memcpy Unified Host-to-Device]": {"count": 256, "bytes": 536871000},
        "[CUDA memcpy Unified Device-to-Host]": {"count": 1536, "bytes": 268435000},
    }


def test_what_the_reader_leaves_alone_in_the_stats_folder() -> None:
    folder = reference_file(STATS)
    reader = NsysReader()
    for name in (
        "va4_stats_stdout.txt",
        "va4_kern_sum_to_stdout.txt",
        "va4_meta.txt",
        "nsys_env.txt",
        "va4_reexported_nsys2025.3.schema.sql",
    ):
        assert not reader.sniff(str(folder / name)), name
    with pytest.raises(ReaderError, match="empty"):  # a 0-byte report: PROCESSED (EMPTY RESULTS)
        read_trace(str(folder / "va4_osrt_sum.csv"))


# -- goldens --------------------------------------------------------------------------------
def golden_cases() -> list[Any]:
    return [pytest.param(p, id=p.stem) for p in GOLDENS]


def load_golden(path: Path) -> tuple[dict[str, Any], Path]:
    golden: dict[str, Any] = json.loads(path.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    source = reference_file(golden["source"]["file"])
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], f"{source} changed: rerun make_nvidia_golden.py"
    return golden, source


def test_goldens_exist() -> None:
    assert len(GOLDENS) == 8


@pytest.mark.parametrize("golden_path", golden_cases())
def test_reader_matches_the_golden_numbers(golden_path: Path) -> None:
    golden, source = load_golden(golden_path)
    trace = read_trace(str(source))
    gpu = trace.gpu
    if "kernels" in golden and "totals" not in golden:
        kernels = gpu.kind == KERNEL
        assert kernels.sum() == golden["kernels"]["count"]
        assert gpu.dur[kernels].sum() == golden["kernels"]["time_ns"]
    if "memcpy" in golden:
        copies = gpu.kind == MEMCPY
        assert copies.sum() == golden["memcpy"]["count"]
        assert gpu.dur[copies].sum() == golden["memcpy"]["time_ns"]
        assert gpu.bytes[copies].sum() == golden["memcpy"]["bytes"]
        for kind, entry in golden["memcpy"]["by_kind"].items():
            rows = copies & (gpu.copy == COPY_KINDS.index(kind))
            assert (rows.sum(), gpu.bytes[rows].sum()) == (entry["count"], entry["bytes"])
        assert (gpu.kind == MEMSET).sum() == golden["memset"]["count"]
    if "totals" in golden:
        got = {
            trace.names[trace.totals.name[i]]: (
                int(trace.totals.count[i]),
                int(trace.totals.total_ns[i]),
                int(trace.totals.min_ns[i]),
                int(trace.totals.max_ns[i]),
            )
            for i in range(len(trace.totals))
        }
        want = {
            n: (t["count"], t["time_ns"], t["min_ns"], t["max_ns"])
            for n, t in golden["totals"].items()
        }
        assert got == want
    if "copy_bytes" in golden:
        assert trace.meta.extra["copy_bytes"] == golden["copy_bytes"]
    if "api" in golden and "syncs" in golden:
        assert (len(trace.host), int(trace.host.dur.sum())) == (
            golden["api"]["count"],
            golden["api"]["time_ns"],
        )
        assert len(trace.syncs) == golden["syncs"]


@pytest.mark.parametrize("golden_path", golden_cases())
def test_analysis_matches_the_golden_busy_and_span(golden_path: Path) -> None:
    golden, source = load_golden(golden_path)
    if not golden.get("devices"):
        pytest.skip("a summary: no device timeline")
    timeline = gpuscope.analyze(str(source)).timeline
    assert timeline is not None
    by_id = {d.device: d for d in timeline.devices}
    for want in golden["devices"]:
        got = by_id[want["id"]]
        assert got.busy_ns == pytest.approx(want["busy_ns"], rel=RELATIVE)
        assert got.span_ns == pytest.approx(want["span_ns"], rel=RELATIVE)
    assert timeline.busy_ns == pytest.approx(golden["gpu_busy_ns"], rel=RELATIVE)


# -- synthetic exports with the real 3.x schema ----------------------------------------------
# Tables absent from the reference export (nsys writes only non-empty ones): their columns as
# nsys 2025 documents them.
EXTRA_TABLES = """
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
    bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
    int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
    nestingLevel INTEGER, callchainId INTEGER);
"""
PID_A, PID_B = 4242, 5151


def gid(pid: int, tid: int | None = None) -> int:
    """nsys's serialized GlobalId: (vm << 56) | (pid << 24) | tid."""
    return (1 << 56) | (pid << 24) | (pid if tid is None else tid)


class Export:
    """A synthetic nsys 3.x export: the reference schema, rows inserted by column name."""

    def __init__(self, path: Path, tables: set[str]) -> None:
        schema = reference_file(SCHEMA_3X).read_text() + EXTRA_TABLES
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(schema)
        made = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in made - tables:
            self.db.execute(f'DROP TABLE "{table}"')  # lazy export: only tables with rows
        self.strings: dict[str, int] = {}
        self.insert("META_DATA_EXPORT", name="EXPORT_SCHEMA_VERSION", value="3.20.3")

    def string(self, text: str) -> int:
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.insert("StringIds", id=self.strings[text], value=text)
        return self.strings[text]

    def insert(self, table: str, **values: Any) -> None:
        columns = ", ".join(f'"{c}"' for c in values)
        marks = ", ".join("?" * len(values))
        self.db.execute(
            f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', list(values.values())
        )

    def kernel(
        self, start: int, dur: int, name: str, pid: int = PID_A, corr: int = 1, **more: Any
    ) -> None:
        row = {
            "start": start,
            "end": start + dur,
            "deviceId": 0,
            "contextId": 1,
            "streamId": 7,
            "correlationId": corr,
            "globalPid": gid(pid) & ~0xFFFFFF,
            "demangledName": self.string(name),
            "shortName": self.string(name.split("(")[0]),
            "registersPerThread": 32,
            "gridX": 4,
            "gridY": 2,
            "gridZ": 1,
            "blockX": 128,
            "blockY": 1,
            "blockZ": 1,
            "staticSharedMemory": 1024,
            "dynamicSharedMemory": 2048,
            "localMemoryPerThread": 16,
            "localMemoryTotal": 0,
            "gridId": corr,
        }
        self.insert("CUPTI_ACTIVITY_KIND_KERNEL", **{**row, **more})

    def call(
        self, start: int, dur: int, name: str, corr: int, pid: int = PID_A, event_class: int = 0
    ) -> None:
        self.insert(
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            start=start,
            end=start + dur,
            eventClass=event_class,
            globalTid=gid(pid, pid + 1),
            correlationId=corr,
            nameId=self.string(name),
            returnValue=0,
        )

    def close(self) -> str:
        self.db.commit()
        self.db.close()
        return str(self.path)


CUDA_TABLES = {
    "StringIds",
    "META_DATA_EXPORT",
    "TARGET_INFO_SESSION_START_TIME",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
}


def test_cpu_only_report_is_refused_with_the_reason(tmp_path: Path) -> None:
    """Like nsys 2025.6's CPU-only report1.sqlite: OS runtime and sampling, no CUPTI table."""
    export = Export(
        tmp_path / "report1.sqlite",
        {
            "StringIds",
            "META_DATA_EXPORT",
            "META_DATA_CAPTURE",
            "TARGET_INFO_GPU",
            "TARGET_INFO_CUDA_DEVICE",
            "OSRT_API",
            "SCHED_EVENTS",
            "PROCESSES",
            "ENUM_CUDA_MEM_KIND",
        },
    )
    export.insert("META_DATA_CAPTURE", name="PROCESS_0:COLLECT_CUDA_TRACE", value="false")
    export.insert(
        "META_DATA_CAPTURE", name="PROCESS_0:ENVIRONMENT_VARIABLE", value='TOKEN="s3cret"'
    )
    export.insert(
        "OSRT_API",
        start=1,
        end=2,
        eventClass=27,
        globalTid=gid(1),
        nameId=export.string("poll"),
        returnValue=0,
    )
    path = export.close()
    assert NsysReader().sniff(path)
    with pytest.raises(ReaderError) as caught:
        read_trace(path)
    message = str(caught.value)
    assert message.startswith(path) and "\n" not in message and "s3cret" not in message
    assert "no CUDA activity" in message and "CUDA tracing was off" in message
    assert "OS runtime calls" in message and "--trace=cuda" in message
    assert_one_error_line(cli("analyze", path, cwd=tmp_path), "no CUDA activity")


def test_memset_nvtx_driver_and_enum_sync(tmp_path: Path) -> None:
    tables = CUDA_TABLES | {
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "ENUM_CUPTI_SYNC_TYPE",
        "ENUM_CUDA_MEMCPY_OPER",
        "ENUM_CUDA_MEM_KIND",
        "NVTX_EVENTS",
    }
    export = Export(tmp_path / "mixed.sqlite", tables)
    export.insert(
        "ENUM_CUPTI_SYNC_TYPE",
        id=3,
        label="Stream sync",
        name="CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE",
    )
    export.insert(
        "ENUM_CUDA_MEMCPY_OPER", id=1, name="CUDA_MEMCPY_KIND_HTOD", label="Host-to-Device"
    )
    export.insert("ENUM_CUDA_MEM_KIND", id=1, name="CUDA_MEMOPR_MEMORY_KIND_PINNED", label="Pinned")
    export.insert("ENUM_CUDA_MEM_KIND", id=2, name="CUDA_MEMOPR_MEMORY_KIND_DEVICE", label="Device")
    export.kernel(1000, 500, "k(int)", corr=11)
    export.call(900, 50, "cudaLaunchKernel_v7000", 11)
    export.call(950, 20, "cuLaunchKernel", 12, event_class=1)
    export.insert(
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        start=2000,
        end=2100,
        deviceId=0,
        contextId=1,
        streamId=7,
        correlationId=13,
        globalPid=gid(PID_A),
        bytes=4096,
        copyKind=1,
        srcKind=1,
        dstKind=2,
    )
    export.insert(
        "CUPTI_ACTIVITY_KIND_MEMSET",
        start=3000,
        end=3040,
        deviceId=0,
        contextId=1,
        streamId=7,
        correlationId=14,
        globalPid=gid(PID_A),
        value=0,
        bytes=256,
        memKind=2,
    )
    export.insert(
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        start=4000,
        end=4500,
        deviceId=0,
        contextId=1,
        streamId=7,
        correlationId=99,
        globalPid=gid(PID_A),
        syncType=3,
        eventId=0xFFFFFFFF,
    )
    tid = gid(PID_A, PID_A + 1)
    export.insert("NVTX_EVENTS", start=500, end=5000, eventType=59, text="step", globalTid=tid)
    export.insert(
        "NVTX_EVENTS", start=600, end=700, eventType=60, textId=export.string("load"), globalTid=tid
    )
    export.insert("NVTX_EVENTS", start=800, eventType=34, text="mark", globalTid=tid)
    export.insert("NVTX_EVENTS", start=900, eventType=59, text="never ended", globalTid=tid)
    export.insert("NVTX_EVENTS", start=0, end=0, eventType=75, text="domain", globalTid=tid)
    trace = read_trace(export.close())
    gpu = trace.gpu
    assert list(gpu.kind) == [KERNEL, MEMCPY, MEMSET]
    assert names(trace, gpu) == ["k(int)", "[CUDA memcpy Host-to-Device]", "[CUDA memset]"]
    assert list(gpu.bytes) == [-1, 4096, 256] and gpu.copy[1] == HTOD
    assert gpu.host_memory[1] == PINNED
    assert trace.launch_params.shared_mem[0] == 3072 and trace.launch_params.scratch[0] == 16
    assert names(trace, trace.host) == ["cudaLaunchKernel", "cuLaunchKernel"]
    assert list(trace.host.domain) == [RUNTIME, DRIVER] and set(trace.host.tid) == {PID_A + 1}
    assert names(trace, trace.syncs) == ["Stream Sync"]  # no API call: the ENUM's type
    ops = trace.ops
    assert names(trace, ops) == ["step", "load", "mark"] and set(ops.kind) == {ANNOTATION}
    assert list(ops.dur) == [4500, 100, 0]
    assert any("1 NVTX ranges never ended" in w for w in trace.meta.warnings)
    assert trace.meta.provides >= {"markers", "host_api", "links"}
    assert trace.meta.event_counts == {
        "kernel": 1,
        "memcpy": 1,
        "memset": 1,
        "runtime": 1,
        "driver": 1,
        "sync": 1,
        "nvtx": 3,
    }


def test_several_processes_are_one_trace_with_a_warning(tmp_path: Path) -> None:
    export = Export(tmp_path / "two.sqlite", CUDA_TABLES | {"PROCESSES"})
    for pid, name in ((PID_A, "python"), (PID_B, "worker")):
        export.insert("PROCESSES", globalPid=gid(pid) & ~0xFFFFFF, pid=pid, name=name)
        export.kernel(1000 + pid, 100, f"k_{name}()", pid=pid, corr=5)  # the same correlation id
        export.call(900 + pid, 10, "cudaLaunchKernel_v7000", 5, pid=pid)
    trace = read_trace(export.close())
    (warning,) = trace.meta.warnings
    assert "2 processes have GPU activity" in warning and "4242 (python)" in warning
    assert "5151 (worker)" in warning
    links = dict(zip(trace.host.correlation, trace.host.start, strict=True))
    for row in range(2):  # each kernel still finds its own launch
        start = links[trace.gpu.correlation[row]]
        assert trace.gpu.start[row] - start == 100
    assert trace.meta.extra["processes"] == {"4242": "python", "5151": "worker"}


def test_target_info_cuda_device_maps_cuda_ids_to_gpus(tmp_path: Path) -> None:
    export = Export(
        tmp_path / "gpus.sqlite", CUDA_TABLES | {"TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE"}
    )
    for gpu_id, name in ((0, "NVIDIA H100"), (1, "NVIDIA H200")):
        export.insert(
            "TARGET_INFO_GPU",
            vmId=1,
            id=gpu_id,
            name=name,
            smCount=132,
            computeMajor=9,
            computeMinor=0,
            cuDevice=gpu_id,
        )
    export.insert("TARGET_INFO_CUDA_DEVICE", gpuId=1, cudaId=0, pid=PID_A)  # CUDA_VISIBLE_DEVICES=1
    export.kernel(1000, 100, "k()")
    trace = read_trace(export.close())
    (device,) = trace.meta.devices
    assert (device.id, device.name, device.arch, device.compute_units) == (
        0,
        "NVIDIA H200",
        "sm_90",
        132,
    )


def test_missing_columns_read_as_unknown(tmp_path: Path) -> None:
    """An older or newer schema: columns the reader wants may be absent."""
    path = tmp_path / "minimal.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, shortName INTEGER);
        INSERT INTO StringIds VALUES (1, 'kern');
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 30, 1);
    """)
    db.close()
    trace = read_trace(str(path))
    assert names(trace, trace.gpu) == ["kern"] and list(trace.gpu.dur) == [20]
    assert (trace.gpu.device[0], trace.gpu.stream[0], trace.gpu.correlation[0]) == (-1, -1, -1)
    assert trace.meta.schema == "unknown" and "host_api" not in trace.meta.provides


# -- the fake nsys of `gpuscope run`, and the .nsys-rep export ---------------------------------
def fake_run(tmp_path: Path, log: Path) -> Path:
    env = {
        **os.environ,
        "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}",
        "FAKE_TOOL_LOG": str(log),
    }
    out = tmp_path / "nsys_output" / "report"
    subprocess.run(
        ["nsys", "profile", f"--output={out}", sys.executable, "-c", "pass"],
        check=True,
        env=env,
        capture_output=True,
    )
    return out.with_suffix(".nsys-rep")


def exports(log: Path) -> int:
    if not log.exists():
        return 0
    return sum(json.loads(line)["argv"][:1] == ["export"] for line in log.read_text().splitlines())


def with_fake_nsys(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_TOOL_LOG", str(log))


def test_reads_what_the_fake_nsys_export_writes(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    report = fake_run(tmp_path, log)
    env = {**os.environ, "PATH": f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        [
            "nsys",
            "export",
            "--type=sqlite",
            f"--output={report.with_suffix('.sqlite')}",
            str(report),
        ],
        check=True,
        env=env,
    )
    (trace,) = read_traces(str(report.parent))  # the folder of a `gpuscope run`
    assert names(trace, trace.gpu) == [
        "void vector_add<float>(float*, float const*, float const*, int)",
        "gemm_kernel_64x64(float const*, float const*, float*, int, int, int)",
    ]
    assert list(trace.gpu.dur) == [12800, 95360] and trace.meta.schema == "3.20.3"
    assert trace.meta.base_time_ns is not None


def test_nsys_rep_is_exported_beside_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "tools.log"
    report = fake_run(tmp_path, log)
    with_fake_nsys(monkeypatch, log)
    first = NsysReader().read(str(report))
    sqlite = report.with_suffix(".sqlite")
    assert sqlite.is_file() and exports(log) == 1
    assert first.meta.files == (str(report), str(sqlite)) and first.meta.path == str(report)
    assert not [p for p in report.parent.iterdir() if p.name.startswith(".gpuscope")]
    second = NsysReader().read(str(report))  # the export is newer than the report: reused
    assert exports(log) == 1 and list(second.gpu.dur) == list(first.gpu.dur)


def test_stale_export_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "tools.log"
    report = fake_run(tmp_path, log)
    stale = report.with_suffix(".sqlite")
    stale.write_bytes(b"someone's file")
    os.utime(stale, ns=(1, 1))
    with_fake_nsys(monkeypatch, log)
    trace = NsysReader().read(str(report))
    assert stale.read_bytes() == b"someone's file" and exports(log) == 1
    assert trace.meta.files == (str(report),)
    assert any("older than report.nsys-rep" in w for w in trace.meta.warnings)


def test_read_only_folder_exports_to_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "tools.log"
    report = fake_run(tmp_path, log)
    with_fake_nsys(monkeypatch, log)
    monkeypatch.setattr(nsys_export, "writable", lambda _: False)  # root may write anywhere
    trace = NsysReader().read(str(report))
    assert not report.with_suffix(".sqlite").exists() and len(trace.gpu) == 2
    assert trace.meta.files == (str(report),) and exports(log) == 1


def test_nsys_rep_without_nsys_says_how_to_fix_it(tmp_path: Path) -> None:
    report = tmp_path / "report1.nsys-rep"
    report.write_bytes(b"NVIDIA Tegra Profiler Report 1.\n" + bytes(range(256)) * 4)
    assert sniff(str(report)) is not None and sniff(str(report)).name == "nsys"  # type: ignore[union-attr]
    bare = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "nsys").exists()
    )
    done = cli("analyze", report, cwd=tmp_path, path=bare)
    assert_one_error_line(done, "report1.nsys-rep", "Install", "nsys export --type=sqlite")


def test_failed_export_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "broken.nsys-rep"
    report.write_bytes(b"NVIDIA Tegra Profiler Report 1.\n\x00\x01")  # the fake cannot read it
    with_fake_nsys(monkeypatch, tmp_path / "tools.log")
    with pytest.raises(ReaderError, match="nsys export failed") as caught:
        read_trace(str(report))
    assert "\n" not in str(caught.value)


# -- damaged and wrong inputs ------------------------------------------------------------------
def test_empty_garbage_and_foreign_sqlite(tmp_path: Path) -> None:
    foreign = tmp_path / "other.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE StringIds (id INTEGER, value TEXT)")  # one nsys-like name only
    db.close()
    assert not NsysReader().sniff(str(foreign))
    with pytest.raises(ReaderError, match="not an Nsight Systems SQLite export"):
        NsysReader().read(str(foreign))
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(
        b"SQLite format 3\x00" + bytes(random.Random(1).randrange(256) for _ in range(5000))
    )
    with pytest.raises(ReaderError):
        read_trace(str(garbage))
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(ReaderError, match="empty"):
        read_trace(str(empty))


@pytest.mark.parametrize("share", [0.05, 0.3, 0.6, 0.95])
def test_truncated_export(tmp_path: Path, share: float) -> None:
    data = reference_file(REEXPORT).read_bytes()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(data[: int(len(data) * share)])
    with pytest.raises(ReaderError) as caught:
        read_trace(str(cut))
    assert "\n" not in str(caught.value) and str(caught.value).startswith(str(cut))


def test_locked_export(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite"
    shutil.copy(reference_file(REPORT4), path)
    holder = sqlite3.connect(path, check_same_thread=False)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(30, holder.close)
    release.start()
    try:
        started = time.monotonic()
        with pytest.raises(ReaderError, match="locked"):
            NsysReader().read(str(path))
        assert time.monotonic() - started < 20
    finally:
        release.cancel()
        holder.close()


def test_never_writes_to_the_export(tmp_path: Path) -> None:
    path = tmp_path / "report4.sqlite"
    shutil.copy(reference_file(REPORT4), path)
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    read_trace(str(path))
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report4.sqlite"]


# `_csv`'s row-by-row path leaves the file open when it stops at a cut last row (reported)
LEAKS_A_HANDLE = pytest.mark.filterwarnings(
    "ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)


@LEAKS_A_HANDLE
def test_gpu_trace_cut_mid_row(tmp_path: Path) -> None:
    text = reference_file(f"{STATS}/va4_cuda_gpu_trace.csv").read_text()
    lines = text.splitlines(keepends=True)
    cut = tmp_path / "cut_cuda_gpu_trace.csv"
    cut.write_text("".join(lines[:1001]) + lines[1001][:25])
    trace = read_trace(str(cut))
    assert len(trace.gpu) == 1000 and trace.meta.truncated
    assert any("cut short" in w for w in trace.meta.warnings)


def test_stats_csv_without_a_required_column(tmp_path: Path) -> None:
    text = reference_file(f"{STATS}/va4_cuda_gpu_trace.csv").read_text()
    header, *rows = text.splitlines()
    cells = header.split(",")
    keep = [i for i, c in enumerate(cells) if c != "Name"]
    broken = tmp_path / "x_cuda_gpu_trace.csv"
    body = [",".join(cells[i] for i in keep)] + [
        ",".join(r.split(",")[i] for i in keep) for r in rows[:3]
    ]
    broken.write_text("\n".join(body) + "\n")
    with pytest.raises(ReaderError, match="without the column"):
        read_trace(str(broken))
    assert_one_error_line(cli("analyze", broken, cwd=tmp_path), "without the column(s) Name")


def test_text_stats_without_cuda_tables(tmp_path: Path) -> None:
    """The default text output of `nsys stats` on a CPU-only report (as report1_stats.txt)."""
    text = tmp_path / "report1_stats.txt"
    text.write_text(
        "Generating SQLite file report1.sqlite from report1.nsys-rep\n"
        "Processing [report1.sqlite] with [/opt/nsys/reports/osrt_sum.py]... \n\n"
        " ** OS Runtime Summary (osrt_sum):\n\n"
        " Time (%)  Total Time (ns)  Num Calls  Name\n"
        " --------  ---------------  ---------  ----\n"
        "     63.2    1,346,714,824          5  sem_wait\n\n"
        "Processing [report1.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]... \n"
        "SKIPPED: report1.sqlite does not contain CUDA trace data.\n"
    )
    assert NsysReader().sniff(str(text))
    assert_one_error_line(cli("analyze", text, cwd=tmp_path), "no CUDA", "does not contain CUDA")


def test_text_stats_with_cuda_summaries(tmp_path: Path) -> None:
    text = tmp_path / "stats.txt"
    text.write_text(
        "Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n\n"
        " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
        " Total Time (ns)  Instances   Min (ns)     Max (ns)             Name\n"
        " ---------------  ---------  ----------  -----------  -------------------------\n"
        "     130,855,114          2  30,855,114  100,000,000  add(int, float *, float *)\n"
    )
    trace = read_trace(str(text))
    assert trace.meta.schema == "stats-text" and names(trace, trace.totals) == [KERNEL_NAME]
    t = trace.totals
    assert (t.count[0], t.total_ns[0], t.min_ns[0], t.max_ns[0]) == (
        2,
        130855114,
        30855114,
        100000000,
    )


def test_group_key() -> None:
    reader = NsysReader()
    assert reader.group_key("/o/va4_cuda_gpu_trace.csv") == "/o/va4"
    assert reader.group_key("/o/report1.nsys-rep") == reader.group_key("/o/report1.sqlite")
    assert reader.group_key("/o/report1_cuda_gpu_kern_sum.csv") == "/o/report1"
    assert reader.group_key("/o/report1_stats.txt") == "/o/report1_stats"
