"""The torch replay with a stand-in torch (tests/unit/libperf/standin_torch.py): the operands it
builds from a logged GEMM are the ones the logging program passed to torch (shapes and strides
from ../shared/reference/formats/_nvidia_device_gen/blas_work.py, worked out by hand), the right
call for bias / beta / batch, the FLOPs handed to gpuscope.bench, and failures as rows."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuscope.libperf import configs
from gpuscope.libperf.configs import Comm, Conv, Gemm, Opaque
from gpuscope.libperf.torch_replay import TorchReplay
from tests.unit.libperf import standin_torch
from tests.unit.libperf.conftest import configs_of, trace_from_lines, trace_from_logs

CUBLAS = "cublas-log/cublas_api.log"
CUBLASLT = "cublaslt-log/cublaslt_L5_774.log"


class Bench:
    """gpuscope.bench's stand-in: runs the callable once, records the options."""

    def __init__(self, us: float = 10.0) -> None:
        self.us = us
        self.options: list[dict[str, Any]] = []

    def __call__(self, fn: Any, **options: Any) -> Any:
        fn()
        self.options.append(options)
        return SimpleNamespace(
            median_us=self.us, samples_us=(self.us,) * 3, mode="kernel", kernel_names=("k1",)
        )


def config(problem: configs.Problem, accumulate: bool = False) -> configs.Config:
    return configs.Config(problem, 1, "x", "x", ("x",), accumulate=accumulate)


def replay_all(found: list[configs.Config], allocations: int = 1) -> tuple[Any, Bench, list[Any]]:
    torch, bench = standin_torch.make(), Bench()
    replay = TorchReplay(torch, bench=bench, allocations=allocations)
    results = [r for c in found for r in replay.run(c)]
    return torch, bench, results


def test_gemms_are_rebuilt_as_the_program_ran_them(tmp_path: Path) -> None:
    found = configs_of(trace_from_logs(tmp_path, CUBLAS, CUBLASLT))
    torch, bench, results = replay_all(found)
    assert [r.status for r in results] == ["ok"] * 4
    assert all(r.kernels == ("k1",) for r in results)  # what the harness profiled
    seen = {(name, len(args)): args for name, args, _ in torch.calls}
    # a[256x512] @ b[512x128], contiguous (f32 and f16)
    mms = [args for name, args, _ in torch.calls if name == "mm"]
    assert [(x.shape, x.stride(), y.shape, y.stride()) for x, y in mms] == [
        ((256, 512), (512, 1), (512, 128), (128, 1))
    ] * 2
    assert [x.dtype for x, _ in mms] == ["float32", "float16"]
    # torch.bmm(x[8,64,32], y[8,32,16])
    x, y = seen[("bmm", 2)]
    assert (x.shape, x.stride(), y.shape, y.stride()) == (
        (8, 64, 32), (2048, 32, 1), (8, 32, 16), (512, 16, 1),
    )  # fmt: skip
    # Linear(512, 256)(a[256x512]) = addmm(bias[256], a, W[256x512].t())
    bias, a, w = seen[("addmm", 3)]
    assert (bias.shape, a.shape, a.stride(), w.shape, w.stride()) == (
        (256,), (256, 512), (512, 1), (512, 256), (1, 512),
    )  # fmt: skip
    flops = sorted(o["flops"] for o in bench.options)
    assert flops == sorted([2.0 * 256 * 128 * 512] * 2 + [2.0 * 8 * 64 * 16 * 32, 2.0 * 256**3 * 2])
    assert all(o["peaks"] is False for o in bench.options)
    assert all(o["state"] == "burst" for o in bench.options)  # libperf's default power state


def test_beta_epilogues_and_tf32() -> None:
    g = Gemm("f32", "tf32", "N", "T", 64, 32, 16, lda=64, ldb=32, ldc=64)
    torch, _, results = replay_all([config(g, accumulate=True)])
    ((name, (c, left, right), _),) = torch.calls
    assert name == "addmm" and c.shape == (32, 64)
    assert (left.shape, left.stride(), right.shape) == ((32, 16), (1, 32), (16, 64))
    assert results[0].ok and torch.backends.cuda.matmul.allow_tf32 is False  # restored
    relu = Gemm("bf16", "f32", "T", "N", 64, 32, 16, epilogue="relu_bias")
    torch, _, _ = replay_all([config(relu)])
    assert torch.calls[0][0] == "_addmm_activation" and torch.calls[0][2] == {"use_gelu": False}
    other = Gemm("bf16", "f32", "N", "N", 64, 32, 16, epilogue="bgradb")
    _, _, results = replay_all([config(other)])
    assert "epilogue bgradb not replayed" in results[0].note


def test_padded_leading_dimension_and_broadcast_batch_stride() -> None:
    g = Gemm("f16", "f32", "N", "N", 10, 4, 6, batch=3, lda=16, ldb=8, stride_a=0, stride_b=40)
    torch, _, results = replay_all([config(g)])
    ((_, (left, right), _),) = torch.calls
    assert (right.shape, right.stride()) == ((3, 6, 10), (0, 16, 1))  # A shared by the batch
    assert (left.shape, left.stride()) == ((3, 4, 6), (40, 8, 1))
    assert results[0].ok


class Draws(Bench):
    """A bench whose median differs per call (one operand allocation each), as on an H100."""

    def __init__(self, medians: list[float], kernels: list[tuple[str, ...]]) -> None:
        super().__init__()
        self.medians, self.kernels = medians, kernels

    def __call__(self, fn: Any, **options: Any) -> Any:
        fn()
        self.options.append(options)
        i = len(self.options) - 1
        if isinstance(self.medians[i], Exception):
            raise self.medians[i]
        us = self.medians[i]
        return SimpleNamespace(median_us=us, samples_us=(us, us), mode="kernel",
                               kernel_names=self.kernels[i])  # fmt: skip


def test_each_gemm_is_the_median_over_fresh_operand_allocations() -> None:
    g = Gemm("bf16", "f32", "N", "T", 2048, 512, 2048, lda=2048, ldb=512, ldc=2048)
    torch = standin_torch.make()
    # measured per-allocation medians of this shape on an H100 (benchmarks/libperf_alloc_probe.py)
    bench = Draws([9.66, 9.03, 8.96], [("nvjet_NTT",)] * 3)
    (result,) = TorchReplay(torch, bench=bench, budget_s=0.6, allocations=3).run(config(g))
    assert result.time_us == 9.03 and result.kernels == ("nvjet_NTT",)
    assert len(result.samples_us) == 6
    assert "median of 3 operand allocations: 9.660 / 9.030 / 8.960 µs" in result.note
    assert [o["budget_s"] for o in bench.options] == pytest.approx([0.2] * 3)
    assert [o["warmup_budget_s"] for o in bench.options] == pytest.approx([0.5, 0.1, 0.1])
    # the first allocation chose kernel mode ("auto"); the next ones skip the hot run
    assert [o.get("mode") for o in bench.options] == [None, "kernel", "kernel"]
    # three operand sets, all alive at once (so each lands at new addresses)
    lefts = [args[0] for name, args, _ in torch.calls if name == "mm"]
    assert len(lefts) == 3 and len({id(t) for t in lefts}) == 3
    # a later allocation that fails keeps what was measured and says so; differing kernels too
    failing = Draws([9.0, RuntimeError("CUDA out of memory\nmore"), 1.0], [("a",), ("b",), ()])
    (kept,) = TorchReplay(standin_torch.make(), bench=failing, allocations=3).run(config(g))
    assert kept.ok and kept.time_us == 9.0
    assert kept.note == "allocation 2 failed (RuntimeError: CUDA out of memory)"
    differing = Draws([5.0, 6.0], [("a",), ("b",)])
    (both,) = TorchReplay(standin_torch.make(), bench=differing, allocations=2).run(config(g))
    assert both.time_us == 5.5 and both.kernels == ("a",)
    assert "kernels differ between allocations: a | b" in both.note


def test_convolutions_and_what_is_not_replayed() -> None:
    conv = Conv("f16", 2, 8, 16, 16, 4, 3, 3, (1, 1), (2, 2), (1, 1), 2, "bwd_weight", "NHWC")
    torch, _, results = replay_all([config(conv)])
    name, args, _ = torch.calls[0]
    assert name == "convolution_backward" and args[-1] == [False, True, False]
    dy, x, w = args[:3]
    assert (dy.shape, x.shape, w.shape, x.fmt) == (
        (2, 4, 8, 8), (2, 8, 16, 16), (4, 4, 3, 3), "channels_last",
    )  # fmt: skip
    assert results[0].ok
    skipped = [
        config(Opaque("tensile", "Cijk_…", "Tensile kernel names carry no sizes")),
        config(Gemm("f8", "f32", "N", "N", 16, 16, 16)),
        config(Comm("AllReduce", 1024, "f32", "sum", 2, 0)),
    ]
    _, _, results = replay_all(skipped)
    assert [r.status for r in results] == [
        "skipped: Tensile kernel names carry no sizes",
        "skipped: no PyTorch replay for a GEMM of type f8",
        "skipped: no process group",
    ]


def test_a_backend_error_is_a_failed_row_and_the_next_config_runs() -> None:
    torch, bench = standin_torch.make(), Bench()

    def boom(*args: Any) -> Any:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore text")

    torch.mm = boom
    replay = TorchReplay(torch, bench=bench, allocations=1)
    bad = replay.run(config(Gemm("f32", "f32", "N", "N", 4, 4, 4)))
    good = replay.run(config(Gemm("f32", "f32", "N", "N", 4, 4, 4, batch=2)))
    assert bad[0].status == "failed: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert good[0].ok


def test_a_3d_miopen_convolution_is_replayed_with_conv3d(tmp_path: Path) -> None:
    # MIOpenDriver's 3-D flags (--spatial_dim 3, --in_d, --fil_d, --pad_d, --conv_stride_d,
    # --dilation_d), as MIOpen logs them for a 3-D problem
    line = (
        "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver convfp16 -n 2 -c 4 "
        "--in_d 8 -H 16 -W 16 -k 6 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --conv_stride_d 2 "
        "-u 1 -v 1 --dilation_d 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1 --spatial_dim 3"
    )
    found = configs_of(trace_from_lines(tmp_path, "libtrace_stderr.log", [line]))
    conv = found[0].problem
    assert isinstance(conv, Conv)
    assert (conv.d, conv.z, conv.pad, conv.stride) == (8, 3, (1, 1, 1), (2, 1, 1))
    assert conv.out_spatial == ((8 + 2 - 2 - 1) // 2 + 1, 16, 16)
    torch, _, results = replay_all(found)
    name, (x, w, *_), _ = torch.calls[0]
    assert name == "conv3d" and x.shape == (2, 4, 8, 16, 16) and w.shape == (6, 4, 3, 3, 3)
    assert results[0].ok


class Dist:
    """torch.distributed's stand-in: a world of `size`, collectives recorded."""

    ReduceOp = SimpleNamespace(SUM="sum", PRODUCT="prod", MAX="max", MIN="min", AVG="avg")

    def __init__(self, size: int) -> None:
        self.size = size
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def get_world_size(self) -> int:
        return self.size

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))


def test_collectives_through_torch_distributed_buffers_and_rank_checks() -> None:
    from gpuscope.libperf.torch_replay import collective_call

    torch, dist = standin_torch.make(), Dist(4)
    gather = collective_call(torch, dist, Comm("AllGather", 1024, "bf16", "sum", 4, 0))
    gather.fn()
    name, (out, inp), _ = dist.calls[-1]
    assert name == "all_gather_into_tensor" and (out.shape, inp.shape) == ((4096,), (1024,))
    scatter = collective_call(torch, dist, Comm("ReduceScatter", 1024, "f32", "max", 4, 0))
    scatter.fn()
    name, (out, inp), kwargs = dist.calls[-1]
    assert (name, out.shape, inp.shape, kwargs) == ("reduce_scatter_tensor", (1024,), (4096,),
                                                   {"op": "max"})  # fmt: skip
    replay = TorchReplay(torch, bench=Bench(), group=dist)
    other = replay.run(config(Comm("AllReduce", 8, "f32", "sum", 2, 0)))
    assert other[0].status == "skipped: logged with 2 ranks; this process group has 4"
    send = replay.run(config(Comm("Send", 8, "f32", "sum", 4, 1)))
    assert send[0].status == "skipped: Send is not replayed through torch.distributed"
