"""The rocprof v1 reader on real rocprof outputs (read in place) and on damaged copies of them.

Reference files: `shared/reference/formats/rocprof-v1/` (MI300A, MI250X and a ROCm 4 gfx906 run;
see its PROVENANCE.md). The golden numbers were written by `make_rocprof_golden.py`, a plain
script that shares no code with gpuscope.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import importlib.util
import json
import random
import shutil
import sqlite3
import subprocess
import sys
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import API, HSA, KERNEL, MEMCPY, MEMSET, RUNTIME, Trace
from gpuscope.trace.readers.rocprof import RocprofReader
from gpuscope.trace.registry import read_trace, read_traces, sniff
from tests.unit.trace.reference import FORMATS, GOLDEN, reference_file

ROOT = "rocprof-v1"
MI250 = f"{ROOT}/hpctraining-finite-difference-mi250"
PMC = f"{MI250}/xr_laplacian_dp_kernel1_pmc"
MI300A = f"{ROOT}/hip-programming-gfx942"
KOKKOS = f"{ROOT}/kokkos-rocm4-2021"
LLAMA = f"{ROOT}/llama-cpp-gfx1201-rocm6"
GOLDENS = sorted(GOLDEN.glob("rocprof-v1__*.json"))
GOLDEN_SCRIPT = GOLDEN / "make_rocprof_golden.py"
RELATIVE = 1e-3
HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",'
    '"arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs","EndNs",'
    '"CompleteNs","DurationNs"'
)


@functools.cache
def trace_of(relative: str) -> Trace:
    return read_trace(str(reference_file(relative)))


def per_name(trace: Trace, table: Any, mask: Any = None) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for i in np.flatnonzero(np.ones(len(table), bool) if mask is None else mask):
        entry = out[trace.names[table.name[i]]]
        entry[0] += 1
        entry[1] += max(int(table.dur[i]), 0)  # -1: no duration
    return dict(out)


def totals_of(relative: str) -> dict[str, list[int]]:
    trace = trace_of(relative)
    t = trace.totals
    return {trace.names[t.name[i]]: [int(t.count[i]), int(t.total_ns[i])] for i in range(len(t))}


# -- goldens ----------------------------------------------------------------------------------
@functools.cache
def golden_script() -> Any:
    """make_rocprof_golden.py as a module: the golden of a file that has no committed one."""
    spec = importlib.util.spec_from_file_location("make_rocprof_golden", GOLDEN_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden_name(relative: str) -> str:
    return "rocprof-v1__" + "__".join(Path(relative).parts) + ".json"


def golden_cases() -> list[Any]:
    """Every file with a committed golden, and every rocprof file of the reference folder."""
    files = {json.loads(path.read_text())["source"]["file"] for path in GOLDENS}
    root = FORMATS / ROOT
    if root.is_dir():
        script = golden_script()
        files |= {p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and script.kind_of(p) is not None}  # fmt: skip
    return [pytest.param(f, id=f.replace("/", "__")) for f in sorted(files)]


def load_golden(relative: str) -> tuple[dict[str, Any], Path]:
    source = reference_file(f"{ROOT}/{relative}")
    committed = GOLDEN / golden_name(relative)
    if not committed.is_file():  # a reference file newer than the goldens: compute it now
        return golden_script().golden(source, FORMATS / ROOT), source
    golden: dict[str, Any] = json.loads(committed.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert digest == golden["source"]["sha256"], f"{source} changed: rerun make_rocprof_golden.py"
    return golden, source


def test_every_reference_file_the_reader_claims_has_a_golden() -> None:
    root = reference_file(ROOT)
    claimed = {p for p in root.rglob("*") if p.is_file() and RocprofReader().sniff(str(p))}
    claimed = {p for p in claimed if not p.name.endswith(".sysinfo.txt")}
    covered = {p for p in claimed if golden_script().kind_of(p) is not None}
    assert claimed == covered  # the golden script knows every kind of file the reader reads
    missing = sorted(p.name for p in claimed if not (GOLDEN / golden_name(
        p.relative_to(root).as_posix())).is_file())  # fmt: skip
    if missing:
        pytest.skip(f"goldens computed on the fly for {missing}: run make_rocprof_golden.py")


@pytest.mark.parametrize("relative", golden_cases())
def test_reader_matches_the_golden_numbers(relative: str) -> None:
    golden, source = load_golden(relative)
    if golden.get("readable") is False:
        with pytest.raises(ReaderError, match="fragment"):
            read_trace(str(source))
        return
    trace = read_trace(str(source))
    if golden["kind"] == "stats":
        totals = golden["totals"]
        assert totals_count(trace) == (totals["count"], totals["time_ns"])
        assert totals_of(f"{ROOT}/{relative}") == totals["per_name"]
        return
    gpu = trace.gpu
    for kind, key in ((KERNEL, "kernels"), (MEMCPY, "memcpy"), (MEMSET, "memset")):
        mine = gpu.kind == kind
        assert int(mine.sum()) == golden[key]["count"], key
        time = int(gpu.dur[mine].sum()) if (gpu.dur[mine] >= 0).all() else None
        assert time == golden[key]["time_ns"], key
    copies = gpu.bytes[gpu.kind == MEMCPY]
    assert int(copies[copies >= 0].sum()) == golden["memcpy"]["bytes"]
    assert int((copies < 0).sum()) == golden["memcpy"]["without_bytes"]
    assert per_name(trace, gpu, gpu.kind == KERNEL) == golden["per_name"]


def totals_count(trace: Trace) -> tuple[int, int]:
    return int(trace.totals.count.sum()), int(trace.totals.total_ns.sum())


@pytest.mark.parametrize("relative", golden_cases())
def test_analysis_matches_the_golden_busy_and_span(relative: str) -> None:
    golden, source = load_golden(relative)
    if golden["kind"] not in ("dispatch", "json", "db") or golden.get("readable") is False:
        pytest.skip("no per-event device timeline in this file")
    result = gpuscope.analyze(str(source)).to_dict()
    assert result["kernels"]["count"] == golden["kernels"]["count"]
    assert result["memcpy"]["count"] == golden["memcpy"]["count"]
    assert result["memcpy"]["bytes"] == golden["memcpy"]["bytes"]
    if golden["kernels"]["time_ns"] is None:
        assert not golden["devices"]
        return
    close(result["kernels"]["time_us"], golden["kernels"]["time_ns"])
    close(result["gpu_busy_us"], golden["gpu_busy_ns"])
    devices = {row["id"]: row for row in result["devices"]}
    for row in golden["devices"]:
        close(devices[row["id"]]["busy_us"], row["busy_ns"])
        close(devices[row["id"]]["span_us"], row["span_ns"])


def close(got_us: float, want_ns: int) -> None:
    want_us = want_ns / 1000
    assert abs(got_us - want_us) <= RELATIVE * max(want_us, 1e-9), (got_us, want_us)


# -- the MI250X run: results.csv + stats + sysinfo + a broken results.json ------------------------
def test_mi250_run_directory_is_one_trace_with_devices_and_a_warning_for_the_fragment() -> None:
    traces = read_traces(str(reference_file(MI250)))
    keys = [str(Path(t.meta.path).relative_to(reference_file(MI250))) for t in traces]
    assert keys == ["results", "xr_laplacian_dp_kernel1_pmc/data_movement.csv",
                    "xr_laplacian_dp_kernel1_pmc/results"]  # fmt: skip
    trace = traces[0]
    meta = trace.meta
    assert meta.format == "rocprof" and meta.vendor == "amd" and meta.clock == "boot"
    assert meta.provides == {"kernels", "timestamps", "launch_params", "devices"}
    assert [(d.id, d.name, d.arch, d.compute_units) for d in meta.devices] == [
        (8, "AMD Instinct MI250X/MI250", "gfx90a", 104)
    ]
    assert len(trace.gpu) == 1004 and len(trace.totals) == 0  # stats dropped: kernels were read
    assert any("fragment" in w for w in meta.warnings)
    assert Path(meta.path).name == "results"


def test_mi250_kernel_rows_launch_params_and_names() -> None:
    trace = trace_of(f"{MI250}/results.csv")
    gpu = trace.gpu
    assert trace.names[gpu.name[0]] == (
        "void test_function_kernel<double>(double*, int, int, int, double, double, double)"
    )
    assert trace.names[gpu.name[2]] == "__amd_rocclr_fillBufferAligned"  # a blit stays a kernel
    assert (gpu.start[0], gpu.dur[0], gpu.device[0], gpu.stream[0]) == (
        1915914098849134, 1130883, 8, 0
    )  # fmt: skip
    assert (gpu.correlation == -1).all()  # results.csv links to no host call
    lp = trace.launch_params
    row = [int(getattr(lp, k)[0]) for k in ("row", "grid_x", "grid_y", "block_x", "registers")]
    assert row == [0, 134217728 // 256, 1, 256, 16]
    assert (int(lp.accum_registers[2]), int(lp.scalar_registers[2])) == (4, 32)


@pytest.mark.parametrize("folder", [MI250, PMC])
def test_kernel_trace_agrees_with_its_stats_file(folder: str) -> None:
    trace = trace_of(f"{folder}/results.csv")
    assert per_name(trace, trace.gpu) == totals_of(f"{folder}/results.stats.csv")


def test_counter_csv_without_timestamps() -> None:
    trace = trace_of(f"{PMC}/data_movement.csv")
    meta = trace.meta
    assert meta.provides == {"counters", "launch_params"}
    assert meta.clock == "" and meta.schema == "pmc-csv/rocm5.3"
    assert len(trace.gpu) == 1004 and (trace.gpu.start == -1).all() and (trace.gpu.dur == -1).all()
    assert len(trace.counters) == 1004 * 5
    first = trace.counters.row == 0
    pairs = zip(trace.counters.name[first], trace.counters.value[first], strict=True)
    values = {trace.names[n]: v for n, v in pairs}
    assert values == {"FETCH_SIZE": 6.8125 * 1024, "WRITE_SIZE": 1044480.0 * 1024,  # KB -> bytes
                      "TCP_TOTAL_CACHE_ACCESSES_sum": 33554432.0, "TCP_TCC_READ_REQ_sum": 0.0,
                      "TCP_TCC_WRITE_REQ_sum": 16777216.0}  # fmt: skip
    assert meta.counter_units == {"FETCH_SIZE": "byte", "WRITE_SIZE": "byte"}


def test_counter_csv_joins_the_kernel_trace_of_its_run(tmp_path: Path) -> None:
    shutil.copy(reference_file(f"{PMC}/results.csv"), tmp_path / "results.csv")
    shutil.copy(reference_file(f"{PMC}/data_movement.csv"), tmp_path / "results.pmc.csv")
    trace = read_trace(str(tmp_path))
    assert {"kernels", "timestamps", "counters"} <= trace.meta.provides
    assert len(trace.gpu) == 1004 and (trace.gpu.start > 0).all()
    assert len(trace.counters) == 5020 and (trace.counters.row >= 0).all()
    assert sorted(trace.counters.row[trace.counters.row < 1].tolist()) == [0] * 5


def test_several_counter_passes_merge_by_index(tmp_path: Path) -> None:
    header, rows = csv_rows(reference_file(f"{PMC}/data_movement.csv"))
    for number, keep in ((1, [17, 18]), (2, [19, 20, 21])):
        with open(tmp_path / f"run.pass{number}.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header[:17] + [header[i] for i in keep])
            writer.writerows(row[:17] + [row[i] for i in keep] for row in rows)
    trace = read_trace(str(tmp_path))
    assert len(trace.gpu) == 1004 and len(trace.counters) == 5020
    assert (trace.counters.row >= 0).all() and not trace.meta.warnings


def csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


# -- the MI300A run: results.json + db + stats + a counter CSV --------------------------------
def test_mi300a_json_kernels_copies_calls_and_links() -> None:
    trace = trace_of(f"{MI300A}/results.json")
    gpu, host = trace.gpu, trace.host
    assert trace.meta.provides >= {"kernels", "timestamps", "copies", "copy_bytes", "host_api",
                                   "links", "devices"}  # fmt: skip
    kernel = np.flatnonzero(gpu.kind == KERNEL)[0]
    launch = np.flatnonzero(host.correlation == gpu.correlation[kernel])[0]
    assert trace.names[host.name[launch]] == "hipLaunchKernel"
    assert (gpu.start[kernel], gpu.dur[kernel], gpu.device[kernel]) == (622109244416840, 3431611, 4)
    copies = gpu.kind == MEMCPY
    assert gpu.bytes[copies].tolist() == [4_000_000_000] * 3
    assert gpu.copy[copies].tolist() == [0, 0, 1]  # HtoD, HtoD, DtoH
    assert (host.domain == RUNTIME).all() and len(host) == 13


@pytest.mark.parametrize("folder", [MI300A, KOKKOS])
def test_json_agrees_with_the_stats_files_of_its_run(folder: str) -> None:
    trace = trace_of(f"{folder}/results.json")
    gpu = trace.gpu
    assert per_name(trace, gpu, gpu.kind == KERNEL) == totals_of(f"{folder}/results.stats.csv")
    assert per_name(trace, gpu, gpu.kind != KERNEL) == totals_of(f"{folder}/results.copy_stats.csv")
    assert per_name(trace, trace.host) == totals_of(f"{folder}/results.hip_stats.csv")


@pytest.mark.parametrize("folder", [MI300A, KOKKOS])
def test_json_flows_link_what_the_database_links(folder: str) -> None:
    """results.db has the correlation ids themselves; the JSON's arrows must find the same."""

    def launches(trace: Trace) -> dict[tuple[int, int], tuple[str, int]]:
        host = {int(c): i for i, c in enumerate(trace.host.correlation) if c >= 0}
        out = {}
        for i, corr in enumerate(trace.gpu.correlation):
            call = host.get(int(corr))
            if call is not None:
                key = (int(trace.gpu.start[i]), int(trace.gpu.kind[i]))
                out[key] = (trace.names[trace.host.name[call]], int(trace.host.start[call]))
        return out

    from_json = launches(trace_of(f"{folder}/results.json"))
    from_db = launches(trace_of(f"{folder}/results.db"))
    assert from_json.items() <= from_db.items()
    # two of kokkos's hipMemset calls wrote two fills each; the JSON draws one arrow per call
    assert len(from_db) - len(from_json) == (2 if folder == KOKKOS else 0)


def test_mi300a_counter_csv() -> None:
    trace = trace_of(f"{MI300A}/output_vec_add_gpu.csv")
    values = {
        trace.names[n]: v for n, v in zip(trace.counters.name, trace.counters.value, strict=True)
    }
    assert values == {"GPUBusy": 100.0, "Wavefronts": 15625000.0}
    assert trace.meta.counter_units == {"GPUBusy": "%"}
    assert int(trace.launch_params.grid_x[0]) == 1_000_000_000 // 256


def test_mi300a_directory_holds_two_runs() -> None:
    traces = read_traces(str(reference_file(MI300A)))
    assert [Path(t.meta.path).name for t in traces] == ["output_vec_add_gpu.csv", "results"]
    run = traces[1]
    assert [(d.id, d.name, d.arch, d.compute_units) for d in run.meta.devices] == [
        (4, "AMD Instinct MI300A", "gfx942", 228)
    ]
    assert run.meta.schema == "json+sysinfo"  # totals and db not needed: the JSON has events


# -- the ROCm 4 kokkos run: relative ts, ROCTX, unquoted stats, old db --------------------------
def test_kokkos_json_relative_ts_markers_and_devices() -> None:
    trace = read_trace(str(reference_file(KOKKOS)))
    meta = trace.meta
    assert meta.schema == "json/relative-ts+sysinfo"
    assert meta.event_counts == {"kernels": 8, "memcpy": 24, "memset": 6, "host_calls": 104,
                                 "markers": 9}  # fmt: skip
    assert "totals" not in meta.provides and len(trace.totals) == 0
    assert [(d.id, d.name, d.arch, d.compute_units) for d in meta.devices] == [
        (0, "Vega 20", "gfx906", 64)  # dev-id 0 is the first GPU (ROCm 4 wrote ordinals)
    ]
    ops = trace.ops
    first = trace.names[ops.name[0]]
    assert (first, int(ops.start[0]), int(ops.dur[0])) == (
        "Kokkos::Initialization Complete", 704649223497252, 0  # a mark
    )  # fmt: skip
    assert int(ops.dur[1]) == 704649232231769 - 704649230411757
    assert trace.gpu.stream[trace.gpu.kind == MEMCPY].max() == 2  # the lane was the stream


def test_kokkos_unquoted_stats_names_with_commas() -> None:
    totals = totals_of(f"{KOKKOS}/results.stats.csv")
    trace = trace_of(f"{KOKKOS}/results.json")
    kernels = {trace.names[n] for n in trace.gpu.name[trace.gpu.kind == KERNEL]}
    assert set(totals) == kernels and len(totals) == 7
    assert "Unknown command type" not in totals  # barrier packets are not kernels
    assert totals["Kokkos::(anonymous namespace)::init_lock_array_kernel_atomic()"] == [1, 11040]
    assert trace_of(f"{KOKKOS}/results.stats.csv").meta.schema == "kernels-stats/unquoted"


def test_stats_file_kinds() -> None:
    copies = trace_of(f"{KOKKOS}/results.copy_stats.csv")
    kinds = {
        copies.names[n]: int(k) for n, k in zip(copies.totals.name, copies.totals.kind, strict=True)
    }
    assert kinds == {"CopyHostToDevice": MEMCPY, "CopyDeviceToHost": MEMCPY, "FillBuffer": MEMSET}
    hip = trace_of(f"{KOKKOS}/results.hip_stats.csv")
    assert (hip.totals.kind == API).all() and hip.meta.provides == {"totals"}
    assert (hip.totals.min_ns == -1).all()


# -- the RDNA4 llama.cpp run (judged by CI where the reference exists) -------------------------
def test_llama_rdna4_kernel_trace() -> None:
    trace = read_trace(str(reference_file(LLAMA)))
    assert (trace.gpu.kind == KERNEL).sum() == 1963
    assert trace.meta.devices and trace.meta.devices[0].arch == "gfx1201"
    assert per_name(trace, trace.gpu) == totals_of(f"{LLAMA}/results.stats.csv")
    assert not any(trace.names[n].endswith(".kd") for n in np.unique(trace.gpu.name))


# -- sniffing ---------------------------------------------------------------------------------
def test_rocprof_claims_none_of_the_torch_profiler_traces() -> None:
    traces = FORMATS / ".." / "traces"
    if not traces.is_dir():
        pytest.skip(f"reference traces not found at {traces}")
    for path in sorted(traces.iterdir()):
        assert not RocprofReader().sniff(str(path)), path.name
    rpd_json = FORMATS / "rpd" / "matmul_result.json"
    if rpd_json.is_file():
        assert not RocprofReader().sniff(str(rpd_json))


def test_the_registry_routes_every_rocprof_file_here() -> None:
    root = reference_file(ROOT)
    for name in ("results.json", "results.db", "results.stats.csv", "results.hip_stats.csv"):
        reader = sniff(str(root / "kokkos-rocm4-2021" / name))
        assert reader is not None and reader.name == "rocprof", name


def test_group_key() -> None:
    key = RocprofReader().group_key
    assert key("out/results.stats.csv") == key("out/results.json") == str(Path("out/results"))
    assert key("out/data_movement.csv") == str(Path("out/data_movement"))


# -- synthetic variants built from the real headers ------------------------------------------
def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def kernel_csv(rows: list[tuple[int, str, int, int]], header: str = HEADER) -> str:
    lines = [header]
    for index, name, begin, end in rows:
        lines.append(f'{index},"{name}",2,0,{index},1,1,1000,256,512,16,8,4,24,32,"0x0","0x1",'
                     f"{begin - 10},{begin},{end},{end + 10},{end - begin}")  # fmt: skip
    return "\n".join(lines) + "\n"


def test_legacy_register_columns(tmp_path: Path) -> None:
    header = HEADER.replace('"arch_vgpr","accum_vgpr","sgpr","wave_size"', '"vgpr","sgpr","fbar"')
    row = '0,"k(int, float) [clone .kd]",2,0,0,1,1,1000,256,0,0,12,16,0,"0x0","0x1",5,10,30,40,20'
    trace = read_trace(write(tmp_path / "results.csv", f"{header}\n{row}\n"))
    assert trace.meta.schema == "trace-csv/legacy"
    assert trace.names[trace.gpu.name[0]] == "k(int, float)"
    lp = trace.launch_params
    assert (int(lp.grid_x[0]), int(lp.registers[0]), int(lp.scalar_registers[0])) == (4, 12, 16)
    assert int(lp.accum_registers[0]) == -1


def test_duration_column_is_checked(tmp_path: Path) -> None:
    text = kernel_csv([(0, "k", 100, 150)]).replace(",50\n", ",49\n")
    trace = read_trace(write(tmp_path / "results.csv", text))
    assert int(trace.gpu.dur[0]) == 50 and any("DurationNs" in w for w in trace.meta.warnings)


def test_header_only_kernel_trace_is_an_empty_run(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path / "results.csv", HEADER + "\n"))
    assert len(trace.gpu) == 0 and "kernels" in trace.meta.provides


def test_json_links_are_borrowed_by_the_kernel_trace(tmp_path: Path) -> None:
    write(tmp_path / "results.csv", kernel_csv([(0, "k(int)", 20_000, 30_000)]))
    write(tmp_path / "results.json", chrome_trace(
        calls=[("hipLaunchKernel", 10_000, 14_000, "( kernel(k(int)) stream(0))")],
        ops=[(6 + 2, "1", "k(int)", 20_000, 30_000)],
        flows=[(0, 2, 100, 12, 8, 1, 20)],
    ))  # fmt: skip
    trace = read_trace(str(tmp_path))
    assert trace.meta.schema == "trace-csv/rocm5.3+json"
    assert int(trace.gpu.correlation[0]) == int(trace.host.correlation[0]) == 0
    assert len(trace.launch_params) == 1  # from the CSV


def chrome_trace(
    calls: list[tuple[str, int, int, str]],
    ops: list[tuple[int, str, str, int, int]],
    flows: list[tuple[int, int, int, int, int, int, int]],
) -> str:
    """A results.json written the way tblextr.py writes it (labels, string fields, flows)."""
    label = ',{"args":{"name":"%s"},"ph":"M","pid":%d,"name":"process_name","sort_index":%d}'
    lines = ['{ "traceEvents":[{}', label % ("CPU HIP API", 2, 0), label % ("GPU2", 8, 1)]
    for name, begin, end, args in calls:
        lines.append(x_event(name, 2, "100", begin, end, {"args": args}))
    for pid, lane, name, begin, end in ops:
        lines.append(x_event(name, pid, lane, begin, end, {"dev-id": "2", "stream-id": lane}))
    for flow_id, spid, stid, sts, tpid, ttid, tts in flows:
        lines.append(f',{{"ts":{sts},"ph":"s","cat":"DataFlow","id":{flow_id},"pid":{spid},'
                     f'"tid":{stid},"name":"dep"}}')  # fmt: skip
        lines.append(f',{{"ts":{tts},"ph":"t","cat":"DataFlow","id":{flow_id},"pid":{tpid},'
                     f'"tid":{ttid},"name":"dep"}}')  # fmt: skip
    lines.append('],\n"otherData": {\n    "CMD": "rocminfo",\n    "CMD": "rocminfo"\n  }\n}')
    return "\n".join(lines)


def x_event(name: str, pid: int, tid: str, begin: int, end: int, extra: dict[str, str]) -> str:
    args = {"BeginNs": str(begin), "EndNs": str(end), "Name": name, **extra,
            "DurationNs": str(end - begin)}  # fmt: skip
    body = ",\n    ".join(f'"{k}":{json.dumps(v)}' for k, v in args.items())
    return (f',{{"ph":"X","name":{json.dumps(name)},"pid":"{pid}","tid":"{tid}",'
            f'"ts":"{begin // 1000}","dur":"{(end - begin) // 1000}",\n  "args":{{\n    {body}\n'
            "  }\n}")  # fmt: skip


def test_dispatch_records_in_the_json_keep_their_launch_params(tmp_path: Path) -> None:
    label = ',{"args":{"name":"%s"},"ph":"M","pid":%d,"name":"process_name","sort_index":%d}'
    record = {"gpu-id": "2", "queue-id": "3", "grd": "1024", "wgr": "64", "lds": "512",
              "scr": "0", "arch_vgpr": "24", "accum_vgpr": "0", "sgpr": "16"}  # fmt: skip
    lines = ['{ "traceEvents":[{}', label % ("COPY", 1, 0), label % ("GPU2", 8, 1),
             x_event("CopyHostToDevice", 1, "0", 1_000, 5_000, {"dev-id": "2"}),
             x_event("k(int) [clone .kd]", 8, "77", 9_000, 12_000, record), "]}"]  # fmt: skip
    trace = read_trace(write(tmp_path / "results.json", "\n".join(lines)))
    gpu, lp = trace.gpu, trace.launch_params
    kernel = int(np.flatnonzero(gpu.kind == KERNEL)[0])
    assert trace.names[gpu.name[kernel]] == "k(int)" and int(gpu.stream[kernel]) == 3
    assert lp.row.tolist() == [kernel] and (int(lp.grid_x[0]), int(lp.block_x[0])) == (16, 64)
    assert "launch_params" in trace.meta.provides and "host_api" not in trace.meta.provides


def test_dispatch_records_in_the_database(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    columns = [c.strip('"') for c in HEADER.split(",")]
    with closing(sqlite3.connect(path)) as db, db:
        kinds = ["TEXT" if c in ("KernelName", "sig", "obj") else "INTEGER" for c in columns]
        spec = ", ".join(f'"{c}" {k}' for c, k in zip([*columns, "GPUBusy"], [*kinds, "REAL"],
                                                         strict=True))  # fmt: skip
        db.execute(f"CREATE TABLE KERN ({spec})")
        row = [0, '"k(int) [clone .kd]"', 2, 0, 0, 1, 1, 4096, 256, 0, 0, 8, 0, 16, 64, "0x0",
               "0x1", 90, 100, 150, 160, 50, 97.5]  # fmt: skip
        db.execute(f"INSERT INTO KERN VALUES ({', '.join('?' * len(row))})", row)
        db.execute('CREATE TABLE COPY ("BeginNs" INTEGER, "EndNs" INTEGER, "dev-id" INTEGER, '
                   '"Name" TEXT, "Index" INTEGER)')  # fmt: skip
        db.execute("INSERT INTO COPY VALUES (10, 20, 2, 'CopyHostToDevice', 5)")
    trace = read_trace(str(path))
    gpu = trace.gpu
    assert [trace.names[n] for n in gpu.name] == ["k(int)", "CopyHostToDevice"]
    assert (int(gpu.start[0]), int(gpu.dur[0])) == (100, 50)
    assert trace.launch_params.row.tolist() == [0] and int(trace.launch_params.grid_x[0]) == 16
    assert trace.counters.row.tolist() == [0] and trace.counters.value.tolist() == [97.5]
    assert {"kernels", "launch_params", "counters", "copies"} <= trace.meta.provides


def test_database_keeps_hip_and_hsa_correlations_apart(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT)')
        for table in ("HIP", "HSA"):
            db.execute(f'CREATE TABLE {table} ("BeginNs" INTEGER, "EndNs" INTEGER, "pid" INTEGER, '
                       '"tid" INTEGER, "Name" TEXT, "args" TEXT, "Index" INTEGER)')  # fmt: skip
        db.execute("INSERT INTO HIP VALUES (10, 20, 1, 1, 'hipMalloc', '', 1)")
        db.execute("INSERT INTO HSA VALUES (11, 19, 1, 1, 'hsa_queue_create', '', 1)")
        db.execute("INSERT INTO HSA VALUES (30, 30, 1, 1, 'hsa_dispatch', '', 2)")
    trace = read_trace(str(path))
    assert len(set(trace.host.correlation.tolist())) == 2  # hsa_dispatch is no call: dropped
    assert sorted(trace.host.domain.tolist()) == [RUNTIME, HSA]
    assert "kernels" not in trace.meta.provides and "host_api" in trace.meta.provides


# -- bad input ----------------------------------------------------------------------------------
def one_line_error(path: str | Path, match: str) -> str:
    with pytest.raises(ReaderError) as caught:
        read_trace(str(path))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert match in message, message
    return message


def test_fragment_json_is_a_clean_error() -> None:
    one_line_error(reference_file(f"{MI250}/results.json"), "fragment of rocprof's results.json")


def test_sysinfo_alone_is_an_error() -> None:
    one_line_error(reference_file(f"{MI250}/results.sysinfo.txt"), "only a rocminfo dump")


def test_empty_file(tmp_path: Path) -> None:
    one_line_error(write(tmp_path / "results.csv", ""), "empty")


def test_unsplittable_stats_rows(tmp_path: Path) -> None:
    header = '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
    path = write(tmp_path / "results.stats.csv", header + "k(int, 5),1,20,10,100.0\n")
    one_line_error(path, "do not add up")


def test_missing_columns_in_the_database(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('CREATE TABLE KERN ("Index" INTEGER, "KernelName" TEXT)')
        db.execute('CREATE TABLE OPS ("Name" TEXT, "Index" INTEGER)')
    one_line_error(path, "table OPS has no column BeginNs, EndNs")


def test_locked_database(tmp_path: Path) -> None:
    path = shutil.copy(reference_file(f"{KOKKOS}/results.db"), tmp_path / "results.db")
    holder = sqlite3.connect(path)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ReaderError, match="locked"):
            RocprofReader().read(str(path))
    finally:
        holder.close()


def test_garbage_after_a_rocprof_json_head(tmp_path: Path) -> None:
    good = reference_file(f"{MI300A}/results.json").read_bytes()
    path = tmp_path / "results.json"
    path.write_bytes(good[:400] + bytes(random.Random(1).randrange(256) for _ in range(2000)))
    with pytest.raises(ReaderError):
        read_trace(str(path))


# _csv.read_columns leaves its file open when the last row is cut (reported to the lead)
LEAKS_A_HANDLE = pytest.mark.filterwarnings(
    "ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)


@LEAKS_A_HANDLE
@pytest.mark.parametrize("relative", [f"{MI250}/results.csv", f"{KOKKOS}/results.json",
                                      f"{KOKKOS}/results.stats.csv"])  # fmt: skip
def test_truncated_copies_read_the_complete_part_or_fail_in_one_line(
    tmp_path: Path, relative: str
) -> None:
    data = reference_file(relative).read_bytes()
    full = read_trace(str(reference_file(relative)))
    for cut in random.Random(7).sample(range(1, len(data) - 1), 12):
        path = tmp_path / Path(relative).name
        path.write_bytes(data[:cut])
        try:
            trace = read_trace(str(path))
        except ReaderError as error:
            assert "\n" not in str(error)
            continue
        assert len(trace.gpu) <= len(full.gpu) and len(trace.totals) <= len(full.totals)
        if trace.meta.truncated:
            assert trace.meta.warnings


@LEAKS_A_HANDLE
def test_cut_kernel_trace_keeps_complete_rows_and_says_so(tmp_path: Path) -> None:
    data = reference_file(f"{MI250}/results.csv").read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 40  # in the middle of a row
    path = tmp_path / "results.csv"
    path.write_bytes(data[:cut])
    trace = read_trace(str(path))
    assert trace.meta.truncated and "cut short" in trace.meta.warnings[0]
    assert len(trace.gpu) == data[:cut].count(b"\n") - 1


@pytest.mark.parametrize("name", ["results.json", "results.csv"])
def test_cli_reports_one_error_line(tmp_path: Path, name: str) -> None:
    if name == "results.json":
        path = reference_file(f"{MI250}/results.json")
    else:
        path = Path(write(tmp_path / name, '"Index","KernelName","gpu-id","grd"\n1,2\n'))
        path.write_text(HEADER.replace('"KernelName",', "") + "\n1,2,3\n")
    done = subprocess.run([sys.executable, "-m", "gpuscope", "analyze", str(path)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
