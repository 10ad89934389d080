"""The launch-configuration analysis (`analysis.launchconfig`, rule in `analysis.grid`) on every
kind of source that records grids: nsys SQLite and `nsys stats` CSV, rocpd, Kineto (NVIDIA and
AMD), and small Kineto traces written here for the cases no recording covers.

The expected numbers are recomputed in each test from the raw file (sqlite3, csv, json) with the
rule as `analysis.grid` states it: blocks = grid x·y·z against the GPU's SMs / CUs; small when
blocks < SMs; at stake = Σ (duration − FIXED_NS) × idle SMs ÷ SMs; a finding from INFO_SHARE of
the kernel time at stake, a warning from WARNING_SHARE.
"""

from __future__ import annotations

import csv
import gzip
import json
import sqlite3
from collections import defaultdict
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.analysis import grid
from gpuscope.analysis.grid import FIXED_NS, INFO_SHARE, WARNING_SHARE
from tests.unit.analysis.conftest import TraceBuilder
from tests.unit.trace.reference import FORMATS, reference_file

TRACES = FORMATS.parent / "traces"
NSYS = "nsys/vectoraddition-a100-nsys2022.2"


def _analysis(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = gpuscope.analyze(str(path)).to_dict()
    return result


def _small_grid(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["id"] == "small-grid"]


def _expected(
    groups: dict[Any, list[int]], units: int, total: float
) -> dict[Any, tuple[str, float]]:
    """(severity, µs at stake) per group key with a finding, by the stated rule."""
    found = {}
    for key, durations in groups.items():
        blocks = key[1]
        if blocks >= units:
            continue
        stake = sum(max(d - FIXED_NS, 0) for d in durations) * (units - blocks) / units
        if stake / total >= INFO_SHARE:
            found[key] = ("warning" if stake / total >= WARNING_SHARE else "info", stake)
    return found


# -- nsys ------------------------------------------------------------------------------------
def test_nsys_sqlite_one_block_on_an_a100() -> None:
    """The issue's plain CUDA C program: `add` as 1 block of 256 threads on 108 SMs."""
    path = reference_file(f"{NSYS}/report4.sqlite")
    with closing(sqlite3.connect(path)) as db, db:
        kernels = db.execute(
            "SELECT gridX * gridY * gridZ, blockX, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ).fetchall()
        ((sms,),) = db.execute("SELECT smCount FROM TARGET_INFO_GPU").fetchall()
    ((blocks, threads, ns),) = kernels
    report = _analysis(path)
    part = report["launch_config"]
    assert part["devices"] == [{"id": 0, "units": sms, "unit": "SM", "units_from": "trace"}]
    (group,) = part["groups"]
    assert (group["fill"]["blocks"], group["threads_per_block"]) == (blocks, threads) == (1, 256)
    assert group["time_us"] == ns / 1000
    (found,) = _small_grid(report)
    stake = (ns - FIXED_NS) * (sms - blocks) / sms
    assert found["severity"] == "warning" and found["impact_us"] == round(stake / 1000, 3)
    assert found["cause"] == "launch-config"
    assert found["evidence"]["idle_units"] == sms - 1 == 107
    assert "cudaOccupancyMaxActiveBlocksPerMultiprocessor" in found["action"]
    assert "pin_memory" not in found["action"] and ".item()" not in found["action"]


def test_nsys_stats_csv_takes_the_sm_count_from_the_datasheet() -> None:
    """`nsys stats` CSV names the GPU but not its SMs: peaks.json's `multiprocessors`."""
    path = reference_file(f"{NSYS}/stats-by-nsys2025.3/va4_cuda_gpu_trace.csv")
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["GrdX"]]
    ((device, grid_x, ns),) = [(r["Device"], int(r["GrdX"]), int(r["Duration (ns)"])) for r in rows]
    assert device.startswith("NVIDIA A100-SXM4-40GB")
    text = (Path(gpuscope.__file__).parent / "data" / "peaks.json").read_text()
    (entry,) = [d for d in json.loads(text)["devices"] if "NVIDIA A100-SXM4-40GB" in d["names"]]
    report = _analysis(path)
    (known,) = report["launch_config"]["devices"]
    assert known["units"] == entry["multiprocessors"] == 108
    assert known["units_from"] == f"datasheet ({entry['label']})"
    (found,) = _small_grid(report)
    stake = (ns - FIXED_NS) * (108 - grid_x) / 108
    assert found["impact_us"] == round(stake / 1000, 3) and found["severity"] == "warning"


# -- rocpd -----------------------------------------------------------------------------------
def test_rocpd_mi300x_grids_fill_the_gpu() -> None:
    """Grids in work-items in the database, work-groups in gpuscope; 304 CUs from the agent."""
    path = reference_file("rocprofv3/rocpd-db-gfx942/15_results.db")
    with closing(sqlite3.connect(path)) as db, db:
        rows = db.execute(
            "SELECT name, (grid_x + workgroup_x - 1) / workgroup_x * (grid_y + workgroup_y - 1) "
            "/ workgroup_y * (grid_z + workgroup_z - 1) / workgroup_z, duration FROM kernels"
        ).fetchall()
        ((extdata,),) = db.execute(
            "SELECT extdata FROM rocpd_info_agent WHERE type = 'GPU' AND absolute_index = "
            "(SELECT DISTINCT agent_abs_index FROM kernels)"
        ).fetchall()
    cus = json.loads(extdata)["cu_count"]
    groups: dict[Any, list[int]] = defaultdict(list)
    for name, blocks, ns in rows:
        groups[(name, blocks)].append(ns)
    report = _analysis(path)
    part = report["launch_config"]
    assert [d["units"] for d in part["devices"]] == [cus] and part["devices"][0]["unit"] == "CU"
    got = {(g["kernel"], g["fill"]["blocks"]): g for g in part["groups"]}
    for key, durations in groups.items():
        if key in got:
            assert got[key]["launches"] == len(durations)
            assert got[key]["time_us"] == pytest.approx(sum(durations) / 1000, abs=1e-3)
    assert _expected(groups, cus, sum(ns for _, _, ns in rows)) == {}
    assert _small_grid(report) == [] and part["small_grid"]["configs"] == 0


# -- Kineto ----------------------------------------------------------------------------------
# HIP calls whose grid arguments are the global work size in work-items (Kineto copies them)
WORK_ITEM_CALLS = ("hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")


def _kineto_groups(path: Path) -> tuple[dict[Any, list[int]], float]:
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    calls = {e["args"]["correlation"]: e["name"] for e in events
             if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}  # fmt: skip
    groups: dict[Any, list[int]] = defaultdict(list)
    total = 0
    for e in events:
        if e.get("cat") != "kernel":
            continue
        ns = int(Decimal(str(e["dur"])) * 1000)
        total += ns
        g, b = e["args"].get("grid"), e["args"].get("block")
        if g and b and "nccl" not in e["name"].lower():
            if calls.get(e["args"].get("correlation")) in WORK_ITEM_CALLS:
                g = [-(-x // y) for x, y in zip(g, b, strict=True)]  # work-items → work-groups
            groups[(e["name"], g[0] * g[1] * g[2], tuple(b))].append(ns)
    return groups, total


def test_kineto_mi300x_attention_on_16_work_groups() -> None:
    """bert-small on an MI300X: attn_fwd runs 16 work-groups on 304 CUs (a warning); a PyTorch
    program, so the action is not C++ advice."""
    path = TRACES / "tl__mi300x_bert-small_inference.json.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    groups, total = _kineto_groups(path)
    expected = _expected(groups, 304, total)
    report = _analysis(path)
    got = {(f["evidence"]["kernel"], f["evidence"]["blocks"], tuple(f["evidence"]["block"])): f
           for f in _small_grid(report)}  # fmt: skip
    assert set(got) == set(list(expected)[: len(got)]) == set(expected)
    for key, (severity, stake) in expected.items():
        assert got[key]["severity"] == severity
        assert got[key]["impact_us"] == round(stake / 1000, 3)
    attention = next(f for k, f in got.items() if k[0] == "attn_fwd")
    assert attention["severity"] == "warning" and attention["evidence"]["unit"] == "CU"
    assert "grid-stride" not in attention["action"] and "split-KV" in attention["action"]
    assert report["launch_config"]["program_kind"] == "framework"


def test_kineto_rocm_tensile_grids_are_work_items_made_work_groups() -> None:
    """rocBLAS launches Tensile through hipExtModuleLaunchKernel, whose grid is the global work
    size: `[73728, 1, 1]` with 256 threads is 288 work-groups (0.95 of a wave on 304 CUs), not
    73,728 (242 waves)."""
    path = TRACES / "tl__mi300x_bert-small_inference.json.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    groups, _ = _kineto_groups(path)
    report = _analysis(path)
    got = {(g["kernel"], g["fill"]["blocks"], tuple(g["block"])): g
           for g in report["launch_config"]["groups"]}  # fmt: skip
    tensile = [k for k in groups if k[0].startswith("Cijk_")]
    # the same work-groups as recomputed from the raw events, for every Tensile launch group
    assert tensile and all(k in got for k in tensile)
    first = got[next(k for k in tensile if k[1] == 288)]
    assert first["grid"] == [288, 1, 1] and first["fill"]["waves"] == pytest.approx(288 / 304, 1e-4)


def test_kineto_llama_decode_small_grids_of_tiny_work_stay_quiet() -> None:
    """A decode step: most kernel time is in grids smaller than the GPU, but on launches of a few
    µs — no grid would shorten them, so nothing is at stake beyond 5 %."""
    path = TRACES / "llama_decode_h200.json.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    groups, total = _kineto_groups(path)
    small_time = sum(sum(d) for key, d in groups.items() if key[1] < 132)
    assert small_time / total > 0.9
    assert _expected(groups, 132, total) == {}
    report = _analysis(path)
    assert _small_grid(report) == []
    assert report["launch_config"]["small_grid"]["share"] == pytest.approx(
        small_time / total, abs=2e-6
    )


# -- written here ----------------------------------------------------------------------------
def _written(
    tmp_path: Path,
    kernels: list[tuple[str, float, list[int], list[int]]],
    device: dict[str, Any] | None = None,
) -> str:
    trace = TraceBuilder()
    at = 100.0
    for name, dur, grid_, block in kernels:
        trace.kernel(name, at, dur, grid=grid_, block=block)
        at += dur + 10
    path = tmp_path / "trace.json"
    trace.write(path)
    data = json.loads(path.read_text())
    data["deviceProperties"] = [{"id": 0, **(device or {"name": "NVIDIA H100 80GB HBM3"})}]
    path.write_text(json.dumps(data))
    return str(path)


def test_one_kernel_on_two_grids_is_two_groups(tmp_path: Path) -> None:
    path = _written(tmp_path, [("saxpy", 1000.0, [1, 1, 1], [256, 1, 1]),
                               ("saxpy", 10.0, [1024, 1, 1], [256, 1, 1])])  # fmt: skip
    part = gpuscope.analyze(path).to_dict()["launch_config"]
    assert sorted(g["grid"][0] for g in part["groups"]) == [1, 1024]
    assert part["configs"] == 2


def test_communication_and_spin_kernels_are_not_judged(tmp_path: Path) -> None:
    path = _written(tmp_path, [("ncclKernel_AllReduce_RING_LL_Sum_float", 5000.0, [2, 1, 1],
                                [512, 1, 1]),
                               ("at::cuda::(anonymous namespace)::spin_kernel(long)", 5000.0,
                                [1, 1, 1], [1, 1, 1])])  # fmt: skip
    report = gpuscope.analyze(path).to_dict()
    assert {g["judged"] for g in report["launch_config"]["groups"]} == {False}
    assert _small_grid(report) == []


def test_unknown_gpu_size_judges_nothing(tmp_path: Path) -> None:
    path = _written(tmp_path, [("saxpy", 1000.0, [1, 1, 1], [256, 1, 1])], {"name": "GPU X"})
    report = gpuscope.analyze(path).to_dict()
    part = report["launch_config"]
    assert part["devices"][0]["units"] is None and part["groups"][0]["fill"] is None
    assert _small_grid(report) == []


def test_action_is_phrased_per_kind() -> None:
    assert "cudaOccupancyMaxActiveBlocksPerMultiprocessor" in grid.action()
    hip = grid.action("hip-cpp")
    assert "hipOccupancyMaxActiveBlocksPerMultiprocessor" in hip and "cuda" not in hip
    assert "grid-stride" not in grid.action("framework")
    assert grid.guess_kind("nvidia", False, "nvjet_sm90_tst_64x8") == "framework"
    assert grid.guess_kind("amd", False, "my_kernel(float*)") == "hip-cpp"
