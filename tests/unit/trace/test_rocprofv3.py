"""The rocprofv3 reader on real rocprofv3 CSVs (read in place), a JSON built from the schema, the
fake `rocprofv3`'s outputs, and damaged copies of them.

Reference files: `shared/reference/formats/rocprofv3/` (AMD's documentation samples of ROCm 6.2
and 7.0, HPCTrainingExamples README excerpts from an MI300A; see its PROVENANCE.md). The golden
numbers were written by `make_rocprofv3_golden.py`, a plain script that shares no code with
gpuscope. No real `--output-format json` file is public: the JSON tests build one in tmp_path
following rocprofiler-sdk's serialisation (`generateJSON.cpp`, `serialization/save.hpp`).
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpuscope
from gpuscope.errors import ReaderError
from gpuscope.trace.model import (
    ANNOTATION,
    API,
    DTOD,
    DTOH,
    HSA,
    HTOD,
    KERNEL,
    LIBRARY,
    MEMCPY,
    RUNTIME,
    Trace,
)
from gpuscope.trace.readers.rocprofv3 import Rocprofv3Reader
from gpuscope.trace.registry import find_sources, read_source, read_trace, read_traces, sniff
from tests.unit.trace.reference import FORMATS, GOLDEN, reference_file

ROOT = "rocprofv3"
DOCS7 = f"{ROOT}/amd-docs-rocm7-2025-08"
DOCS62 = f"{ROOT}/amd-docs-rocm6.2-2024-10"
MI300A = f"{ROOT}/hpctraining-readme-excerpts-mi300a"
GOLDENS = sorted(GOLDEN.glob("rocprofv3__*.json"))
GOLDEN_SCRIPT = GOLDEN / "make_rocprofv3_golden.py"
FAKE = Path(__file__).resolve().parents[2] / "fakes" / "bin" / "rocprofv3"
RELATIVE = 1e-3
READER = Rocprofv3Reader()


@functools.cache
def trace_of(relative: str) -> Trace:
    return read_trace(str(reference_file(relative)))


def column(trace: Trace, table: Any, name: str) -> list[Any]:
    values = getattr(table, name)
    if name == "name":
        return [trace.names[i] for i in values]
    return [int(v) for v in values]


# -- goldens ----------------------------------------------------------------------------------
@functools.cache
def golden_script() -> Any:
    spec = importlib.util.spec_from_file_location("make_rocprofv3_golden", GOLDEN_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden_cases() -> list[Any]:
    files = {json.loads(path.read_text())["source"]["file"] for path in GOLDENS}
    root = FORMATS / ROOT
    if root.is_dir():
        script = golden_script()
        found = (p for p in root.rglob("*") if p.is_file() and script.kind_of(p) is not None)
        files |= {p.relative_to(FORMATS).as_posix() for p in found}
    return [pytest.param(f, id=f.replace("/", "__")) for f in sorted(files)]


def load_golden(relative: str) -> tuple[dict[str, Any], Path]:
    source = reference_file(relative)
    committed = GOLDEN / golden_script().golden_name(relative)
    if not committed.is_file():  # a reference file newer than the goldens: compute it now
        return golden_script().golden(source, FORMATS), source
    golden: dict[str, Any] = json.loads(committed.read_text())
    assert golden["schema"] == "gpuscope.golden/1"
    data = source.read_bytes()
    content = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    digests = {hashlib.sha256(data).hexdigest(), hashlib.sha256(content).hexdigest()}
    wanted = {golden["source"]["sha256"], golden["source"]["content_sha256"]}
    assert digests & wanted, f"{source} changed: rerun make_rocprofv3_golden"
    return golden, source


def test_every_file_the_reader_claims_has_a_golden() -> None:
    root = reference_file(ROOT)
    claimed = {p for p in root.rglob("*") if p.is_file() and READER.sniff(str(p))}
    covered = {p for p in claimed if golden_script().kind_of(p) is not None}
    assert claimed == covered
    names = {golden_script().golden_name(p.relative_to(FORMATS).as_posix()) for p in claimed}
    assert names <= {p.name for p in GOLDENS}, "run make_rocprofv3_golden.py"


@pytest.mark.parametrize("relative", golden_cases())
def test_reader_matches_the_golden_numbers(relative: str) -> None:
    golden, source = load_golden(relative)
    trace = read_trace(str(source))
    gpu = trace.gpu
    kernels = gpu.kind == KERNEL
    assert int(kernels.sum()) == golden["kernels"]["count"]
    timed = bool((gpu.dur[kernels] >= 0).all())
    assert (int(gpu.dur[kernels].sum()) if timed else None) == golden["kernels"]["time_ns"]
    copies = gpu.kind == MEMCPY
    assert int(copies.sum()) == golden["memcpy"]["count"]
    assert int(gpu.dur[copies].sum()) == golden["memcpy"]["time_ns"]
    assert int((gpu.bytes[copies] < 0).sum()) == golden["memcpy"]["without_bytes"]
    assert int(gpu.bytes[copies & (gpu.bytes >= 0)].sum()) == golden["memcpy"]["bytes"]
    assert len(trace.host) == golden["host_calls"]
    assert len(trace.ops) == golden["markers"]
    if "per_name" in golden:
        assert per_name(trace) == golden["per_name"]
    if "totals" in golden:
        check_totals(trace, golden["totals"])
    if "counters" in golden:
        check_counters(trace, golden["counters"])
    if "gpus" in golden:
        devices = [{"id": d.id, "name": d.name, "arch": d.arch, "compute_units": d.compute_units}
                   for d in trace.meta.devices]  # fmt: skip
        assert devices == golden["gpus"]


def per_name(trace: Trace) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    gpu = trace.gpu
    for i in np.flatnonzero(gpu.kind == KERNEL):
        entry = out[trace.names[gpu.name[i]]]
        entry[0] += 1
        entry[1] += max(int(gpu.dur[i]), 0)
    return dict(out)


def check_totals(trace: Trace, totals: dict[str, Any]) -> None:
    t = trace.totals
    if not len(t):  # per-domain rows live in meta.extra
        rows = trace.meta.extra["domain_stats"]
        got = {name: [row["calls"], row["total_ns"]] for name, row in rows.items()}
    else:
        got = {trace.names[t.name[i]]: [int(t.count[i]), int(t.total_ns[i])] for i in range(len(t))}
    assert got == totals["per_name"]


def check_counters(trace: Trace, counters: dict[str, Any]) -> None:
    sums: dict[str, float] = defaultdict(float)
    for name, value in zip(trace.counters.name, trace.counters.value, strict=True):
        sums[trace.names[name]] += float(value)
    assert len(trace.counters) == counters["values"]
    assert sums == pytest.approx(counters["sum_by_name"])


@pytest.mark.parametrize("relative", golden_cases())
def test_analysis_matches_the_golden_busy_and_span(relative: str) -> None:
    golden, source = load_golden(relative)
    if not golden["devices"]:
        pytest.skip("no timed device work in this file")
    result = gpuscope.analyze(str(source)).to_dict()
    assert result["kernels"]["count"] == golden["kernels"]["count"]
    assert result["memcpy"]["count"] == golden["memcpy"]["count"]
    close(result["kernels"]["time_us"], golden["kernels"]["time_ns"])
    close(result["gpu_busy_us"], golden["gpu_busy_ns"])
    devices = {row["id"]: row for row in result["devices"]}
    for row in golden["devices"]:
        close(devices[row["id"]]["busy_us"], row["busy_ns"])
        close(devices[row["id"]]["span_us"], row["span_ns"])


def close(got_us: float, want_ns: int) -> None:
    want_us = want_ns / 1000
    assert abs(got_us - want_us) <= RELATIVE * max(want_us, 1e-9), (got_us, want_us)


# -- kernel traces of every header generation -------------------------------------------------
def test_rocm7_kernel_trace() -> None:
    trace = trace_of(f"{DOCS7}/kernel_trace.csv")
    meta, gpu, launch = trace.meta, trace.gpu, trace.launch_params
    assert (meta.format, meta.schema, meta.vendor, meta.clock) == (
        "rocprofv3",
        "rocm7",
        "amd",
        "boot",
    )
    assert meta.provides == {"kernels", "timestamps", "launch_params"}
    assert column(trace, gpu, "start")[:2] == [1550151853029637, 1550151853064037]
    assert column(trace, gpu, "dur")[:2] == [12800, 11200]
    assert set(column(trace, gpu, "device")) == {4}  # "Agent 4"
    assert column(trace, gpu, "stream") == [1, 1, 1, 1, 2, 2, 4, 3, 3]
    assert column(trace, gpu, "correlation") == [1, 4, 3, 2, 5, 6, 13, 12, 11]
    assert trace.names[gpu.name[1]] == "divide_kernel(float*, float const*, float const*, int, int)"
    assert column(trace, launch, "row") == list(range(9))
    assert set(column(trace, launch, "grid_x")) == {16} and set(
        column(trace, launch, "grid_y")
    ) == {1024}
    assert set(column(trace, launch, "block_x")) == {64}
    assert column(trace, launch, "registers")[:2] == [8, 12]
    assert column(trace, launch, "accum_registers")[:2] == [0, 4]
    assert set(column(trace, launch, "scalar_registers")) == {16}
    assert not meta.warnings and not meta.truncated


def test_rocm62_kernel_trace_integer_agents_and_segment_sizes() -> None:
    trace = trace_of(f"{DOCS62}/kernel_trace.csv")  # ends with a blank line
    assert trace.meta.schema == "rocm6.2" and len(trace.gpu) == 7
    assert set(column(trace, trace.gpu, "device")) == {1}
    assert column(trace, trace.gpu, "stream") == [1, 2, 1, 3, 4, 2, 1]  # no Stream_Id: queue
    launch = trace.launch_params
    assert set(column(trace, launch, "shared_mem")) == {0}
    assert set(column(trace, launch, "registers")) == {-1}  # not in this generation
    assert int(trace.gpu.dur[0]) == 8819330200116308 - 8819330200067564


def test_rocm61_kernel_trace_without_dispatch_ids() -> None:
    trace = trace_of(f"{MI300A}/omp_kernel_trace.first9rows.csv")
    assert trace.meta.schema == "rocm6.1" and len(trace.gpu) == 9
    launch = trace.launch_params
    assert column(trace, launch, "grid_x")[:3] == [912, 912, 16]  # 233472 / 256, 4096 / 256
    assert column(trace, launch, "shared_mem")[:2] == [4360, 0]  # Group_Segment_Size
    assert set(column(trace, trace.gpu, "device")) == {4}


def test_rocpd_convert_csv_reads_with_the_right_launch_params() -> None:
    """ROCm 7.1.1 `rocpd convert`: leading Guid, `Lds_Block_Size`, `Vgpr_Count`, ..."""
    trace = trace_of(f"{MI300A}/rocpd_convert_out_kernel_trace.first9rows.csv")
    launch = trace.launch_params
    assert trace.meta.schema == "rocpd-convert" and len(trace.gpu) == 9
    assert column(trace, launch, "shared_mem")[:3] == [8456, 0, 0]
    assert column(trace, launch, "registers")[:3] == [16, 32, 20]
    assert column(trace, launch, "accum_registers")[:3] == [0, 0, 4]
    assert column(trace, launch, "scalar_registers")[:3] == [32, 32, 64]
    assert column(trace, launch, "grid_x")[:3] == [912, 912, 128]  # 4096 / 32
    assert column(trace, launch, "block_x")[:3] == [256, 256, 32]
    assert set(column(trace, trace.gpu, "stream")) == {0}
    assert column(trace, trace.gpu, "dur")[0] == 1678314003082277 - 1678314002982197


def test_truncated_kernel_names() -> None:
    trace = trace_of(f"{DOCS7}/kernel_trace_truncated.csv")
    assert set(column(trace, trace.gpu, "name")) == {
        "addition_kernel", "divide_kernel", "multiply_kernel", "subtract_kernel"}  # fmt: skip


# -- counters ---------------------------------------------------------------------------------
def test_rocm62_counters_without_timestamps_build_untimed_kernel_rows() -> None:
    trace = trace_of(f"{DOCS62}/counter_collection.csv")
    assert trace.meta.provides == {"counters", "launch_params"}
    assert trace.meta.clock == ""
    assert len(trace.gpu) == 7 and set(column(trace, trace.gpu, "start")) == {-1}
    assert column(trace, trace.counters, "row") == list(range(7))
    assert set(trace.counters.value.tolist()) == {16384.0}
    assert set(column(trace, trace.launch_params, "grid_x")) == {16384}  # 1048576 / 64


def test_rocm7_counters_with_timestamps_are_timed_kernels() -> None:
    trace = trace_of(f"{DOCS7}/counter_collection.csv")
    assert {"kernels", "timestamps", "counters", "launch_params"} == trace.meta.provides
    assert column(trace, trace.gpu, "start")[0] == 3200098838431081
    assert column(trace, trace.gpu, "dur")[0] == 3200098838483232 - 3200098838431081
    assert column(trace, trace.launch_params, "registers") == [8, 8, 8, 12]


def test_docs62_kernel_trace_and_counters_agree_where_they_overlap() -> None:
    """Same dispatch ids in both files of the ROCm 6.2 docs: names, grid and work-group agree."""
    kernels = rows(f"{DOCS62}/kernel_trace.csv")
    counters = {r["Dispatch_Id"]: r for r in rows(f"{DOCS62}/counter_collection.csv")}
    assert set(counters) == {r["Dispatch_Id"] for r in kernels}
    for row in kernels:
        other = counters[row["Dispatch_Id"]]
        assert row["Kernel_Name"] == other["Kernel_Name"]
        grid = int(row["Grid_Size_X"]) * int(row["Grid_Size_Y"]) * int(row["Grid_Size_Z"])
        assert grid == int(other["Grid_Size"])
        assert int(row["Workgroup_Size_X"]) == int(other["Workgroup_Size"])
    run = read_source(docs_source(DOCS62, ""))
    joined = run.counters.row[run.counters.row >= 0]
    assert sorted(joined.tolist()) == list(range(7))  # each traced dispatch got its counter
    for row in joined:  # joined by dispatch id *and* name
        assert run.names[run.gpu.name[row]] in {r["Kernel_Name"] for r in kernels}


def test_docs7_counters_agree_with_the_kernel_trace_on_shared_dispatches() -> None:
    kernels = {r["Dispatch_Id"]: r for r in rows(f"{DOCS7}/kernel_trace.csv")}
    for other in rows(f"{DOCS7}/counter_collection.csv"):
        row = kernels[other["Dispatch_Id"]]
        for name in ("Kernel_Name", "VGPR_Count", "SGPR_Count", "LDS_Block_Size", "Scratch_Size"):
            assert row[name] == other[name], name
        assert int(row["Workgroup_Size_X"]) == int(other["Workgroup_Size"])
    # the timestamps differ: AMD pasted the two files from different runs


def rows(relative: str) -> list[dict[str, str]]:
    with reference_file(relative).open(newline="") as handle:
        return [r for r in csv.DictReader(handle) if any(r.values())]


def docs_source(folder: str, key_suffix: str) -> Any:
    sources = find_sources(str(reference_file(folder)))
    keys = {s.key: s for s in sources}
    wanted = str(reference_file(folder)) + os.sep + key_suffix
    assert wanted in keys, sorted(keys)
    return keys[wanted]


# -- API, markers, copies, agents, stats -----------------------------------------------------
@pytest.mark.parametrize(("name", "count", "domain"), [
    ("hip_runtime_trace.csv", 8, RUNTIME), ("hip_compile_trace.csv", 5, RUNTIME),
    ("hsa_core_api_trace.csv", 32, HSA), ("rccl_trace.csv", 21, LIBRARY),
    ("rocdecode_api_trace.csv", 6, LIBRARY), ("rocjpeg_api_trace.csv", 4, LIBRARY),
    ("rocpd-to-csv.csv", 13, RUNTIME)])  # fmt: skip
def test_api_traces(name: str, count: int, domain: int) -> None:
    trace = trace_of(f"{DOCS7}/{name}")
    assert len(trace.host) == count and set(trace.host.domain.tolist()) == {domain}
    assert trace.meta.provides == {"host_api"}  # no device work: nothing to link


def test_hip_trace_times_and_correlations() -> None:
    trace = trace_of(f"{DOCS7}/hip_trace.csv")
    host = trace.host
    assert column(trace, host, "correlation") == list(range(1, 18))
    assert trace.names[host.name[5]] == "hipGetDeviceCount"
    assert int(host.start[5]) == 1055015440617618
    assert int(host.dur[5]) == 1055015539800733 - 1055015440617618
    assert set(column(trace, host, "tid")) == {15}


def test_marker_ranges_and_marks_without_trailing_newline() -> None:
    trace = trace_of(f"{DOCS62}/marker_api_trace.csv")  # no newline after the last row
    ops = trace.ops
    assert not trace.meta.truncated and trace.meta.provides == {"markers"}
    assert set(ops.kind.tolist()) == {ANNOTATION} and len(ops) == 5
    assert column(trace, ops, "name")[-1] == "hipLaunchKernel range"
    assert column(trace, ops, "dur")[:2] == [0, 0]  # roctxMark: Start == End
    assert column(trace, ops, "dur")[-1] == 1520113901495882 - 1520113899682208


def test_marker_messages_with_commas() -> None:
    trace = trace_of(f"{DOCS7}/python_bindings.csv")
    assert column(trace, trace.ops, "name")[0] == "MatrixTranspose: rows=4, cols=5"


@pytest.mark.parametrize(("folder", "device"), [(DOCS7, 4), (DOCS62, 1)])
def test_memory_copies_run_on_the_gpu_side(folder: str, device: int) -> None:
    trace = trace_of(f"{folder}/memory_copy_trace.csv")
    gpu = trace.gpu
    assert set(gpu.kind.tolist()) == {MEMCPY} and set(gpu.device.tolist()) == {device}
    assert set(gpu.copy.tolist()) == {HTOD, DTOH}
    assert set(gpu.bytes.tolist()) == {-1}  # the CSV has no sizes
    assert trace.meta.provides == {"copies", "timestamps"}


def test_agent_info_devices() -> None:
    trace = trace_of(f"{MI300A}/omp_agent_info.csv")
    devices = trace.meta.devices
    assert [d.id for d in devices] == [4, 5, 6, 7]
    assert {(d.name, d.arch, d.compute_units) for d in devices} == {
        ("AMD Instinct MI300A", "gfx942", 228)
    }
    assert devices[0].properties["gpu_id"] == 53730
    assert trace.meta.provides == {"devices"}


def test_stats_kinds_and_exact_totals() -> None:
    kernels = trace_of(f"{MI300A}/hip_jacobi_kernel_stats.csv")
    t = kernels.totals
    assert set(t.kind.tolist()) == {KERNEL} and len(t) == 7
    assert (int(t.count[0]), int(t.total_ns[0]), int(t.min_ns[0]), int(t.max_ns[0])) == (
        1000, 545275480, 526082, 709763)  # fmt: skip
    assert kernels.meta.provides == {"totals"} and kernels.meta.clock == ""
    api = trace_of(f"{DOCS7}/hip_api_stats.csv")  # no trailing newline
    assert set(api.totals.kind.tolist()) == {API} and len(api.totals) == 17
    domain = trace_of(f"{DOCS7}/hip_domain_stats.csv")  # no trailing newline
    assert domain.meta.extra["domain_stats"] == {
        "HIP_API": {"calls": 13, "total_ns": 458514859, "min_ns": 2300, "max_ns": 352276613}
    }
    assert not domain.meta.truncated and domain.meta.provides == frozenset()


def test_kernel_stats_and_trace_of_the_omp_example_are_different_runs() -> None:
    """Checked before asserting anything more: the README's stats and trace excerpt name the same
    kernels, but some traced durations fall outside the stats' [min, max]: two runs."""
    trace = read_source(docs_source(MI300A, "omp"))
    stats = {trace.names[i] for i in trace.totals.name}
    kernels = set(column(trace, trace.gpu, "name"))
    assert stats == kernels
    assert int(trace.gpu.dur.max()) > int(trace.totals.max_ns.max())
    assert [d.id for d in trace.meta.devices] == [4, 5, 6, 7]
    assert trace.meta.provides == {"kernels", "timestamps", "launch_params", "devices", "totals"}


def test_docs_stats_and_traces_are_different_runs() -> None:
    """Checked before comparing: AMD's stats samples do not describe its trace samples."""
    stats = trace_of(f"{DOCS7}/hip_api_stats.csv")
    calls = {
        stats.names[n]: int(t)
        for n, t in zip(stats.totals.name, stats.totals.total_ns, strict=True)
    }
    hip = trace_of(f"{DOCS7}/hip_trace.csv")
    traced = {hip.names[n]: int(d) for n, d in zip(hip.host.name, hip.host.dur, strict=True)}
    assert calls["hipGetDeviceCount"] == 32505687 != traced["hipGetDeviceCount"] == 99183115
    domain = trace_of(f"{DOCS7}/hip_domain_stats.csv").meta.extra["domain_stats"]["HIP_API"]
    converted = trace_of(f"{DOCS7}/rocpd-to-csv.csv")
    assert domain["calls"] == len(converted.host) == 13  # same count, different run:
    assert domain["total_ns"] == 458514859 != int(converted.host.dur.sum()) == 173915064


def test_not_claimed() -> None:
    for name in ("memory_allocation_trace.csv", "scratch_memory_trace.csv",
                 "pc_sampling_host_trap.csv", "summary.txt", "list-avail.txt"):  # fmt: skip
        assert not READER.sniff(str(reference_file(f"{DOCS7}/{name}")))
    assert not READER.sniff(str(reference_file(f"{ROOT}/schema/rocprofv3-schema.json")))
    assert not READER.sniff(str(reference_file(f"{ROOT}/rocpd-db-gfx942/15_results.db")))


def test_registry_routes_every_claimed_file_here() -> None:
    for path in reference_file(ROOT).rglob("*.csv"):
        if READER.sniff(str(path)):
            found = sniff(str(path))
            assert found is not None and found.name == "rocprofv3", path


# -- grouping ---------------------------------------------------------------------------------
def test_group_keys() -> None:
    key = READER.group_key
    assert key("out/host/123_kernel_trace.csv") == str(Path("out/host/123"))
    assert key("out/host/123_results.json.gz") == str(Path("out/host/123"))
    assert key("test_run/mem_cu_agent_info.csv") == str(Path("test_run/mem_cu"))
    assert key("run.v2_hip_api_trace.csv") == "run.v2"
    assert key("docs/kernel_trace.csv") == "docs" + os.sep
    assert key("docs/hip_trace.csv") == "docs" + os.sep  # no known kind: the directory
    assert key("x/omp_kernel_trace.first9rows.csv") == str(Path("x/omp"))
    assert key("p/pmc_1/7_counter_collection.csv") == str(Path("p/pmc_1/7"))


def test_docs_directory_merges_into_one_trace_per_prefix() -> None:
    sources = find_sources(str(reference_file(DOCS7)))
    assert [Path(s.key).name for s in sources] == ["amd-docs-rocm7-2025-08", "hip"]
    trace = read_source(sources[0])
    counts = trace.meta.event_counts
    assert counts["kernel_dispatch"] == 13 and counts["memory_copy"] == 4
    assert counts["rccl_api"] == 21 and counts["marker_api"] == 11
    assert {"kernels", "copies", "host_api", "links", "markers", "counters", "totals"} <= (
        trace.meta.provides)  # fmt: skip
    assert trace.meta.schema == "rocm7+rocm6.2+rocpd-convert"  # AMD's docs mix generations
    assert any("not in the kernel trace" in w for w in trace.meta.warnings)


def test_type_relative_agent_ids_map_to_logical_node_ids(tmp_path: Path) -> None:
    """`--agent-index type-relative` writes "GPU 1" / "CPU 0": the agents say which node."""
    shutil.copy(reference_file(f"{MI300A}/omp_agent_info.csv"), tmp_path / "9_agent_info.csv")
    kernels = reference_file(f"{DOCS7}/kernel_trace.csv").read_text()
    (tmp_path / "9_kernel_trace.csv").write_text(kernels.replace('"Agent 4"', '"GPU 1"'))
    copies = reference_file(f"{DOCS7}/memory_copy_trace.csv").read_text()
    copies = copies.replace('"Agent 0"', '"CPU 0"').replace('"Agent 4"', '"GPU 1"')
    (tmp_path / "9_memory_copy_trace.csv").write_text(copies)
    [trace] = read_traces(str(tmp_path))
    assert set(trace.gpu.device.tolist()) == {5}  # the second GPU agent: logical node 5
    assert 5 in {d.id for d in trace.meta.devices}
    assert len(trace.meta.files) == 3 and trace.meta.path == str(tmp_path / "9")


def test_stats_without_totals_and_renamed_stats(tmp_path: Path) -> None:
    stats = reference_file(f"{DOCS7}/hip_api_stats.csv").read_bytes()
    (tmp_path / "3_marker_api_stats.csv").write_bytes(stats)
    (tmp_path / "3_kernel_stats.csv").write_bytes(
        reference_file(f"{MI300A}/omp_kernel_stats.csv").read_bytes()
    )
    [trace] = read_traces(str(tmp_path))
    assert trace.meta.extra["not_read"] == ["3_marker_api_stats.csv"]
    assert set(trace.totals.kind.tolist()) == {KERNEL} and len(trace.totals) == 4
    with pytest.raises(ReaderError, match="does not read"):
        read_trace(str(tmp_path / "3_marker_api_stats.csv"))
    renamed = tmp_path / "api.csv"  # no rocprofv3 name: the row names tell
    renamed.write_bytes(stats)
    assert set(read_trace(str(renamed)).totals.kind.tolist()) == {API}


MI350X = f"{ROOT}/json-mi350x-tracelens/908_results.json.gz"


def test_mi350x_json_of_a_training_run() -> None:
    """The real `--output-format json` file (TraceLens' test input): 43,915 dispatches."""
    trace = trace_of(MI350X)
    meta, gpu, launch = trace.meta, trace.gpu, trace.launch_params
    assert (meta.schema, meta.clock, meta.extra["pids"]) == ("json", "boot", [908])
    assert meta.provides == {"kernels", "timestamps", "launch_params", "devices"}
    assert meta.profiler_span == (63855948165371, 63875155697841)
    assert [(d.id, d.name, d.arch, d.compute_units) for d in meta.devices] == [
        (n, "AMD Instinct MI350X", "gfx950", 256) for n in range(2, 10)
    ]
    assert len(gpu) == 43915 and set(gpu.device.tolist()) == {2}
    assert (int(gpu.start[0]), int(gpu.dur[0]), int(gpu.correlation[0])) == (
        63857982592000,
        2840,
        1,
    )
    assert trace.names[gpu.name[0]] == "__amd_rocclr_copyBuffer"
    assert not any(name.endswith(".kd") for name in trace.names)
    nccl = trace.names.index("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)")
    rows = np.flatnonzero(gpu.name == nccl)
    assert len(rows) == 1310 and int(gpu.dur[rows].sum()) == 4158756678
    first = int(rows[0])  # grid 26624 work-items / 256; LDS, scratch, registers of its symbol
    keys = ("grid_x", "block_x", "shared_mem", "scratch", "registers", "scalar_registers")
    assert [int(getattr(launch, k)[first]) for k in keys] == [104, 256, 37664, 520, 92, 112]


# -- JSON -------------------------------------------------------------------------------------
KIND_NAMES = [
    "NONE",
    "HSA_CORE_API",
    "HSA_AMD_EXT_API",
    "HSA_IMAGE_EXT_API",
    "HSA_FINALIZE_EXT_API",
    "HIP_RUNTIME_API",
    "HIP_COMPILER_API",
    "MARKER_CORE_API",
    "MARKER_CONTROL_API",
    "MARKER_NAME_API",
    "MEMORY_COPY",
    "KERNEL_DISPATCH",
    "SCRATCH_MEMORY",
    "CORRELATION_ID_RETIREMENT",
    "RCCL_API",
    "OMPT",
    "MEMORY_ALLOCATION",
    "RUNTIME_INITIALIZATION",
    "ROCDECODE_API",
    "ROCJPEG_API",
    "HIP_STREAM",
    "HIP_RUNTIME_API_EXT",
    "HIP_COMPILER_API_EXT",
]
K = {name: i for i, name in enumerate(KIND_NAMES)}
OPERATIONS = {
    "HSA_CORE_API": ["hsa_init", "hsa_queue_create", "hsa_signal_wait_scacquire"],
    "MARKER_CORE_API": ["roctxMarkA", "roctxRangePushA", "roctxRangePop", "roctxRangeStartA"],
    "MARKER_NAME_API": ["roctxNameOsThread"],
    "MEMORY_COPY": [
        "MEMORY_COPY_NONE",
        "MEMORY_COPY_HOST_TO_HOST",
        "MEMORY_COPY_HOST_TO_DEVICE",
        "MEMORY_COPY_DEVICE_TO_HOST",
        "MEMORY_COPY_DEVICE_TO_DEVICE",
    ],
    "KERNEL_DISPATCH": [
        "KERNEL_DISPATCH_NONE",
        "KERNEL_DISPATCH_ENQUEUE",
        "KERNEL_DISPATCH_COMPLETE",
    ],
    "RCCL_API": ["ncclGetVersion", "ncclAllReduce"],
    "ROCDECODE_API": ["rocDecCreateDecoder"],
    "ROCJPEG_API": ["rocJpegCreate"],
    "HIP_RUNTIME_API_EXT": ["hipApiName", "hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"],
}
CPU, GPU0, GPU1 = 91111, 37946, 38001  # opaque agent handles
T0 = 5_000_000_000_000


def corr(internal: int, external: int = 0) -> dict[str, int]:
    return {"internal": internal, "external": external, "ancestor": 0}


def dims(x: int, y: int = 1, z: int = 1) -> dict[str, int]:
    return {"x": x, "y": y, "z": z}


def agent(
    handle: int, kind: int, node: int, type_index: int, name: str, product: str
) -> dict[str, Any]:
    return {
        "size": 768,
        "id": {"handle": handle},
        "type": kind,
        "cpu_cores_count": 0 if kind == 2 else 64,
        "simd_count": 1024 if kind == 2 else 0,
        "wave_front_size": 64,
        "num_xcc": 8,
        "cu_count": 256 if kind == 2 else 64,
        "fw_version": {"uCode": 1, "Major": 2, "Minor": 0, "Stepping": 0},
        "name": name,
        "vendor_name": "AMD",
        "product_name": product,
        "model_name": "",
        "node_id": node,
        "logical_node_id": node,
        "logical_node_type_id": type_index,
        "runtime_visibility": {"hsa": 1, "hip": 1, "rccl": 1, "rocdecode": 1},
        "uuid": {"bytes": 0},
        "mem_banks": [],
        "caches": [],
        "io_links": [],
    }


def symbol(
    kernel_id: int, raw: str, formatted: str, vgpr: int, accum: int, sgpr: int
) -> dict[str, Any]:
    return {
        "size": 120,
        "kernel_id": kernel_id,
        "code_object_id": 1,
        "kernel_name": raw,
        "kernel_object": 140000 + kernel_id,
        "kernarg_segment_size": 24,
        "kernarg_segment_alignment": 8,
        "group_segment_size": 0,
        "private_segment_size": 0,
        "sgpr_count": sgpr,
        "arch_vgpr_count": vgpr,
        "accum_vgpr_count": accum,
        "kernel_code_entry_byte_offset": 256,
        "kernel_address": {"handle": 0},
        "formatted_kernel_name": formatted,
        "demangled_kernel_name": formatted,
        "truncated_kernel_name": formatted.split("(")[0],
    }


def dispatch(
    n: int, kernel_id: int, agent_handle: int, start: int, dur: int, stream: int, external: int = 0
) -> dict[str, Any]:
    return {
        "size": 96,
        "kind": K["KERNEL_DISPATCH"],
        "operation": 2,
        "thread_id": 4242,
        "correlation_id": corr(100 + n, external),
        "start_timestamp": start,
        "end_timestamp": start + dur,
        "dispatch_info": {
            "size": 64,
            "agent_id": {"handle": agent_handle},
            "queue_id": {"handle": 7000 + stream},
            "kernel_id": kernel_id,
            "dispatch_id": n,
            "private_segment_size": 16,
            "group_segment_size": 4096,
            "workgroup_size": dims(256),
            "grid_size": dims(1000, 2),
        },
        "stream_id": {"handle": stream},
    }


def api(kind: str, operation: str, internal: int, start: int, dur: int) -> dict[str, Any]:
    record = {
        "size": 56,
        "kind": K[kind],
        "operation": OPERATIONS[kind].index(operation),
        "correlation_id": corr(internal),
        "start_timestamp": start,
        "end_timestamp": start + dur,
        "thread_id": 4242,
    }
    if kind.startswith("HIP"):
        record["args"] = [{"type": "void**", "name": "ptr", "value": "0x7f00"}]
        record["retval"] = {"hipError_t_retval": 0}
        record["stream_id"] = {"handle": 0}
    return record


def copy(
    n: int, operation: str, src: int, dst: int, start: int, dur: int, size: int
) -> dict[str, Any]:
    return {
        "size": 80,
        "kind": K["MEMORY_COPY"],
        "operation": OPERATIONS["MEMORY_COPY"].index(operation),
        "thread_id": 4242,
        "correlation_id": corr(200 + n),
        "start_timestamp": start,
        "end_timestamp": start + dur,
        "dst_agent_id": {"handle": dst},
        "src_agent_id": {"handle": src},
        "bytes": size,
        "stream_id": {"handle": 1},
    }


def counter_record(kernel: dict[str, Any], values: list[tuple[int, float]]) -> dict[str, Any]:
    return {
        "thread_id": 4242,
        "dispatch_data": {
            "size": 96,
            "correlation_id": kernel["correlation_id"],
            "start_timestamp": kernel["start_timestamp"],
            "end_timestamp": kernel["end_timestamp"],
            "dispatch_info": kernel["dispatch_info"],
        },
        "records": [{"counter_id": {"handle": h}, "value": v} for h, v in values],
        "stream_id": kernel["stream_id"],
    }


def json_document(pid: int = 908) -> dict[str, Any]:
    """A rocprofv3 `--output-format json` document with every table gpuscope reads."""
    kernels = [
        dispatch(1, 1, GPU0, T0 + 1_000, 5_000, 1),
        dispatch(2, 2, GPU0, T0 + 7_000, 20_000, 1),
        dispatch(3, 1, GPU1, T0 + 8_000, 4_000, 2, external=77),
        dispatch(4, 3, GPU0, T0 + 30_000, 1_000, 1),
    ]
    names = [{"kind": k, "operations": OPERATIONS.get(k, [])} for k in KIND_NAMES]
    return {
        "rocprofiler-sdk-tool": [
            {
                "metadata": {
                    "node": {"hostname": "mi350x-node", "machine_id": "abc"},
                    "pid": pid,
                    "init_time": T0,
                    "fini_time": T0 + 100_000,
                    "command": ["python3", "train.py"],
                    "config": {"csv_output": False, "json_output": True},
                },
                "agents": [
                    agent(CPU, 1, 0, 0, "AMD EPYC 9575F", "AMD EPYC 9575F"),
                    agent(GPU0, 2, 2, 0, "gfx950", "AMD Instinct MI350X"),
                    agent(GPU1, 2, 3, 1, "gfx950", "AMD Instinct MI350X"),
                ],
                "counters": [
                    {
                        "agent_id": {"handle": GPU0},
                        "id": {"handle": 11},
                        "is_constant": 0,
                        "is_derived": 0,
                        "name": "SQ_WAVES",
                        "description": "",
                        "block": "SQ",
                        "expression": "",
                        "dimensions": [],
                        "instances": [],
                    },
                    {
                        "agent_id": {"handle": GPU0},
                        "id": {"handle": 12},
                        "is_constant": 0,
                        "is_derived": 1,
                        "name": "GRBM_GUI_ACTIVE",
                        "description": "",
                        "block": "GRBM",
                        "expression": "",
                        "dimensions": [],
                        "instances": [],
                    },
                ],
                "strings": {
                    "callback_records": [],
                    "buffer_records": names,
                    "marker_api": [
                        {"key": 301, "value": "step 1"},
                        {"key": 300, "value": "before launch"},
                    ],
                    "correlation_id": {"external": [{"key": 77, "value": "renamed_region"}]},
                    "counters": {"dimension_ids": []},
                    "pc_sample_instructions": [],
                    "pc_sample_comments": [],
                    "att_filenames": [],
                    "code_object_snapshot_filenames": [],
                },
                "code_objects": [
                    {
                        "size": 80,
                        "code_object_id": 1,
                        "rocp_agent": {"handle": GPU0},
                        "uri": "file:///app.so#offset=0",
                        "load_base": 0,
                        "load_size": 0,
                        "load_delta": 0,
                        "storage_type": 1,
                        "memory_base": 0,
                        "memory_size": 0,
                    }
                ],
                "kernel_symbols": [
                    symbol(0, "", "", 0, 0, 0),
                    symbol(
                        1,
                        "_Z10vector_addPfPKfS1_i.kd",
                        "vector_add(float*, float const*, float const*, int)",
                        8,
                        0,
                        16,
                    ),
                    symbol(
                        2,
                        "Cijk_Alik_Bljk_HHS_BH_MT128x128x64.kd",
                        "Cijk_Alik_Bljk_HHS_BH_MT128x128x64",
                        128,
                        128,
                        96,
                    ),
                    symbol(
                        3,
                        "__amd_rocclr_fillBufferAligned.kd",
                        "__amd_rocclr_fillBufferAligned.kd",
                        6,
                        0,
                        20,
                    ),
                ],
                "host_functions": [],
                "summary": [{"domain": "KERNEL_DISPATCH", "stats": {"count": 4}}],
                "callback_records": {
                    "counter_collection": [
                        counter_record(kernels[0], [(11, 10.0), (11, 6.0), (12, 900.0)]),
                        counter_record(kernels[1], [(11, 64.0), (12, 5000.0)]),
                    ],
                    "spm_counter_collection": [],
                },
                "buffer_records": {
                    "kernel_dispatch": kernels,
                    "hip_api": [
                        api("HIP_RUNTIME_API_EXT", "hipMalloc", 99, T0 + 100, 300),
                        api("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 101, T0 + 500, 200),
                        api("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 102, T0 + 800, 200),
                        api("HIP_RUNTIME_API_EXT", "hipMemcpyAsync", 201, T0 + 900, 100),
                    ],
                    "hsa_api": [api("HSA_CORE_API", "hsa_queue_create", 50, T0, 50)],
                    "marker_api": [
                        api("MARKER_CORE_API", "roctxMarkA", 300, T0 + 400, 0),
                        api("MARKER_CORE_API", "roctxRangePushA", 301, T0 + 450, 40_000),
                        api("MARKER_NAME_API", "roctxNameOsThread", 302, T0 + 460, 10),
                    ],
                    "rccl_api": [api("RCCL_API", "ncclAllReduce", 400, T0 + 50_000, 9_000)],
                    "memory_copy": [
                        copy(
                            1, "MEMORY_COPY_HOST_TO_DEVICE", CPU, GPU0, T0 + 40_000, 2_000, 1 << 20
                        ),
                        copy(2, "MEMORY_COPY_DEVICE_TO_HOST", GPU1, CPU, T0 + 43_000, 1_000, 4096),
                        copy(3, "MEMORY_COPY_DEVICE_TO_DEVICE", GPU0, GPU1, T0 + 45_000, 500, 256),
                    ],
                    "memory_allocation": [
                        {
                            "size": 72,
                            "kind": K["MEMORY_ALLOCATION"],
                            "operation": 1,
                            "thread_id": 4242,
                            "correlation_id": corr(99),
                            "start_timestamp": T0 + 100,
                            "end_timestamp": T0 + 400,
                            "agent_id": {"handle": GPU0},
                            "address": "0x00007f0000000000",
                            "allocation_size": 1 << 20,
                            "stream_id": {"handle": 0},
                        }
                    ],
                    "scratch_memory": [],
                    "kfd": [],
                    "rocdecode_api": [
                        api("ROCDECODE_API", "rocDecCreateDecoder", 500, T0 + 60_000, 100)
                    ],
                    "rocjpeg_api": [api("ROCJPEG_API", "rocJpegCreate", 600, T0 + 61_000, 100)],
                    "hipfile_api": [],
                    "pc_sample_host_trap": [],
                    "pc_sample_stochastic": [],
                    "hip_graph": [],
                    "rocshmem_api": [],
                },
            }
        ]
    }


def write_json(path: Path, document: dict[str, Any], compress: bool = False) -> Path:
    # cereal writes the tool key first, indented by four spaces
    text = json.dumps(document, indent=4)
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    return path


def test_json_every_table(tmp_path: Path) -> None:
    trace = read_trace(str(write_json(tmp_path / "908_results.json", json_document())))
    meta, gpu, names = trace.meta, trace.gpu, trace.names
    assert (meta.format, meta.schema, meta.clock, meta.vendor) == (
        "rocprofv3",
        "json",
        "boot",
        "amd",
    )
    assert meta.provides == {"kernels", "timestamps", "launch_params", "copies", "copy_bytes",
                             "host_api", "links", "markers", "devices", "counters"}  # fmt: skip
    assert meta.profiler_span == (T0, T0 + 100_000)
    assert meta.extra["pids"] == [908] and meta.extra["command"] == "python3 train.py"
    assert [(d.id, d.name, d.arch, d.compute_units) for d in meta.devices] == [
        (2, "AMD Instinct MI350X", "gfx950", 256),
        (3, "AMD Instinct MI350X", "gfx950", 256),
    ]
    kernels = np.flatnonzero(gpu.kind == KERNEL)
    assert [names[gpu.name[i]] for i in kernels] == [
        "vector_add(float*, float const*, float const*, int)",
        "Cijk_Alik_Bljk_HHS_BH_MT128x128x64",
        "renamed_region",  # --kernel-rename
        "__amd_rocclr_fillBufferAligned",
    ]  # the .kd suffix is dropped
    assert gpu.device[kernels].tolist() == [2, 2, 3, 2]  # handles -> logical node ids
    assert gpu.stream[kernels].tolist() == [1, 1, 2, 1]
    assert gpu.start[kernels].tolist()[:2] == [T0 + 1_000, T0 + 7_000]
    assert gpu.dur[kernels].tolist() == [5_000, 20_000, 4_000, 1_000]
    assert gpu.correlation[kernels].tolist() == [101, 102, 103, 104]
    assert gpu.external_id[kernels].tolist() == [-1, -1, 77, -1]
    launch = trace.launch_params
    assert launch.grid_x.tolist() == [4] * 4 and launch.grid_y.tolist() == [2] * 4
    assert launch.block_x.tolist() == [256] * 4
    assert launch.shared_mem.tolist() == [4096] * 4 and launch.scratch.tolist() == [16] * 4
    assert launch.registers.tolist() == [8, 128, 8, 6]
    assert launch.accum_registers.tolist() == [0, 128, 0, 0]
    assert launch.scalar_registers.tolist() == [16, 96, 16, 20]
    copies = np.flatnonzero(gpu.kind == MEMCPY)
    assert gpu.copy[copies].tolist() == [HTOD, DTOH, DTOD]
    assert gpu.device[copies].tolist() == [2, 3, 3]
    assert gpu.bytes[copies].tolist() == [1 << 20, 4096, 256]
    host = trace.host
    assert [names[i] for i in host.name] == ["hipMalloc", "hipLaunchKernel", "hipLaunchKernel",
                                             "hipMemcpyAsync", "hsa_queue_create",
                                             "ncclAllReduce", "rocDecCreateDecoder",
                                             "rocJpegCreate"]  # fmt: skip
    assert host.domain.tolist() == [RUNTIME] * 4 + [HSA] + [LIBRARY] * 3
    assert host.correlation.tolist()[1:3] == [101, 102]  # hipLaunchKernel -> kernel rows 0, 1
    ops = trace.ops
    assert [names[i] for i in ops.name] == [
        "before launch",
        "step 1",
    ]  # roctxNameOsThread: no range
    assert ops.dur.tolist() == [0, 40_000]
    table = trace.counters
    counters = {
        (int(r), names[n]): v for r, n, v in zip(table.row, table.name, table.value, strict=True)
    }
    assert counters == {(0, "SQ_WAVES"): 16.0, (0, "GRBM_GUI_ACTIVE"): 900.0,
                        (1, "SQ_WAVES"): 64.0, (1, "GRBM_GUI_ACTIVE"): 5000.0}  # fmt: skip
    assert meta.event_counts["kernel_dispatch"] == 4 and meta.event_counts["memory_copy"] == 3
    assert not meta.warnings


def test_json_gzipped_reads_the_same(tmp_path: Path) -> None:
    plain = read_trace(str(write_json(tmp_path / "1_results.json", json_document())))
    packed = read_trace(str(write_json(tmp_path / "2_results.json.gz", json_document(), True)))
    assert plain.names == packed.names
    assert plain.gpu.start.tolist() == packed.gpu.start.tolist()
    assert sniff(str(tmp_path / "2_results.json.gz")) is not None


def test_json_counters_alone_build_kernel_rows(tmp_path: Path) -> None:
    document = json_document()
    document["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"] = []
    trace = read_trace(str(write_json(tmp_path / "5_results.json", document)))
    assert int((trace.gpu.kind == KERNEL).sum()) == 2  # the two dispatches with counters
    assert trace.counters.row.tolist() == [0, 0, 1, 1]
    assert {"kernels", "timestamps", "counters"} <= trace.meta.provides


def test_json_wins_over_the_csv_of_the_same_process(tmp_path: Path) -> None:
    write_json(tmp_path / "908_results.json", json_document())
    shutil.copy(reference_file(f"{DOCS7}/kernel_trace.csv"), tmp_path / "908_kernel_trace.csv")
    [trace] = read_traces(str(tmp_path))
    assert trace.meta.files == (str(tmp_path / "908_results.json"),)
    assert trace.meta.extra["not_read"] == ["908_kernel_trace.csv"]
    assert "copy_bytes" in trace.meta.provides


def test_an_unreadable_json_falls_back_to_the_csv_of_the_process(tmp_path: Path) -> None:
    (tmp_path / "908_results.json").write_text('{"rocprofiler-sdk-tool": [{"agents": [')
    shutil.copy(reference_file(f"{DOCS7}/kernel_trace.csv"), tmp_path / "908_kernel_trace.csv")
    [trace] = read_traces(str(tmp_path))
    assert len(trace.gpu) == 9 and trace.meta.extra["not_read"] == ["908_results.json"]
    assert "908_results.json: not valid JSON" in trace.meta.warnings[0]


def test_json_with_two_processes_and_old_fields(tmp_path: Path) -> None:
    document = json_document()
    second = json_document(pid=909)["rocprofiler-sdk-tool"][0]
    for record in second["buffer_records"]["kernel_dispatch"]:
        del record["stream_id"]  # ROCm 6.2: no stream ids, queue handles instead
    document["rocprofiler-sdk-tool"].append(second)
    trace = read_trace(str(write_json(tmp_path / "x_results.json", document)))
    assert trace.meta.extra["pids"] == [908, 909]
    kernels = trace.gpu.kind == KERNEL
    assert trace.gpu.stream[kernels].tolist()[4:] == [7001, 7001, 7002, 7001]


def test_json_lenient_about_cereal_variants(tmp_path: Path) -> None:
    """Numbers as strings, maps as JSON objects, the command line as one string."""
    document = json_document()
    process = document["rocprofiler-sdk-tool"][0]
    kernel = process["buffer_records"]["kernel_dispatch"][0]
    kernel["start_timestamp"] = str(kernel["start_timestamp"])
    process["strings"]["marker_api"] = {"300": "before launch", "301": "step 1"}
    process["metadata"]["command"] = "python3 train.py"
    trace = read_trace(str(write_json(tmp_path / "6_results.json", document)))
    assert int(trace.gpu.start[0]) == T0 + 1_000
    assert [trace.names[i] for i in trace.ops.name] == ["before launch", "step 1"]
    assert trace.meta.extra["command"] == "python3 train.py"


def test_empty_json_is_an_empty_trace(tmp_path: Path) -> None:
    process = {"metadata": {"pid": 1, "command": []}, "buffer_records": {"kernel_dispatch": []}}
    path = write_json(tmp_path / "1_results.json", {"rocprofiler-sdk-tool": [process]})
    trace = read_trace(str(path))
    assert len(trace.gpu) == 0 and trace.meta.provides == frozenset()


# -- the fake rocprofv3 (used by `gpuscope run` tests) -----------------------------------------
def test_reads_what_the_fake_rocprofv3_writes(tmp_path: Path) -> None:
    counters = tmp_path / "input.txt"
    counters.write_text("pmc: SQ_WAVES GRBM_COUNT\n")
    out = tmp_path / "out"
    options = ["--kernel-trace", "--hip-trace", "--stats", "-i", str(counters), "-d", str(out)]
    argv = [sys.executable, str(FAKE), *options, "--output-format", "csv", "json", "--", "true"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    csvs = sorted(out.rglob("*.csv"))
    assert len(csvs) == 5  # agent_info, kernel_trace, hip_api_trace, kernel_stats, counters
    trace = READER.read_group([str(p) for p in csvs])
    assert len(trace.gpu) == 2 and len(trace.host) == 1 and len(trace.totals) == 2
    assert len(trace.counters) == 4 and (trace.counters.row >= 0).all()
    assert trace.meta.provides >= {"kernels", "host_api", "links", "devices", "counters", "totals"}
    assert trace.gpu.dur.tolist() == [12_800, 95_360]
    [json_trace] = read_traces(str(out))  # the JSON of the same process wins
    assert json_trace.meta.files[0].endswith("_results.json") and len(json_trace.gpu) == 0


# -- broken inputs ----------------------------------------------------------------------------
def test_header_only_csv_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "1_kernel_trace.csv"
    path.write_text(reference_file(f"{DOCS7}/kernel_trace.csv").read_text().splitlines()[0] + "\n")
    with pytest.raises(ReaderError, match="no rows") as error:
        read_trace(str(path))
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


def test_missing_column_is_named(tmp_path: Path) -> None:
    lines = reference_file(f"{DOCS7}/kernel_trace.csv").read_text().splitlines()
    rows = [r[:10] + r[11:] for r in csv.reader(lines)]  # drop End_Timestamp
    path = tmp_path / "1_kernel_trace.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle, quoting=csv.QUOTE_NONNUMERIC).writerows(rows)
    with pytest.raises(ReaderError, match="no End_Timestamp column"):
        read_trace(str(path))


@pytest.mark.parametrize("name", ["kernel_trace.csv", "counter_collection.csv", "hip_trace.csv",
                                  "memory_copy_trace.csv", "hip_api_stats.csv"])  # fmt: skip
def test_cut_files_keep_the_complete_rows_or_fail_in_one_line(tmp_path: Path, name: str) -> None:
    data = reference_file(f"{DOCS7}/{name}").read_bytes()
    header_end = data.index(b"\n") + 1
    for cut in random.Random(name).sample(range(1, len(data) - 1), 25):
        path = tmp_path / f"{cut}_{name}"
        path.write_bytes(data[:cut])
        try:
            trace = read_trace(str(path))
        except ReaderError as error:
            assert "\n" not in str(error) and str(error).startswith(str(path))
            continue
        assert cut > header_end
        complete = data[:cut].count(b"\n") - 1  # rows ended by a newline
        if trace.meta.truncated:
            assert any("cut short" in w for w in trace.meta.warnings)
        events = len(trace.gpu) + len(trace.host) + len(trace.totals)
        assert complete <= events <= complete + 1


def test_garbage_and_wrong_json(tmp_path: Path) -> None:
    garbage = tmp_path / "1_kernel_trace.csv"
    garbage.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4096)))
    with pytest.raises(ReaderError, match="not a profiler output"):
        read_trace(str(garbage))
    wrong = tmp_path / "2_results.json"
    wrong.write_text('{"rocprofiler-sdk-tool": [{"agents": {"handle": 1}}]}')
    with pytest.raises(ReaderError, match="not the rocprofv3 JSON layout"):
        read_trace(str(wrong))


def test_truncated_json_and_gzip(tmp_path: Path) -> None:
    text = json.dumps(json_document(), indent=4).encode()
    cut = tmp_path / "1_results.json"
    cut.write_bytes(text[: len(text) // 2])
    with pytest.raises(ReaderError, match="truncated"):
        read_trace(str(cut))
    packed = gzip.compress(text)
    cut_gz = tmp_path / "2_results.json.gz"
    cut_gz.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(ReaderError, match=r"cut short|truncated"):
        read_trace(str(cut_gz))


def test_a_broken_member_of_a_group_is_a_warning(tmp_path: Path) -> None:
    shutil.copy(reference_file(f"{DOCS7}/kernel_trace.csv"), tmp_path / "7_kernel_trace.csv")
    header = reference_file(f"{DOCS7}/hip_trace.csv").read_text().splitlines()[0]
    (tmp_path / "7_hip_api_trace.csv").write_text(
        header.replace('"End_Timestamp"', '"X"') + "\n1\n"
    )
    [trace] = read_traces(str(tmp_path))
    assert len(trace.gpu) == 9 and "host_api" not in trace.meta.provides
    assert any("7_hip_api_trace.csv" in w and "End_Timestamp" in w for w in trace.meta.warnings)


@pytest.mark.parametrize("case", ["header-only", "bad-json"])
def test_cli_reports_one_error_line(tmp_path: Path, case: str) -> None:
    if case == "header-only":
        path = tmp_path / "1_counter_collection.csv"
        path.write_text(
            reference_file(f"{DOCS7}/counter_collection.csv").read_text().splitlines()[0]
        )
    else:
        path = tmp_path / "1_results.json"
        path.write_text('{"rocprofiler-sdk-tool": [{"metadata": ')
    done = subprocess.run([sys.executable, "-m", "gpuscope", "analyze", str(path)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
