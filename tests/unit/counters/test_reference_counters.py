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

from gpuscope.analysis.grid import FIXED_NS, INFO_SHARE, WARNING_SHARE
from gpuscope.counters.analysis import CounterAnalysis
from gpuscope.counters.pipeline import analyse_counters
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


def _config(row: dict[str, str]) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """(kernel, grid, block) of an ncu row: what one counters row stands for."""
    dims = (
        tuple(int(v) for v in row[c].strip("()").split(",")) for c in ("Grid Size", "Block Size")
    )
    grid, block = dims
    return row["Kernel Name"], grid, block


def _got(report: CounterAnalysis) -> dict[tuple[str, tuple[int, ...], tuple[int, ...]], Any]:
    return {
        (k["name"], tuple(k["grid"]), tuple(k["block"])): k for k in report.to_dict()["kernels"]
    }


def test_ncu_raw_page_h200() -> None:
    path = reference_file("ncu-csv/ncu_raw_metrics.csv")
    report = _analyse(path)
    rows, units = _ncu_rows(path)
    assert units["dram__bytes.sum"] == "byte" and units["gpu__time_duration.sum"] == "ns"
    by_config: dict[Any, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_config[_config(r)].append(r)
    assert len({name for name, _, _ in by_config}) < len(by_config)  # one kernel, two grids
    peak = _datasheet("NVIDIA H200 SXM")["bandwidth_gbs"] * 1e9
    got = _got(report)
    assert set(got) == set(by_config)
    total = sum(_number(r["gpu__time_duration.sum"]) for r in rows)
    expected: dict[str, tuple[str, float]] = {}
    for config, group in by_config.items():
        data = sum(_number(r["dram__bytes.sum"]) for r in group)
        ns = sum(_number(r["gpu__time_duration.sum"]) for r in group)
        m = got[config]["metrics"]
        assert m["bytes_dram"] == data
        assert m["dram_bandwidth"] == pytest.approx(data / (ns * 1e-9), rel=REL)
        assert got[config]["roofline"]["bandwidth_fraction"] == pytest.approx(
            data / (ns * 1e-9) / peak, rel=REL
        )
        limits = {
            "registers": _number(group[0]["launch__occupancy_limit_registers"]),
            "shared memory": _number(group[0]["launch__occupancy_limit_shared_mem"]),
            "warps per block": _number(group[0]["launch__occupancy_limit_warps"]),
            "block slots per SM": _number(group[0]["launch__occupancy_limit_blocks"]),
        }
        theoretical = _number(group[0]["sm__maximum_warps_per_active_cycle_pct"]) / 100
        occupancy = got[config]["occupancy"]
        assert occupancy["share"] == pytest.approx(theoretical, rel=REL)
        if theoretical < 1:
            assert occupancy["limiter"] == min(limits, key=lambda key: limits[key])
        # the grid against the GPU: ncu's own SM count, residency and waves
        sms = _number(group[0]["device__attribute_multiprocessor_count"])
        blocks = _number(group[0]["launch__grid_size"])
        fill = got[config]["fill"]
        assert (fill["blocks"], fill["units"]) == (blocks, sms)
        assert fill["resident_per_unit"] == min(limits.values())
        assert fill["waves"] == pytest.approx(
            _number(group[0]["launch__waves_per_multiprocessor"]), abs=0.005
        )
        stake = sum(max(_number(r["gpu__time_duration.sum"]) - FIXED_NS, 0) for r in group)
        stake *= max(sms - blocks, 0) / sms
        if stake / total >= INFO_SHARE:
            severity = "warning" if stake / total >= WARNING_SHARE else "info"
            expected[config[0]] = (severity, round(stake / 1000, 3))
    small = {f["evidence"]["kernel"]: (f["severity"], f["impact_us"])
             for f in report.findings if f["id"] == "small-grid"}  # fmt: skip
    assert small == expected and expected


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
    """SpeedOfLight only: the bound from ncu's memory vs SM throughput, its percentages under
    their own names; no device name, so no roof and no fraction — and ncu's "grid too small"
    explained, as gpuscope cannot count the SMs here."""
    path = reference_file("ncu-csv/ncu_details_sol.csv")
    report = _analyse(path)
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    values: dict[Any, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    rules: dict[Any, list[str]] = defaultdict(list)
    for r in csv.DictReader(lines):
        if r["Metric Name"] in ("Memory Throughput", "Compute (SM) Throughput", "Duration"):
            values[_config(r)][r["Metric Name"]].append(_number(r["Metric Value"]))
        elif r["Rule Name"] == "SOLBottleneck":
            rules[_config(r)].append(r["Rule Description"])
    got = _got(report)
    assert set(got) == set(values)
    for config, v in values.items():
        weights = v["Duration"]  # duration-weighted mean over the group's dispatches
        memory = sum(a * w for a, w in zip(v["Memory Throughput"], weights, strict=True))
        sm = sum(a * w for a, w in zip(v["Compute (SM) Throughput"], weights, strict=True))
        memory, sm = memory / sum(weights), sm / sum(weights)
        point = got[config]["roofline"]
        assert point["basis"] == "ncu speed-of-light"
        assert point["bound"] == ("memory" if memory >= sm else "compute")
        assert point["ncu"]["memory_throughput_pct_of_peak_sustained"] == pytest.approx(memory)
        assert point["ncu"]["sm_throughput_pct_of_peak_sustained"] == pytest.approx(sm)
        assert point["fraction"] is None and point["bandwidth_fraction"] is None
        ncu = got[config]["ncu"]
        assert "too small to fill" in rules[config][0] and ncu["bottleneck"] == "small grid"
        assert ncu["agrees"] is False and "--device NAME" in ncu["explanation"]
        assert got[config]["label"]["label"] == f"{point['bound']}-bound"
    # the roof rules stay silent where ncu calls the grid too small
    assert not [f for f in report.findings if f["id"].startswith(("memory-", "compute-"))]


def test_ncu_details_page_with_the_gpu_named() -> None:
    """`--device` gives the SM count: the 64-block grid is a small grid for both; the 512-block
    grid fills every SM (ncu: 0.8 of a full wave), and the difference is explained."""
    path = reference_file("ncu-csv/ncu_details_sol.csv")
    report = _analyse(path, device_name="NVIDIA H200")
    got = {tuple(k["grid"]): k for k in report.to_dict()["kernels"]}
    assert got[(8, 1, 8)]["label"]["label"] == "small grid" and got[(8, 1, 8)]["ncu"]["agrees"]
    wide = got[(512, 1, 1)]
    assert wide["fill"]["small"] is False and wide["ncu"]["agrees"] is False
    assert wide["ncu"]["explanation"].startswith("ncu calls the grid too small because a full wave")
