"""NCCL/RCCL, cuBLAS, cuBLASLt and cuDNN parsers on the real logs (goldens counted by hand)."""

from __future__ import annotations

from gpuscope.libtrace import cublas, cublaslt, cudnn, nccl
from gpuscope.libtrace.call import LibraryCall
from gpuscope.libtrace.logfile import LogLines
from gpuscope.libtrace.table import aggregate
from tests.unit.libtrace.conftest import reference_log


def _nccl(relative: str) -> list[LibraryCall]:
    return list(nccl.parse(LogLines(reference_log(relative))))


def test_nccl_coll_log_two_ranks() -> None:
    calls = _nccl("nccl-rccl-log/h200x2_nccl2.28.9_torch2.11_COLL.log")
    rows = aggregate(calls)
    assert len(calls) == 12 and len(rows) == 6 and {r.calls for r in rows} == {2}
    big = rows[0].collective
    assert big is not None
    assert (big.name, big.count, big.datatype, big.reduce_op, big.nranks, big.bytes) == (
        "AllReduce", 1048576, "f32", "sum", 2, 4194304,
    )  # fmt: skip
    assert [r.op for r in rows] == [
        "AllReduce", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AllReduce",
    ]  # fmt: skip
    assert rows[1].config == "AllReduce count 4096 datatype bf16 op max root 0 nranks 2"


def test_nccl_default_subsystems_log_no_collectives() -> None:
    assert _nccl("nccl-rccl-log/h200x2_nccl2.28.9_torch2.11_INFO_default.log") == []


def test_nccl_interleaved_and_prefixless_records() -> None:
    calls = _nccl("nccl-rccl-log/nvidia-nccl_147_interleaved_broadcast_excerpt.log")
    assert len(calls) == 6
    assert {c.collective.count for c in calls if c.collective} == {53, 25503912}
    assert calls[0].dtype == "i64" and calls[2].dtype == "f16"


def test_nccl_launcher_prefixed_lines() -> None:
    calls = _nccl("nccl-rccl-log/nvidia-nccl_1193_ray_prefixed_excerpt.log")
    rows = aggregate(calls)
    assert len(calls) == 4 and [r.calls for r in rows] == [2, 2]
    assert all(r.collective and r.collective.nranks == 128 for r in rows)


def test_nccl_send_recv_peer() -> None:
    calls = _nccl("nccl-rccl-log/nvidia-nccl_584_send_recv_excerpt.log")
    assert [c.op for c in calls] == ["Send"] * 6 + ["Recv"]
    assert [c.collective.root for c in calls if c.collective] == [1, 1, 1, 1, 0, 0, 1]


def test_nccl_other_excerpts() -> None:
    assert len(_nccl("nccl-rccl-log/nvidia-nccl_203_tf_2gpu_excerpt.log")) == 7
    calls = _nccl("nccl-rccl-log/pytorch-torchtitan_1369_hopper_tp_excerpt.log")
    assert [c.op for c in calls].count("AllGather") == 3 and len(calls) == 7


def test_rccl_suffix_from_source() -> None:
    # RCCL appends `task N globalrank N` (ROCm/rccl src/enqueue.cc); no public log shows it.
    line = (
        "node:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 acc (nil) count 8 "
        "datatype 9 op 4 root 0 comm 0x2 [nranks=8] stream 0x3 task 0 globalrank 3\n"
    )
    (call,) = nccl.parse([line], library="rccl")
    assert call.library == "rccl" and call.collective is not None
    assert (call.collective.datatype, call.collective.reduce_op, call.collective.bytes) == (
        "bf16", "avg", 16,
    )  # fmt: skip
    assert nccl.looks_like_rccl(line)


def test_cublas_api_log() -> None:
    calls = list(cublas.parse(LogLines(reference_log("cublas-log/cublas_api.log"))))
    assert [c.op for c in calls] == ["gemm", "gemm_ex", "gemm_strided_batched"]
    sgemm, gemm_ex, batched = calls
    assert (
        sgemm.config == "cublasSgemm_v2 transa=N transb=N m=128 n=256 k=512 lda=128 ldb=512 ldc=128"
    )
    assert (sgemm.dtype, sgemm.compute_type, sgemm.m, sgemm.n, sgemm.k) == (
        "f32",
        "f32",
        128,
        256,
        512,
    )
    assert (gemm_ex.dtype, gemm_ex.compute_type) == ("f16", "f32")
    assert "algo=GEMM_DEFAULT_TENSOR_OP" in gemm_ex.config and "POINTER" not in gemm_ex.config
    assert (batched.m, batched.n, batched.k, batched.batch) == (16, 64, 32, 8)


def test_cublas_record_cut_by_a_kill_is_dropped() -> None:
    lines = reference_log("cublas-log/cublas_api.log").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "cublasGemmEx(" in line) + 5
    assert [c.op for c in cublas.parse(lines[:cut])] == ["gemm"]


def test_cublaslt_trace_lines_at_level_5() -> None:
    calls = list(cublaslt.parse(LogLines(reference_log("cublaslt-log/cublaslt_L5_774.log"))))
    assert len(calls) == 4  # Api, Info and AlgoGetHeuristic lines are skipped
    sss, hsh, batched, bias = calls
    assert (sss.dtype, sss.m, sss.n, sss.k, sss.trans_a) == ("f32", 128, 256, 512, "N")
    assert (hsh.dtype, hsh.compute_type) == ("f16", "f32")
    assert (batched.batch, batched.m, batched.n, batched.k) == (8, 16, 64, 32)
    assert (bias.trans_a, bias.m, bias.n, bias.k, bias.lda) == ("T", 256, 256, 512, 512)
    assert "epilogue=EPILOGUE_BIAS]" in bias.config and "0x" not in bias.config.lower()
    assert "algoId=66" in bias.config


def test_cublaslt_other_logs() -> None:
    stdout = reference_log("cublaslt-log/cublaslt_L2_stdout.log")
    assert len(list(cublaslt.parse(LogLines(stdout)))) == 4  # amid the program's own print
    mask6 = reference_log("cublaslt-log/cublaslt_mask6_858.log")
    assert len(list(cublaslt.parse(LogLines(mask6)))) == 4


def test_cudnn_level3_log() -> None:
    calls = list(cudnn.parse(LogLines(reference_log("cudnn-log/cudnn_L3.log"))))
    assert [c.op for c in calls] == ["conv_fwd", "conv_bwd_data", "conv_bwd_weight"]
    assert [c.config.rsplit("engine=", 1)[1] for c in calls] == ["70", "74", "0"]
    fwd = calls[0]
    assert fwd.conv is not None
    assert (fwd.conv.n, fwd.conv.c, fwd.conv.h, fwd.conv.w, fwd.conv.k) == (2, 3, 32, 32, 8)
    assert (fwd.conv.y, fwd.conv.x, fwd.conv.pad_h, fwd.conv.stride_w, fwd.conv.groups) == (
        3, 3, 1, 1, 1,
    )  # fmt: skip
    assert (fwd.conv.layout, fwd.dtype, fwd.compute_type) == ("NCHW", "f32", "f32")
    assert fwd.config.startswith("CONVOLUTION_FORWARD x=[2,3,32,32] w=[8,3,3,3] y=[2,8,32,32]")


def test_cudnn_legacy_info_and_warning_logs() -> None:
    legacy = list(cudnn.parse(LogLines(reference_log("cudnn-log/cudnn_legacy_info.log"))))
    assert [c.op for c in legacy] == ["conv_fwd", "conv_bwd_data", "conv_bwd_weight"]
    assert list(cudnn.parse(LogLines(reference_log("cudnn-log/cudnn_L2.log")))) == []
