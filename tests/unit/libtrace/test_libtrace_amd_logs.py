"""rocBLAS, hipBLASLt, Tensile and MIOpen parsers on the real logs (goldens counted by hand)."""

from __future__ import annotations

import re

from gpuscope.libtrace import hipblaslt, miopen, rocblas, tensile
from gpuscope.libtrace.call import ConvShape
from gpuscope.libtrace.logfile import LogLines
from gpuscope.libtrace.table import aggregate
from tests.unit.libtrace.conftest import reference_log

ROCMLIR = "rocblas-log/rocmlir_bert-configs-raw.bench.log"


def test_rocblas_bench_log_drops_the_line_without_newline() -> None:
    # The rocMLIR file has 15 bench lines and no final newline: read as a log, the last one
    # counts as cut off by a killed writer.
    log = LogLines(reference_log(ROCMLIR))
    calls = list(rocblas.parse(log))
    assert len(calls) == 14
    assert log.partial_tail is not None and log.partial_tail.startswith("./rocblas-bench")
    assert "no newline" in (log.warning() or "")


def test_rocblas_bench_fields() -> None:
    lines = reference_log(ROCMLIR).read_text().splitlines()
    calls = [c for line in lines for c in rocblas.parse([line])]
    assert len(calls) == 15
    first = calls[0]
    assert (first.library, first.op, first.dtype, first.compute_type) == (
        "rocblas", "gemm_strided_batched_ex", "f32", "f32",
    )  # fmt: skip
    assert (first.trans_a, first.trans_b, first.m, first.n, first.k) == ("N", "N", 1024, 384, 1024)
    assert (first.batch, first.lda, first.ldb, first.ldc) == (64, 1024, 1024, 1024)
    assert first.config.startswith("./rocblas-bench -f gemm_strided_batched_ex --transposeA N")
    gemm_ex = [c for c in calls if c.op == "gemm_ex"]
    assert len(gemm_ex) == 6 and all(c.batch == 1 for c in gemm_ex)
    assert [c.trans_a for c in calls].count("T") == 2


def test_rocblas_bench_amid_trace_miopen_and_abort_lines() -> None:
    path = reference_log("rocblas-log/legacy-rocm-build_4466_miopen_rocblas_layer3.log")
    calls = list(rocblas.parse(LogLines(path)))
    assert len(calls) == 1  # the trace line (ROCBLAS_LAYER bit 1) is not a bench record
    assert (calls[0].op, calls[0].m, calls[0].n, calls[0].k, calls[0].ldb) == (
        "gemm_ex", 1024, 16, 27, 27,
    )  # fmt: skip
    assert list(miopen.parse(LogLines(path))) == []  # an Info2 line, no driver command


def test_rocblas_profile_entry() -> None:
    # No real ROCBLAS_LAYER=4 file exists publicly; this entry follows rocBLAS's source format
    # (library/src/include/logging.hpp, formats.md §5.1).
    entry = (
        '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, '
        'a_type: "bf16_r", b_type: "bf16_r", c_type: "bf16_r", d_type: "bf16_r", '
        "compute_type: \"f32_r\", transA: 'T', transB: 'N', M: 12288, N: 4547, K: 4608, "
        "alpha: 1.0, lda: 4608, beta: 0.0, ldb: 4608, ldc: 12288, ldd: 12288, batch_count: 1, "
        "algo: 0, solution_index: 0, flags: none, call_count: 136 }"
    )
    (call,) = rocblas.parse([entry + "\n"])
    assert (call.library, call.calls, call.op, call.dtype, call.compute_type) == (
        "rocblas_function", 136, "gemm_ex", "bf16", "f32",
    )  # fmt: skip
    assert (call.trans_a, call.trans_b, call.m, call.n, call.k, call.lda, call.ldc) == (
        "T", "N", 12288, 4547, 4608, 4608, 12288,
    )  # fmt: skip


def test_hipblaslt_bench_line_amid_program_output() -> None:
    path = reference_log("hipblaslt-log/readme_hipblaslt_test.mask32_bench.stdout.head.log")
    (call,) = hipblaslt.parse(LogLines(path))
    assert (call.op, call.dtype, call.compute_type, call.trans_a, call.trans_b) == (
        "matmul", "bf16", "f32", "N", "T",
    )  # fmt: skip
    assert (call.m, call.n, call.k, call.batch, call.lda, call.ldb, call.ldc) == (
        48, 176, 1024, 1, 48, 176, 48,
    )  # fmt: skip
    assert "  " not in call.config and call.config.endswith("--activation_type none")


def test_hipblaslt_api_and_trace_lines_are_not_bench_records() -> None:
    path = reference_log("hipblaslt-log/readme_hipblaslt_test.mask5_level5.stdout.log")
    assert list(hipblaslt.parse(LogLines(path))) == []


def test_hipblaslt_qwen3_log() -> None:
    # 65 bench lines = 5 passes over 13 GEMM shapes (PROVENANCE.md).
    path = reference_log("hipblaslt-log/Qwen3-32B_hipblaslt.log")
    calls = list(hipblaslt.parse(LogLines(path)))
    rows = aggregate(calls)
    assert len(calls) == 65 and len(rows) == 13
    assert {r.calls for r in rows} == {5}


def test_tensile_kernel_name_from_a_real_trace() -> None:
    # No real TENSILE_DB log exists; the kernel name is a real one, recorded in an RPD trace.
    blob = reference_log("rpd/matmul_result.rpd").read_bytes()
    name = re.search(rb"Cijk_[A-Za-z0-9_]+", blob)
    assert name is not None
    (call,) = tensile.parse([f"Running kernel: {name.group().decode()}\n"])
    assert (call.library, call.op, call.dtype, call.compute_type) == (
        "tensile",
        "gemm",
        "f32",
        "f32",
    )
    assert (call.trans_a, call.trans_b) == ("N", "N")
    assert call.config.startswith("Cijk_Ailk_Bljk_SB_MT128x64x16")


def test_tensile_layouts_and_types() -> None:
    half = tensile.kernel_call("Cijk_Alik_Bjlk_HHS_BH_MT64x64x32_SN")
    assert (half.trans_a, half.trans_b, half.dtype, half.compute_type) == ("T", "T", "f16", "f32")
    assert tensile.kernel_call("Cijk_Ailk_Bljk_BBS_BH_MT16x16x16").dtype == "bf16"
    assert tensile.kernel_call("not_a_tensile_kernel").op == "kernel"


def test_miopen_driver_commands_windows_build() -> None:
    path = reference_log("miopen-log/therock_1899_windows_gfx1150_excerpt.log")
    calls = list(miopen.parse(LogLines(path)))
    (row,) = aggregate(calls)
    assert row.calls == 2 and row.op == "conv_fwd" and row.dtype == "f32"
    assert row.config.startswith("MIOpenDriver.exe conv -n 32 -c 64 -H 256 -W 256")
    assert row.conv == ConvShape(
        n=32, c=64, h=256, w=256, k=64, y=3, x=3, pad_h=1, pad_w=1, stride_h=1, stride_w=1,
        dilation_h=1, dilation_w=1, groups=1, direction="fwd", layout="NHWC",
    )  # fmt: skip


def test_miopen_user_command_line_is_not_a_log_record() -> None:
    # The excerpt starts with the command the user typed and holds only Info lines.
    path = reference_log("miopen-log/rocm-libraries_pr3522_mi300x_driver_info_excerpt.log")
    assert list(miopen.parse(LogLines(path))) == []


def test_miopen_verbs_and_long_options() -> None:
    line = "MIOpen: Command [LogCmdConvolution] ./bin/MIOpenDriver convbfp16 --batchsize 8 --forw 4"
    (call,) = miopen.parse([line + "\n"])
    assert (call.op, call.dtype) == ("conv_bwd_weight", "bf16")
    assert call.conv is not None and call.conv.n == 8
    (bnorm,) = miopen.parse(
        ["MIOpen(HIP): Command [LogCmdBNorm] ./bin/MIOpenDriver bnormfp16 -n 4\n"]
    )
    assert (bnorm.op, bnorm.dtype, bnorm.conv) == ("bnormfp16", "f16", None)
