"""Vendor bench binaries: command lines built from real logged configs (checked against the
logged lines themselves), output parsers, and runs of the fake binaries in tests/fakes/bin
(ok, missing, crash, failure, timeout, no result).

No real rocblas-bench / hipblaslt-bench / MIOpenDriver / nccl-tests output exists in
../shared/reference/; the parser inputs below are reproduced from the tools' documented formats
(rocBLAS and hipBLAS client docs, the hipBLASLt client docs, MIOpenDriver's printf formats in
MIOpen's driver/conv_driver.hpp, nccl-tests' result table), with numbers of our own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gpuscope.libperf import configs, vendor_bench
from gpuscope.libperf.configs import Comm, Conv, Gemm
from gpuscope.libperf.vendor_bench import OutputError
from tests.unit.libperf.conftest import configs_of, trace_from_lines, trace_from_logs
from tests.unit.libtrace.conftest import reference_log

ROCBLAS = "rocblas-log/legacy-rocm-build_4466_miopen_rocblas_layer3.log"
HIPBLASLT = "hipblaslt-log/readme_hipblaslt_test.mask32_bench.stdout.head.log"
MIOPEN = "miopen-log/therock_1899_windows_gfx1150_excerpt.log"
NCCL = "nccl-rccl-log/h200x2_nccl2.28.9_torch2.11_COLL.log"
FAKE_BIN = Path(__file__).resolve().parents[2] / "fakes" / "bin"


def logged_line(relative: str, marker: str) -> str:
    line = next(x for x in reference_log(relative).read_text().splitlines() if marker in x)
    return line[line.index(marker) :].strip()


def opts(tokens: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`-m 1 --lda 2` → {"m": "1", "lda": "2"}: a plain loop, apart from the code under test."""
    out, i = {}, 0
    while i < len(tokens):
        if tokens[i].startswith("-") and i + 1 < len(tokens):
            out[tokens[i].lstrip("-")] = tokens[i + 1]
            i += 2
        else:
            i += 1
    return out


def one(found: list[configs.Config]) -> configs.Config:
    assert len(found) == 1
    return found[0]


# ---------------------------------------------------------------------------------------------
# command lines


def test_rocblas_and_hipblaslt_lines_run_as_logged(tmp_path: Path) -> None:
    line = logged_line(ROCBLAS, "./rocblas-bench")
    config = one(configs_of(trace_from_logs(tmp_path, ROCBLAS)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    rocblas, hipblaslt = commands
    assert list(rocblas.args) == line.split()[1:]
    # the same GEMM for hipblaslt-bench, built from the fields: the logged sizes and layout
    logged, built = opts(line.split()[1:]), opts(hipblaslt.args)
    for ours, theirs in (("m", "m"), ("n", "n"), ("k", "k"), ("lda", "lda"), ("ldb", "ldb"),
                         ("ldc", "ldc"), ("transA", "transposeA"), ("transB", "transposeB"),
                         ("a_type", "a_type"), ("compute_type", "compute_type")):  # fmt: skip
        assert built[ours] == logged[theirs], ours
    hip_line = logged_line(HIPBLASLT, "hipblaslt-bench")
    config = one(configs_of(trace_from_logs(tmp_path, HIPBLASLT)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    assert list(commands[1].args) == hip_line.split()[1:]


def test_rocblas_profile_entry_is_built_into_the_logged_bench_line(tmp_path: Path) -> None:
    line = logged_line(ROCBLAS, "./rocblas-bench")
    profile = (
        '- { rocblas_function: "rocblas_gemm_ex", atomics_mode: atomics_allowed, a_type: '
        '"f32_r", b_type: "f32_r", c_type: "f32_r", d_type: "f32_r", compute_type: "f32_r", '
        "transA: 'N', transB: 'N', M: 1024, N: 16, K: 27, alpha: 1.0, lda: 1024, beta: 0.0, "
        "ldb: 27, ldc: 1024, ldd: 1024, batch_count: 1, algo: 0, solution_index: 0, "
        "flags: none, call_count: 5 }"
    )
    config = one(configs_of(trace_from_lines(tmp_path, "rocblas_profile.yaml", [profile])))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    built = opts(commands[0].args)
    logged = opts(line.split()[1:])
    keys = ("f", "transposeA", "transposeB", "m", "n", "k", "a_type", "lda", "b_type", "ldb",
            "beta", "c_type", "ldc", "d_type", "ldd", "compute_type")  # fmt: skip
    assert {k: built[k] for k in keys} == {k: logged[k] for k in keys}


def test_strided_batched_gemm_is_built_with_its_strides() -> None:
    g = Gemm("bf16", "f32", "T", "N", 384, 384, 64, batch=1024, lda=64, ldb=64, ldc=384,
             stride_a=24576, stride_b=24576, stride_c=147456)  # fmt: skip
    config = configs.Config(g, 1, "hipblaslt", "", ("hipblaslt",))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    roc, hip = (opts(c.args) for c in commands)
    assert roc["f"] == "gemm_strided_batched_ex" and roc["batch_count"] == "1024"
    assert (roc["stride_a"], roc["stride_b"], roc["stride_c"], roc["stride_d"]) == (
        "24576", "24576", "147456", "147456",
    )  # fmt: skip
    assert (hip["stride_a"], hip["batch_count"], hip["a_type"]) == ("24576", "1024", "bf16_r")


def test_miopen_command_gets_timing_on_and_the_cpu_check_off(tmp_path: Path) -> None:
    line = logged_line(MIOPEN, "MIOpenDriver.exe")
    config = one(configs_of(trace_from_logs(tmp_path, MIOPEN)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    assert list(commands[0].args) == [*line.split()[1:], "-V", "0"]  # `-t 1` already there


def test_nccl_tests_commands_from_the_real_nccl_log(tmp_path: Path) -> None:
    text = reference_log(NCCL).read_text()
    assert "[nranks=2]" in text
    found = configs_of(trace_from_logs(tmp_path, NCCL))
    lines = {}
    for c in found:
        commands = vendor_bench.commands_for(c)
        assert isinstance(commands, list)
        lines[(commands[0].binary, opts(commands[0].args)["b"])] = opts(commands[0].args)
    # nccl-tests sizes: the buffer for all-reduce / broadcast, the whole gathered / scattered
    # buffer (count × element size × ranks) for all-gather and reduce-scatter
    assert lines[("all_reduce_perf", str(1048576 * 4))]["d"] == "float"
    assert lines[("all_reduce_perf", str(4096 * 2))]["o"] == "max"
    assert lines[("all_gather_perf", str(4096 * 4 * 2))]["g"] == "2"
    assert lines[("reduce_scatter_perf", str(4096 * 4 * 2))]["o"] == "sum"
    broadcast = lines[("broadcast_perf", str(1000 * 2))]
    assert (broadcast["d"], broadcast["r"], broadcast["e"]) == ("half", "0", "2000")


def test_nvidia_gemms_have_no_vendor_binary_and_rank_count_is_needed() -> None:
    nvidia = configs.Config(Gemm("f32", "f32", "N", "N", 8, 8, 8), 1, "cublas", "", ("cublas",))
    assert vendor_bench.commands_for(nvidia) == []
    no_ranks = configs.Config(Comm("AllReduce", 8, "f32", "sum", None, 0), 1, "nccl", "", ("nccl",))
    assert vendor_bench.commands_for(no_ranks) == "the log does not give the rank count"


# ---------------------------------------------------------------------------------------------
# parsers (outputs reproduced from the documented formats, see the module doc)


def gemm_config(m: int, n: int, k: int) -> configs.Config:
    return configs.Config(Gemm("f32", "f32", "N", "N", m, n, k), 1, "rocblas", "", ("rocblas",))


def test_rocblas_bench_output() -> None:
    output = (
        "rocBLAS info: maximum library size per device is 0.65 GB.\n"
        "transA,transB,M,N,K,alpha,lda,ldb,beta,ldc,rocblas-Gflops,us\n"
        "N,N,4096,4096,4096,1,4096,4096,0,4096,11941.5,11509.4\n"
    )
    parsed = vendor_bench.parse_rocblas(output, gemm_config(4096, 4096, 4096))
    assert parsed.time_us == 11509.4 and parsed.tool_rate == "rocblas-Gflops 11941.5"
    newer = (
        "transA,transB,M,N,K,alpha,lda,beta,ldb,ldc,ldd,batch_count,rocblas-Gflops,"
        "rocblas-GB/s,us\nT,N,1024,384,1024,1,1024,0,1024,1024,1024,64,98765.4,321.0,512.25\n"
    )
    assert vendor_bench.parse_rocblas(newer, gemm_config(1, 1, 1)).time_us == 512.25


def test_hipblaslt_bench_output_old_and_new_headers() -> None:
    old = (
        "transA,transB,M,N,K,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,"
        "d_type,compute_type,activation_type,bias_vector,hipblaslt-Gflops,us\n"
        "N,N,128,128,128,1,128,16384,0,128,16384,128,16384,128,16384,f32_r,f32_r,none,0, "
        "415.278, 10.1\n"
    )
    assert vendor_bench.parse_hipblaslt(old, gemm_config(128, 128, 128)).time_us == 10.1
    new = (
        "Is supported 1 / Total solutions: 1\n"
        "[0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,"
        "ldc,stride_c,ldd,stride_d,a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,"
        "activation_type,bias_vector,bias_type,hipblaslt-Gflops,hipblaslt-GB/s,us\n"
        "    N,T,0,1,3584,512,2048,1,3584,7340032,0,512,1048576,3584,1835008,3584,1835008,"
        "bf16_r,bf16_r,bf16_r,bf16_r,f32_r,0,0,none,0,bf16_r,320000,800.5,23.25\n"
        "    --Solution index: 300119\n"
    )
    parsed = vendor_bench.parse_hipblaslt(new, gemm_config(3584, 512, 2048))
    assert parsed.time_us == 23.25 and parsed.tool_rate == "hipblaslt-Gflops 320000"


def test_miopen_driver_output_per_direction() -> None:
    conv = Conv("f32", 32, 64, 56, 56, 64, 3, 3, (1, 1), (1, 1), (1, 1), 1, "all", "NCHW")
    output = (
        "MIOpenDriver conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 0 -t 1\n"
        "MIOpen Forward Conv. Algorithm: 1\n"
        "GPU Kernel Time Forward Conv. Elapsed: 0.083398 ms (average)\n"
        "stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, "
        "timeMs\n"
        "stats: fwd-conv3x3u1, 32, 64, 56, 56, 3, 3, 64,  7398752256, 0, 0, 88716, 309, "
        "0.083398\n"
        "GPU Kernel Time Backward Data Conv. Elapsed: 0.100000 ms (average)\n"
        "GPU Kernel Time Backward Weights Conv. Elapsed: 0.150000 ms (average)\n"
    )
    config = configs.Config(conv, 1, "miopen", "", ("miopen",))
    parsed = vendor_bench.parse_miopen(output, config)
    assert parsed.time_us == pytest.approx((0.083398 + 0.1 + 0.15) * 1000)
    assert parsed.tool_rate == "MIOpen GFLOPs 88716"
    fwd = configs.Config(
        Conv("f32", 32, 64, 56, 56, 64, 3, 3, (1, 1), (1, 1), (1, 1), 1, "fwd", "NCHW"),
        1, "miopen", "", ("miopen",),
    )  # fmt: skip
    assert vendor_bench.parse_miopen(output, fwd).time_us == pytest.approx(83.398)
    weights_only = "GPU Kernel Time Backward Weights Conv. Elapsed: 0.012380 ms (average)\n"
    with pytest.raises(OutputError, match="Forward Conv"):
        vendor_bench.parse_miopen(weights_only, fwd)


def test_nccl_tests_output_with_a_launcher_prefix() -> None:
    c = Comm("AllReduce", 1048576, "f32", "sum", 8, 0)
    config = configs.Config(c, 1, "nccl", "", ("nccl",))
    header = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
    )
    rows = (
        "     2097152        524288     float     sum      -1    123.4   17.01   29.76      0"
        "    123.0   17.05   29.84      0\n"
        "     4194304       1048576     float     sum      -1    234.5   17.89   31.30      0"
        "    230.1   18.23   31.90      0\n"
    )
    parsed = vendor_bench.parse_nccl_tests(header + rows, config)
    assert parsed.time_us == 234.5 and parsed.tool_rate == "busbw 31.30 GB/s"
    prefixed = "".join(f"[1,0]<stdout>:{line}\n" for line in (header + rows).splitlines())
    assert vendor_bench.parse_nccl_tests(prefixed, config).time_us == 234.5
    with pytest.raises(OutputError, match="no nccl-tests result table"):
        vendor_bench.parse_nccl_tests("# nThread 1 nGpus 8\n", config)


# ---------------------------------------------------------------------------------------------
# runs of the fake binaries


def fake(name: str) -> str | None:
    path = FAKE_BIN / name
    return str(path) if path.is_file() else None


@pytest.fixture
def fake_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "tools.log"
    monkeypatch.setenv("FAKE_TOOL_LOG", str(log))
    monkeypatch.delenv("FAKE_BENCH_MODE", raising=False)
    return log


def test_a_fake_rocblas_bench_run_is_timed_from_its_output(tmp_path: Path, fake_log: Path) -> None:
    config = one(configs_of(trace_from_logs(tmp_path, ROCBLAS)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    result = vendor_bench.run(commands[0], config, 30, which=fake)
    assert result.status == "ok" and result.mode == "binary mean"
    assert result.time_us == pytest.approx(2 * 1024 * 16 * 27 / 5e7, rel=1e-5)  # the fake's rate
    assert result.command.split()[1:] == logged_line(ROCBLAS, "./rocblas-bench").split()[1:]
    assert '"-m", "1024"' in fake_log.read_text()


@pytest.mark.parametrize(
    ("mode", "status"),
    [
        ("crash", r"failed: killed by SIGSEGV"),
        ("fail", r"failed: exit 1: hipblaslt-bench: error: invalid problem size"),
        ("garbage", r"failed: no CSV line with 'hipblaslt-Gflops' in the output"),
        ("hang", r"failed: timeout after 1 s"),
    ],
)
def test_a_misbehaving_binary_is_a_failed_row(
    tmp_path: Path, fake_log: Path, monkeypatch: pytest.MonkeyPatch, mode: str, status: str
) -> None:
    monkeypatch.setenv("FAKE_BENCH_MODE", f"hipblaslt-bench={mode}")
    config = one(configs_of(trace_from_logs(tmp_path, HIPBLASLT)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    result = vendor_bench.run(commands[1], config, 1, which=fake)
    assert re.fullmatch(status, result.status), result.status
    assert result.time_us is None and result.command.startswith(str(FAKE_BIN))


def test_a_missing_binary_is_not_found(tmp_path: Path) -> None:
    config = one(configs_of(trace_from_logs(tmp_path, ROCBLAS)))
    commands = vendor_bench.commands_for(config)
    assert isinstance(commands, list)
    result = vendor_bench.run(commands[0], config, 30, which=lambda name: None)
    assert result.status == "not found: rocblas-bench not on PATH"
    assert result.command.startswith("rocblas-bench -f gemm_ex")
    assert os.environ.get("FAKE_BENCH_MODE") is None
