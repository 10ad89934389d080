"""Derived metrics, roofline, occupancy and advice on counter files written by the tests, with
every expected number worked out by hand in the test (formulas of rocprofiler-compute:
64 lanes per VALU instruction, FMA twice, 512 FLOPs per MFMA MOPS unit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscope.counters.pipeline import analyse_counters
from gpuscope.errors import InputError
from gpuscope.trace.registry import find_sources, read_source
from tests.unit.counters.conftest import Writer, write_counters

MS = 1_000_000  # ns


def _report(path: Path, **options: object) -> dict:
    traces = [read_source(s) for s in find_sources(str(path))]
    return analyse_counters(traces, **options).to_dict()  # type: ignore[arg-type]


def _peaks(tmp_path: Path, tflops: dict[str, float], gbs: float) -> str:
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps({"label": "my MI300X", "tflops": tflops, "bandwidth_gbs": gbs}))
    return str(path)


GEMM = {  # a compute-bound MFMA kernel on gfx942
    "SQ_INSTS_VALU_ADD_F32": 1000.0, "SQ_INSTS_VALU_MUL_F32": 0.0, "SQ_INSTS_VALU_TRANS_F32": 0.0,
    "SQ_INSTS_VALU_FMA_F32": 5000.0,
    "SQ_INSTS_VALU_ADD_F16": 0.0, "SQ_INSTS_VALU_MUL_F16": 0.0, "SQ_INSTS_VALU_TRANS_F16": 0.0,
    "SQ_INSTS_VALU_FMA_F16": 0.0,
    "SQ_INSTS_VALU_ADD_F64": 0.0, "SQ_INSTS_VALU_MUL_F64": 0.0, "SQ_INSTS_VALU_TRANS_F64": 0.0,
    "SQ_INSTS_VALU_FMA_F64": 0.0,
    "SQ_INSTS_VALU_MFMA_MOPS_F16": 0.0, "SQ_INSTS_VALU_MFMA_MOPS_BF16": 2.0e9,
    "SQ_INSTS_VALU_MFMA_MOPS_F32": 0.0, "SQ_INSTS_VALU_MFMA_MOPS_F64": 0.0,
    "TCC_BUBBLE_sum": 1.0e6, "TCC_EA0_RDREQ_sum": 3.0e6, "TCC_EA0_RDREQ_32B_sum": 0.5e6,
    "TCC_EA0_WRREQ_sum": 2.0e6, "TCC_EA0_WRREQ_64B_sum": 1.5e6,
    "SQ_INSTS_MFMA": 4.0e6, "SQ_INSTS": 2.0e7,
    "SQ_LDS_IDX_ACTIVE": 1.0e6, "SQ_LDS_BANK_CONFLICT": 4.0e5,
}  # fmt: skip


def test_flops_bytes_and_the_compute_roof(tmp_path: Path) -> None:
    path = write_counters(
        tmp_path / "gemm_counter_collection.csv", [("Cijk_gemm_bf16", 2 * MS, GEMM, 128, 16384)]
    )
    peaks = _peaks(tmp_path, {"bf16": 1000.0, "fp32": 100.0}, 5000.0)
    report = _report(path, arch="gfx942", peaks_file=peaks)
    k = report["kernels"][0]
    m = k["metrics"]
    valu_fp32 = 64 * (1000 + 2 * 5000)  # ADD + 2 FMA, 64 lanes
    mfma_bf16 = 512 * 2.0e9
    flops = valu_fp32 + mfma_bf16
    read = 128 * 1.0e6 + 64 * (3.0e6 - 1.0e6 - 0.5e6) + 32 * 0.5e6
    write = 64 * 1.5e6 + 32 * (2.0e6 - 1.5e6)
    seconds = 2e-3
    assert m["flops_valu_fp32"] == valu_fp32 and m["flops_mfma_bf16"] == mfma_bf16
    assert m["flops"] == flops
    assert m["bytes_dram"] == pytest.approx(read + write)
    assert m["intensity_dram"] == pytest.approx(flops / (read + write))
    assert m["flops_rate"] == pytest.approx(flops / seconds)
    assert m["lds_bank_conflict_share"] == pytest.approx(4.0e5 / 1.0e6)
    assert m["bytes_lds"] == (1.0e6 - 4.0e5) * 4 * 32
    assert m["mix_mfma"] == pytest.approx(4.0e6 / 2.0e7)
    point = k["roofline"]
    ridge = 1000e12 / 5000e9  # bf16 does most FLOPs: its roof
    assert point["precision"] == "bf16" and point["ridge"] == pytest.approx(ridge)
    assert flops / (read + write) > ridge and point["bound"] == "compute"
    assert point["fraction"] == pytest.approx(flops / seconds / 1000e12)
    assert report["ceilings"]["kind"] == "user"
    # 128 VGPRs -> 512 // 128 = 4 of 8 waves per SIMD; LDS 16 KiB -> 4 groups x 4 waves / 4 SIMDs
    assert k["occupancy"]["waves_per_simd"] == 4 and k["occupancy"]["limiter"] == "VGPRs"
    ids = {f["id"] for f in report["findings"]}
    assert {"lds-bank-conflicts", "low-occupancy"} <= ids  # 40 % conflicts, 4 of 8 waves
    assert "compute-bound-low" not in ids  # 51 % of the bf16 roof is above the 30 % threshold


def test_matrix_cores_unused_in_a_gemm_like_kernel(tmp_path: Path) -> None:
    scalar = {**GEMM, "SQ_INSTS_MFMA": 0.0, "SQ_INSTS_VALU_MFMA_MOPS_BF16": 0.0}
    path = write_counters(tmp_path / "x_counter_collection.csv",
                          [("sgemm_kernel_fallback", MS, scalar, 32, 0),
                           ("elementwise_add", MS, scalar, 32, 0)])  # fmt: skip
    report = _report(path, arch="gfx942")
    (found,) = [f for f in report["findings"] if f["id"] == "matrix-cores-unused"]
    assert "0 MFMA instructions in the 1 hottest GEMM-like kernel(s)" in found["message"]
    assert [e["kernel"] for e in found["evidence"]["kernels"]] == ["sgemm_kernel_fallback"]


def test_memory_bound_below_the_ridge(tmp_path: Path) -> None:
    copy = {**GEMM, "SQ_INSTS_VALU_MFMA_MOPS_BF16": 0.0, "SQ_INSTS_VALU_FMA_F32": 0.0,
            "SQ_INSTS_VALU_ADD_F32": 1.0e5}  # fmt: skip
    path = write_counters(
        tmp_path / "c_counter_collection.csv", [("copy_kernel", 50_000, copy, 32, 0)]
    )
    peaks = _peaks(tmp_path, {"fp32": 100.0}, 5000.0)
    k = _report(path, arch="gfx942", peaks_file=peaks)["kernels"][0]
    data = 128 * 1.0e6 + 64 * 1.5e6 + 32 * 0.5e6 + 64 * 1.5e6 + 32 * 0.5e6
    flops = 64 * 1.0e5
    assert k["roofline"]["bound"] == "memory"
    assert k["roofline"]["fraction"] == pytest.approx(data / 50e-6 / 5000e9)
    assert k["metrics"]["intensity_dram"] == pytest.approx(flops / data)


def test_passes_merge_by_kernel_name_and_occurrence(tmp_path: Path, counters_csv: Writer) -> None:
    """rocprofv3 -i with two pmc: lines runs the program twice (pmc_1/, pmc_2/): dispatch ids
    differ between the runs, names and order do not."""
    run1 = [("a", MS, {"SQ_WAVES": 10.0}, 8, 0), ("b", MS, {"SQ_WAVES": 20.0}, 8, 0),
            ("a", MS, {"SQ_WAVES": 30.0}, 8, 0)]  # fmt: skip
    run2 = [("a", 2 * MS, {"SQ_INSTS_VALU": 1.0, "FETCH_SIZE": 2.0}, 8, 0),
            ("b", 2 * MS, {"SQ_INSTS_VALU": 5.0, "FETCH_SIZE": 3.0}, 8, 0),
            ("a", 2 * MS, {"SQ_INSTS_VALU": 7.0, "FETCH_SIZE": 4.0}, 8, 0)]  # fmt: skip
    counters_csv(tmp_path / "pmc_1" / "host" / "11_counter_collection.csv", run1)
    write_counters(tmp_path / "pmc_2" / "host" / "12_counter_collection.csv", run2, first_id=900)
    report = _report(tmp_path, arch="gfx90a")
    got = {k["name"]: k for k in report["kernels"]}
    assert got["a"]["dispatches"] == 2 and got["b"]["dispatches"] == 1
    assert got["a"]["metrics"]["waves"] == 10 + 30
    assert got["b"]["metrics"]["waves"] == 20
    # FETCH_SIZE is in KiB in rocprofv3 output
    assert got["a"]["metrics"]["bytes_dram_read"] == (2.0 + 4.0) * 1024
    assert got["a"]["time_us"] == 2 * 1000  # the first pass's durations lead
    assert any("2 passes merged" in n for n in report["notes"])


def test_no_counters_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "kernel_trace.csv"
    path.write_text(
        '"Kind","Agent_Id","Queue_Id","Kernel_Id","Kernel_Name","Correlation_Id",'
        '"Start_Timestamp","End_Timestamp"\n"KERNEL_DISPATCH",1,1,1,"k",1,10,20\n'
    )
    with pytest.raises(InputError, match="no hardware counters found"):
        _report(path)


def test_unknown_arch_option(tmp_path: Path) -> None:
    path = write_counters(
        tmp_path / "x_counter_collection.csv", [("k", MS, {"SQ_WAVES": 1.0}, 8, 0)]
    )
    with pytest.raises(InputError, match="--arch gfx803: no counter formulas"):
        _report(path, arch="gfx803")


def test_a_pass_that_missed_dispatches_never_reads_as_zero(tmp_path: Path) -> None:
    """The second run saw 2 of the 3 dispatches (e.g. it was cut short): its counters are
    unknown for the third, so totals over it are unavailable, not sums of what is there."""
    hits = {"TCC_HIT_sum": 3.0, "TCC_MISS_sum": 1.0}
    write_counters(tmp_path / "pmc_1" / "1_counter_collection.csv", [("a", MS, hits, 8, 0)] * 3)
    mix = {"SQ_WAVES": 4.0, "SQ_INSTS": 10.0, "SQ_INSTS_SALU": 5.0}
    write_counters(tmp_path / "pmc_2" / "2_counter_collection.csv", [("a", MS, mix, 8, 0)] * 2)
    (k,) = _report(tmp_path, arch="gfx90a")["kernels"]
    assert k["dispatches"] == 3
    assert k["metrics"]["l2_hit_rate"] == 9.0 / 12.0
    assert k["unavailable"]["waves"] == "not computable for 1 of 3 dispatches"
    assert k["unavailable"]["mix_salu"].endswith("not collected for 1 of 3 dispatches")
