"""Dedupe on real library logs (through gpuscope's libtrace, as a user gets library_trace.csv):
one config per problem, calls kept. Expected values come from the programs that produced the
logs (../shared/reference/formats/_nvidia_device_gen/) or from counting the raw lines here."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from gpuscope.errors import InputError
from gpuscope.libperf import configs
from gpuscope.libperf.configs import Comm, Conv, Gemm, Opaque
from tests.unit.libperf.conftest import configs_of, trace_from_lines, trace_from_logs
from tests.unit.libtrace.conftest import reference_log

CUBLAS = "cublas-log/cublas_api.log"
CUBLASLT = "cublaslt-log/cublaslt_L5_774.log"
NCCL = "nccl-rccl-log/h200x2_nccl2.28.9_torch2.11_COLL.log"
MIOPEN = "miopen-log/therock_1899_windows_gfx1150_excerpt.log"
ROCBLAS = "rocblas-log/legacy-rocm-build_4466_miopen_rocblas_layer3.log"
HIPBLASLT = "hipblaslt-log/readme_hipblaslt_test.mask32_bench.stdout.head.log"
CUDNN = "cudnn-log/cudnn_L3.log"


def gemms(found: list[configs.Config]) -> dict[tuple[object, ...], configs.Config]:
    out = {}
    for c in found:
        g = c.problem
        assert isinstance(g, Gemm)
        out[(g.dtype, g.m, g.n, g.k, g.batch, g.epilogue)] = c
    return out


def test_cublas_and_cublaslt_rows_of_one_gemm_are_one_config(tmp_path: Path) -> None:
    # blas_work.py: a[256x512] @ b[512x128] in f32 and f16, bmm x[8,64,32] @ y[8,32,16], and an
    # f16 Linear(512, 256) on a[256x512]; column-major m = columns of the torch result.
    found = gemms(configs_of(trace_from_logs(tmp_path, CUBLAS, CUBLASLT)))
    expected = {
        ("f32", 128, 256, 512, 1, ""), ("f16", 128, 256, 512, 1, ""),
        ("f32", 16, 64, 32, 8, ""), ("f16", 256, 256, 512, 1, "bias"),
    }  # fmt: skip
    assert set(found) == expected
    raw_cublas = re.findall(
        r"function \S+ (cublas\w*[Gg]emm\w*)\(", reference_log(CUBLAS).read_text()
    )
    raw_lt = re.findall(r"\]\[Trace\]\[cublasLt\w*Matmul\]", reference_log(CUBLASLT).read_text())
    assert (len(raw_cublas), len(raw_lt)) == (3, 4)  # 3 + 4 rows, 3 of them the same GEMMs
    for key, config in found.items():
        both = key[-1] == ""
        assert config.libraries == (("cublas", "cublaslt") if both else ("cublaslt",))
        assert config.calls == 1  # logged once by each layer: not added
    batched = found[("f32", 16, 64, 32, 8, "")].problem
    assert isinstance(batched, Gemm)
    # cuBLAS strideA=512 strideB=2048 strideC=1024 = cuBLASLt stridedBatchOffset of A, B, C
    assert (batched.stride_a, batched.stride_b, batched.stride_c) == (16 * 32, 32 * 64, 16 * 64)
    linear = found[("f16", 256, 256, 512, 1, "bias")].problem
    assert isinstance(linear, Gemm) and (linear.trans_a, linear.trans_b) == ("T", "N")


def test_cublaslt_rows_that_differ_only_in_the_algorithm_add_up(tmp_path: Path) -> None:
    line = next(
        x for x in reference_log(CUBLASLT).read_text().splitlines() if "[Trace][cublasLtSSS" in x
    )
    other = line.replace("algoId=20", "algoId=21")
    assert other != line
    path = trace_from_lines(tmp_path, "cublaslt_trace.1.log", [line, other, other])
    found = configs_of(path)
    assert len(found) == 1 and found[0].calls == 3


def test_nccl_two_ranks_keep_one_call_per_rank(tmp_path: Path) -> None:
    text = reference_log(NCCL).read_text()
    raw = Counter(
        (name, int(count), int(dtype))
        for name, count, dtype in re.findall(
            r"(\w+): opCount \w+ sendbuff \S+ recvbuff \S+ count (\d+) datatype (\d+)", text
        )
    )
    found = configs_of(trace_from_logs(tmp_path, NCCL))
    codes = {"f32": 7, "bf16": 9, "f16": 6}
    got = {}
    for c in found:
        p = c.problem
        assert isinstance(p, Comm) and p.nranks == 2
        got[(p.name, p.count, codes[p.dtype])] = c.calls
    assert got == dict(raw)


def test_miopen_repeated_command_is_one_config_with_its_calls(tmp_path: Path) -> None:
    raw = reference_log(MIOPEN).read_text().count("Command [LogCmdConvolution]")
    found = configs_of(trace_from_logs(tmp_path, MIOPEN))
    assert len(found) == 1 and found[0].calls == raw == 2
    conv = found[0].problem
    assert isinstance(conv, Conv)
    # -n 32 -c 64 -H 256 -W 256 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 NHWC -F 1
    assert (conv.n, conv.c, conv.h, conv.w, conv.k, conv.y, conv.x) == (32, 64, 256, 256, 64, 3, 3)
    assert (conv.pad, conv.stride, conv.dilation, conv.layout) == ((1, 1), (1, 1), (1, 1), "NHWC")
    assert conv.direction == "fwd" and conv.out_spatial == (256, 256)
    assert conv.flops == 2.0 * 32 * 64 * 64 * 256 * 256 * 9


def test_cudnn_directions_are_three_configs(tmp_path: Path) -> None:
    # conv_work.py: Conv2d(3, 8, 3, padding=1) on x[2, 3, 32, 32], forward + backward
    found = configs_of(trace_from_logs(tmp_path, CUDNN))
    convs = {c.problem.direction: c.problem for c in found if isinstance(c.problem, Conv)}
    assert set(convs) == {"fwd", "bwd_data", "bwd_weight"}
    for conv in convs.values():
        assert (conv.n, conv.c, conv.h, conv.w, conv.k, conv.y, conv.x) == (2, 3, 32, 32, 8, 3, 3)
        assert conv.out_spatial == (32, 32) and conv.d is None


def test_rocblas_bench_line_and_profile_entry_of_one_gemm_merge(tmp_path: Path) -> None:
    bench = next(x for x in reference_log(ROCBLAS).read_text().splitlines() if "rocblas-bench" in x)
    # rocBLAS's profile YAML (format from its source; no public file): the same GEMM, 5 calls
    profile = (
        '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, a_type: '
        '"f32_r", b_type: "f32_r", c_type: "f32_r", d_type: "f32_r", compute_type: "f32_r", '
        "transA: 'N', transB: 'N', M: 1024, N: 16, K: 27, alpha: 1.0, lda: 1024, beta: 0.0, "
        "ldb: 27, ldc: 1024, ldd: 1024, batch_count: 1, algo: 0, solution_index: 0, "
        "flags: none, call_count: 5 }"
    )
    found = configs_of(trace_from_lines(tmp_path, "rocblas.log", [bench, profile]))
    assert len(found) == 1
    config = found[0]
    assert config.libraries == ("rocblas", "rocblas_function") and config.calls == 5
    assert config.config == bench[bench.index("./rocblas-bench") :]
    assert config.accumulate is False and config.amd


def test_strided_batched_rocblas_lines_keep_their_strides(tmp_path: Path) -> None:
    line = (
        "./rocblas-bench -f gemm_strided_batched_ex --transposeA T --transposeB N -m 384 -n 384 "
        "-k 64 --alpha 1 --a_type f32_r --lda 64 --stride_a 24576 --b_type f32_r --ldb 64 "
        "--stride_b 24576 --beta 0 --c_type f32_r --ldc 384 --stride_c 147456 --d_type f32_r "
        "--ldd 384 --stride_d 147456 --batch_count 1024 --compute_type f32_r --algo 0 "
        "--solution_index 0 --flags 1"
    )
    other = line.replace("--stride_a 24576", "--stride_a 0")
    found = configs_of(trace_from_lines(tmp_path, "rocblas_bench.log", [line, line, other]))
    assert [c.calls for c in found] == [2, 1]
    g = found[0].problem
    assert isinstance(g, Gemm) and (g.stride_a, g.stride_b, g.stride_c) == (24576, 24576, 147456)
    assert g.flops == 2.0 * 384 * 384 * 64 * 1024


def test_madengine_six_column_csv_is_parsed_again(tmp_path: Path) -> None:
    rocblas_line = next(
        x for x in reference_log(ROCBLAS).read_text().splitlines() if "rocblas-bench" in x
    )
    hip_line = next(
        x for x in reference_log(HIPBLASLT).read_text().splitlines() if "hipblaslt-bench" in x
    )
    path = tmp_path / "library_trace.csv"
    path.write_text(
        "jobid,created_date,model,library,config,calls\n"
        f'0,2026-01-01 00:00:00,bert,rocblas,"{rocblas_line}",3\n'
        f'0,2026-01-01 00:00:00,bert,hipblaslt,"{hip_line.strip()}",2\n'
        "0,2026-01-01 00:00:00,bert,tensile,Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1,4\n"
    )
    trace = configs.load(path)
    assert (trace.jobid, trace.model) == ("0", "bert")
    found = configs.dedupe(trace.calls)
    shapes = [(c.problem.m, c.problem.n, c.problem.k, c.calls) for c in found[:2]]
    assert shapes == [(1024, 16, 27, 3), (48, 176, 1024, 2)]  # type: ignore[union-attr]
    tensile = found[2].problem
    assert isinstance(tensile, Opaque) and "no sizes" in tensile.reason


def test_a_file_that_is_not_a_library_trace_is_one_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nothing\.csv: cannot read"):
        configs.load(tmp_path / "nothing.csv")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"other.csv: expected a library_trace.csv .* found no"):
        configs.load(other)
