"""Counter analysis on real profiler outputs, every checked number recomputed here from the raw
files with the csv module (no gpuscope code on the expected side).

- rocprof v1 on an MI250X GCD (hpctraining finite-difference): a counter CSV without times and
  a kernel trace of another run, joined by kernel name and occurrence;
- rocprofv3 counter_collection.csv (ROCm 7 layout, AMD docs sample);
- Nsight Compute raw and details pages recorded on H100 / H200.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from gpuscope.counters.analysis import CounterAnalysis, analyse_counters
from gpuscope.trace.registry import find_sources, read_source
from tests.unit.trace.reference import reference_file

PMC = "rocprof-v1/hpctraining-finite-difference-mi250/xr_laplacian_dp_kernel1_pmc"
REL = 1e-9


def _analyse(path: Path, **options: Any) -> CounterAnalysis:
    traces = [read_source(s) for s in find_sources(str(path))]
    return analyse_counters(traces, **options)


def _kernel(report: CounterAnalysis, name: str) -> dict[str, Any]:
    return next(k for k in report.to_dict()["kernels"] if k["name"] == name)


def _datasheet(label: str) -> dict[str, Any]:
    text = resources.files("gpuscope").joinpath("data/peaks.json").read_text("utf-8")
    return next(d for d in json.loads(text)["devices"] if d["label"] == label)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _ncu_rows(path: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    """ncu --csv raw page: skip the tool's lines, row 1 names, row 2 units."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    table = list(csv.reader(lines))
    header, units = table[0], table[1]
    return [dict(zip(header, r, strict=True)) for r in table[2:]], dict(
        zip(header, units, strict=True)
    )


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.fixture(scope="module")
def mi250() -> tuple[CounterAnalysis, Path]:
    folder = reference_file(PMC)
    return _analyse(folder, arch="gfx90a", device_name="AMD Instinct MI250X"), folder


def test_mi250_counters_joined_to_the_other_runs_durations(mi250: tuple[Any, Path]) -> None:
    report, folder = mi250
    counters = [
        r for r in _rows(folder / "data_movement.csv") if r["KernelName"] == "laplacian_kernel"
    ]
    times = [r for r in _rows(folder / "results.csv") if r["KernelName"] == "laplacian_kernel"]
    assert len(counters) == len(times) == 1001
    seconds = sum(int(r["DurationNs"]) for r in times) * 1e-9
    fetch = sum(float(r["FETCH_SIZE"]) for r in counters) * 1024  # KiB
    write = sum(float(r["WRITE_SIZE"]) for r in counters) * 1024
    reads = sum(float(r["TCP_TCC_READ_REQ_sum"]) for r in counters)
    writes = sum(float(r["TCP_TCC_WRITE_REQ_sum"]) for r in counters)
    accesses = sum(float(r["TCP_TOTAL_CACHE_ACCESSES_sum"]) for r in counters)

    k = _kernel(report, "laplacian_kernel")
    m = k["metrics"]
    assert k["dispatches"] == 1001
    assert k["time_us"] == pytest.approx(seconds * 1e6, rel=REL)
    assert m["bytes_dram"] == pytest.approx(fetch + write, rel=REL)
    assert m["dram_bandwidth"] == pytest.approx((fetch + write) / seconds, rel=REL)
    assert m["bytes_l2"] == pytest.approx(64 * (reads + writes), rel=REL)
    assert m["l1_hit_rate"] == pytest.approx(1 - (reads + writes) / accesses, rel=REL)
    assert k["formulas"]["l1_hit_rate"].startswith("1 - (TCP_TCC_READ_REQ_sum + ")
    assert any("durations of 1,004 dispatches" in n for n in report.to_dict()["notes"])


def test_mi250_bandwidth_against_the_datasheet_and_the_advice(mi250: tuple[Any, Path]) -> None:
    report, _ = mi250
    peak = _datasheet("AMD Instinct MI250X (one GCD)")["bandwidth_gbs"] * 1e9
    k = _kernel(report, "laplacian_kernel")
    fraction = k["metrics"]["dram_bandwidth"] / peak
    assert k["roofline"]["bandwidth_fraction"] == pytest.approx(fraction, rel=REL)
    assert k["roofline"]["bound"] is None  # no FLOP counters: the roofline cannot decide
    found = {f["id"]: f for f in report.findings}
    assert found["memory-bound"]["message"].startswith(f"laplacian_kernel moves {fraction:.0%} of")
    assert found["memory-bound"]["evidence"]["dram_bandwidth"] == k["metrics"]["dram_bandwidth"]
    assert report.to_dict()["ceilings"]["kind"] == "datasheet"


def test_mi250_missing_counters_are_named_never_zero(mi250: tuple[Any, Path]) -> None:
    report, _ = mi250
    k = _kernel(report, "laplacian_kernel")
    for metric in ("flops", "flops_rate", "l2_hit_rate", "lds_bank_conflict_share", "waves"):
        assert metric not in k["metrics"]
        assert k["unavailable"][metric].startswith("missing ")
    assert "SQ_INSTS_VALU_FMA_F64" in k["unavailable"]["flops"]
    assert k["unavailable"]["l2_hit_rate"] == "missing TCC_HIT_sum, TCC_MISS_sum (or L2CacheHit)"
    # occupancy from the launch parameters: 24 arch VGPRs, 0 AGPRs -> 512 // 24 > 8: not limited
    assert k["occupancy"]["waves_per_simd"] == 8 and k["occupancy"]["limiter"] == "none"


def test_rocprofv3_counter_collection_rocm7() -> None:
    path = reference_file("rocprofv3/amd-docs-rocm7-2025-08/counter_collection.csv")
    report = _analyse(path)
    rows = _rows(path)
    waves: dict[str, float] = defaultdict(float)
    ns: dict[str, int] = defaultdict(int)
    for r in rows:
        assert r["Counter_Name"] == "SQ_WAVES"
        waves[r["Kernel_Name"]] += float(r["Counter_Value"])
        ns[r["Kernel_Name"]] += int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
    got = {k["name"]: k for k in report.to_dict()["kernels"]}
    assert set(got) == set(waves)
    for name, k in got.items():
        assert k["metrics"]["waves"] == waves[name]
        assert k["time_us"] == pytest.approx(ns[name] / 1000, rel=REL)
    # no agent info beside it: the family is guessed and says so
    assert report.to_dict()["source"]["arch_from"].startswith("counter names")


def test_ncu_raw_page_h200() -> None:
    path = reference_file("ncu-csv/ncu_raw_metrics.csv")
    report = _analyse(path)
    rows, units = _ncu_rows(path)
    assert units["dram__bytes.sum"] == "byte" and units["gpu__time_duration.sum"] == "ns"
    by_name: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_name[r["Kernel Name"]].append(r)
    peak = _datasheet("NVIDIA H200 SXM")["bandwidth_gbs"] * 1e9
    got = {k["name"]: k for k in report.to_dict()["kernels"]}
    assert set(got) == set(by_name)
    for name, group in by_name.items():
        data = sum(_number(r["dram__bytes.sum"]) for r in group)
        ns = sum(_number(r["gpu__time_duration.sum"]) for r in group)
        m = got[name]["metrics"]
        assert m["bytes_dram"] == data
        assert m["dram_bandwidth"] == pytest.approx(data / (ns * 1e-9), rel=REL)
        assert got[name]["roofline"]["bandwidth_fraction"] == pytest.approx(
            data / (ns * 1e-9) / peak, rel=REL
        )
        limits = {
            "registers": _number(group[0]["launch__occupancy_limit_registers"]),
            "shared memory": _number(group[0]["launch__occupancy_limit_shared_mem"]),
            "warps per block": _number(group[0]["launch__occupancy_limit_warps"]),
            "block slots per SM": _number(group[0]["launch__occupancy_limit_blocks"]),
        }
        theoretical = _number(group[0]["sm__maximum_warps_per_active_cycle_pct"]) / 100
        occupancy = got[name]["occupancy"]
        assert occupancy["share"] == pytest.approx(theoretical, rel=REL)
        if theoretical < 1:
            assert occupancy["limiter"] == min(limits, key=lambda key: limits[key])
    small = [f for f in report.findings if f["id"] == "small-grid"]
    expected = [
        n for n, g in by_name.items() if _number(g[0]["launch__waves_per_multiprocessor"]) < 1
    ]
    assert sorted(f["evidence"]["kernel"] for f in small) == sorted(expected)


def test_ncu_raw_gemm_reads_plus_writes() -> None:
    path = reference_file("ncu-csv/ncu_raw_gemm.csv")
    report = _analyse(path)
    rows, _ = _ncu_rows(path)
    got = {k["name"]: k for k in report.to_dict()["kernels"]}
    for r in rows:
        k = got[r["Kernel Name"]]
        want = _number(r["dram__bytes_read.sum"]) + _number(r["dram__bytes_write.sum"])
        assert k["metrics"]["bytes_dram"] == want
        assert k["formulas"]["bytes_dram"] == "dram__bytes_read.sum + dram__bytes_write.sum"
        assert k["metrics"]["sol_sm"] == pytest.approx(
            _number(r["sm__throughput.avg.pct_of_peak_sustained_elapsed"]) / 100, rel=REL
        )


def test_ncu_details_page_speed_of_light_classification() -> None:
    path = reference_file("ncu-csv/ncu_details_sol.csv")
    report = _analyse(path)
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in csv.DictReader(lines):
        if r["Metric Name"] in ("Memory Throughput", "Compute (SM) Throughput", "Duration"):
            values[r["Kernel Name"]][r["Metric Name"]].append(_number(r["Metric Value"]))
    got = {k["name"]: k for k in report.to_dict()["kernels"]}
    assert set(got) == set(values)
    for name, v in values.items():
        weights = v["Duration"]  # duration-weighted mean over the kernel's dispatches
        memory = (
            sum(a * w for a, w in zip(v["Memory Throughput"], weights, strict=True))
            / sum(weights)
            / 100
        )
        sm = (
            sum(a * w for a, w in zip(v["Compute (SM) Throughput"], weights, strict=True))
            / sum(weights)
            / 100
        )
        point = got[name]["roofline"]
        assert point["basis"] == "ncu speed-of-light"
        assert point["bound"] == ("memory" if memory >= sm else "compute")
        assert point["fraction"] == pytest.approx(max(memory, sm), rel=REL)
