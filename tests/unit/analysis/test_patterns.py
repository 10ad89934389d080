"""Known slow patterns: each fires on its evidence with the time it costs, stays quiet in the
context where its advice would be wrong (a fused optimizer already in use, TF32 or memory-bound
FP32 GEMMs, too few chains, copies far from any all-reduce), and is recounted on the reference
traces that show it from the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.pipeline import analyze
from gpuscope.document.units import duration
from gpuscope.trace.registry import read_trace
from tests.unit.analysis.conftest import TraceBuilder

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
FOREACH_KERNEL = "void at::native::multi_tensor_apply_kernel<TensorListMetadata<2>, float>()"
SGEMM = "volta_sgemm_128x64_nn"
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
H200_RATIO = 989.5 / 67.0  # dense bf16 tensor peak over plain FP32, H200 SXM datasheet


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.patterns])


def found(a: Analysis) -> dict[str, dict[str, Any]]:
    part = a.to_dict()["patterns"]
    assert part is not None
    return {p["id"]: p for p in part["found"]}


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


def op(b: TraceBuilder, name: str, ts: float, dur: float, **args: Any) -> int:
    ext = b._id()
    b.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100,
                     "ts": ts, "dur": dur, "args": {"External id": ext, **args}})  # fmt: skip
    return ext


def filler(b: TraceBuilder, us: float, at: float = 90_000.0) -> None:
    b.kernel("void at::native::vectorized_elementwise_kernel<4, AddFunctor<float>>()", at, us)


# ---------------------------------------------------------------- foreach optimizer


def optimizer_step(b: TraceBuilder, t: float, kernel_us: float, fused: bool = False) -> None:
    b.annotation("Optimizer.step#AdamW.step", t, 500.0)
    names = ["aten::_fused_adamw_"] if fused else ["aten::_foreach_mul_", "aten::_foreach_add_"]
    for i, name in enumerate(names):
        ext = op(b, name, t + 10 + 200 * i, 150)
        for k in range(6):
            kernel = "fused_adamw_kernel" if fused else FOREACH_KERNEL
            b.launch(kernel, at=t + 20 + 200 * i + 10 * k, start=t + 20 + 200 * i + 20 * k,
                     dur=kernel_us, ext=ext)  # fmt: skip


def test_foreach_optimizer_in_the_step(builder: TraceBuilder, tmp_path: Path) -> None:
    optimizer_step(builder, 0.0, 10.0)
    # clipping's foreach ops before the step are not the optimizer's
    ext = op(builder, "aten::_foreach_norm", 600.0, 50)
    builder.launch(FOREACH_KERNEL, at=610.0, start=620.0, dur=100.0, ext=ext)
    filler(builder, 1280.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 100_000.0))
    pattern = found(a)["foreach-optimizer"]
    time, share = 12 * 10.0, 12 * 10.0 / (12 * 10.0 + 100.0 + 1280.0)
    assert pattern["time_us"] == time and pattern["share"] == pytest.approx(share)
    assert pattern["evidence"]["kernels"] == 12
    assert pattern["evidence"]["ops"] == {"aten::_foreach_mul_": 1, "aten::_foreach_add_": 1}
    assert pattern["evidence"]["optimizers"] == ["AdamW"]
    assert pattern["severity"] == ("warning" if share >= 0.10 else "info") == "info"
    assert "torch.optim.AdamW(params, ..., fused=True)" in pattern["action"]
    assert by_id(a)["foreach-optimizer"]["message"] == pattern["message"]


def test_a_fused_optimizer_is_not_told_to_fuse(builder: TraceBuilder, tmp_path: Path) -> None:
    optimizer_step(builder, 0.0, 10.0, fused=True)
    optimizer_step(builder, 1000.0, 10.0)  # foreach ops too (another param group's optimizer)
    filler(builder, 500.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 100_000.0))
    assert "foreach-optimizer" not in found(a)


def test_too_few_foreach_kernels(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.annotation("Optimizer.step#SGD.step", 0.0, 100.0)
    ext = op(builder, "aten::_foreach_add_", 10.0, 50)
    for k in range(9):  # fires from 10 kernels
        builder.launch(FOREACH_KERNEL, at=12.0 + k, start=30.0 + 20 * k, dur=15.0, ext=ext)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 1000.0))
    assert "foreach-optimizer" not in found(a)


# ---------------------------------------------------------------- unfused normalisation

RMSNORM = ["aten::copy_", "aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul",
           "aten::copy_", "aten::mul"]  # fmt: skip


def rmsnorms(b: TraceBuilder, count: int, chain: list[str] = RMSNORM) -> float:
    """HF LlamaRMSNorm in eager mode: each op launches one 5 µs kernel; a matmul between."""
    t = 0.0
    for _ in range(count):
        for name in chain:
            ext = op(b, name, t, 8)
            b.launch(f"{name}_kernel", at=t + 2, start=t + 4, dur=5.0, ext=ext)
            t += 10
        ext = op(b, "aten::mm", t, 8)
        b.launch("nvjet_gemm", at=t + 2, start=t + 4, dur=5.0, ext=ext)
        t += 10
    return t


def test_unfused_rmsnorm_chains(builder: TraceBuilder, tmp_path: Path) -> None:
    end = rmsnorms(builder, 4)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    pattern = found(a)["unfused-norm"]
    total = 4 * 9 * 5.0  # every kernel of the trace
    assert pattern["evidence"]["chains"] == {"RMSNorm": 4}
    assert pattern["evidence"]["kernels"] == 4 * 8
    assert pattern["time_us"] == 4 * 8 * 5.0
    assert pattern["evidence"]["cast_time_us"] == 4 * 2 * 5.0  # the two copy_ per chain
    assert pattern["share"] == pytest.approx(4 * 8 * 5.0 / total)
    assert pattern["severity"] == "warning"
    assert "8.0 kernels each" in pattern["message"]


@pytest.mark.parametrize(
    ("count", "chain"),
    [(1, RMSNORM), (4, [n for n in RMSNORM if n != "aten::rsqrt"])],
    ids=["one chain", "no rsqrt"],
)
def test_not_a_norm_chain(
    builder: TraceBuilder, tmp_path: Path, count: int, chain: list[str]
) -> None:
    end = rmsnorms(builder, count, chain)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    assert "unfused-norm" not in found(a)


# ---------------------------------------------------------------- channels last


@pytest.mark.parametrize(("transpose_us", "fires"), [(150.0, True), (50.0, False)])
def test_nchw_nhwc_transposes(
    builder: TraceBuilder, tmp_path: Path, transpose_us: float, fires: bool
) -> None:
    t = 0.0
    for _ in range(10):
        builder.kernel("void cudnn::ops::nchwToNhwcKernel<float, float>()", t, transpose_us / 20)
        builder.kernel("sm80_xmma_fprop_implicit_gemm_f16f16_nhwc", t + 20, 900.0)
        builder.kernel(
            "void cudnn::ops::nhwcToNchwKernel<float, float>()", t + 930, transpose_us / 20
        )
        t += 1000
    a = builder.analyze(tmp_path / "t.json", span=(0.0, t))
    share = transpose_us / (transpose_us + 9000.0)
    assert ("channels-last" in found(a)) is fires is (share >= 0.01)
    if fires:
        pattern = found(a)["channels-last"]
        assert pattern["time_us"] == pytest.approx(transpose_us)
        assert "channels_last" in pattern["action"]


# ---------------------------------------------------------------- FP32 matmuls


def test_fp32_gemms_on_a_tensor_core_gpu(builder: TraceBuilder, tmp_path: Path) -> None:
    for i in range(10):
        builder.launch(SGEMM, at=100.0 * i, start=100.0 * i + 5, dur=80.0)
    filler(builder, 200.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 100_000.0))
    pattern = found(a)["fp32-matmul"]
    time, share = 800.0, 800.0 / 1000.0
    assert pattern["time_us"] == time and pattern["share"] == pytest.approx(share)
    assert pattern["evidence"]["speedup_bound"] == pytest.approx(H200_RATIO, abs=0.01)
    saving = time * (1 - 1 / H200_RATIO)
    assert f"saving ≤ {duration(saving)}" in pattern["message"]
    assert pattern["severity"] == "warning" and pattern["evidence"]["training"] is False
    assert "model.to(torch.bfloat16)" in pattern["action"]
    assert "set_float32_matmul_precision('high')" in pattern["action"]  # H200: TF32 7.4×


def test_tf32_and_memory_bound_fp32_gemms_are_not_counted(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """TF32 kernels already use tensor cores; an FP32 GEMV (M = 1) is paced by bandwidth."""
    for i in range(10):
        builder.launch("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", at=100.0 * i,
                       start=100.0 * i + 5, dur=80.0)  # fmt: skip
        ext = op(builder, "aten::mm", 5000.0 + 100 * i, 10, **{
            "Input Dims": [[1, 4096], [4096, 4096]], "Input type": ["float", "float"],
            "Concrete Inputs": ["", ""]})  # fmt: skip
        builder.launch(SGEMM, at=5002.0 + 100 * i, start=5005.0 + 100 * i, dur=80.0, ext=ext)
    filler(builder, 200.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 100_000.0))
    assert "fp32-matmul" not in found(a)


# ---------------------------------------------------------------- all-reduce staging


@pytest.mark.parametrize(("distance", "fires"), [(10.0, True), (200.0, False)])
def test_copies_around_all_reduces(
    builder: TraceBuilder, tmp_path: Path, distance: float, fires: bool
) -> None:
    t = 0.0
    for _ in range(12):
        builder.kernel("Memcpy DtoD (Device -> Device)", t, 20.0, cat="gpu_memcpy",
                       bytes=4 << 20)  # fmt: skip
        builder.kernel(ALL_REDUCE, t + 20 + distance, 100.0, stream=20)
        builder.kernel("nvjet_gemm", t + 400, 500.0)
        t += 1000
    a = builder.analyze(tmp_path / "t.json", span=(0.0, t))
    assert ("allreduce-staging" in found(a)) is fires
    if fires:
        pattern = found(a)["allreduce-staging"]
        assert pattern["evidence"]["copies"] == 12
        assert pattern["evidence"]["bytes"] == 12 * (4 << 20)
        assert pattern["time_us"] == 240.0
        assert "gradient_as_bucket_view=True" in pattern["action"]


# ---------------------------------------------------------------- reference traces


def reference(name: str) -> tuple[Analysis, list[dict[str, Any]]]:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    with gzip.open(path, "rt") as handle:
        events = json.load(handle, parse_float=Decimal)["traceEvents"]
    return analyze(read_trace(str(path))), [e for e in events if e.get("ph") == "X"]


def kernel_time_by_op(events: list[dict[str, Any]]) -> dict[int, Decimal]:
    time: dict[int, Decimal] = {}
    for e in events:
        if e.get("cat") == "kernel":
            ext = e["args"].get("External id", -1)
            time[ext] = time.get(ext, Decimal(0)) + e["dur"]
    return time


def test_reference_prefill_rmsnorm_chains_are_the_norm_modules() -> None:
    """With stacks, every LlamaRMSNorm.forward frame (modeling_llama.py(62)) is one chain: its
    operators' kernels are the pattern's time."""
    a, events = reference("llama_prefill_h200.json.gz")
    frames = [e for e in events if e.get("cat") == "python_function"
              and e["name"].endswith("modeling_llama.py(62): forward")]  # fmt: skip
    time = kernel_time_by_op(events)
    inside = Decimal(0)
    for e in events:
        if e.get("cat") == "cpu_op" and any(
            f["ts"] <= e["ts"] < f["ts"] + f["dur"] for f in frames
        ):
            inside += time.pop(e["args"]["External id"], Decimal(0))
    kernel_total = sum(e["dur"] for e in events if e.get("cat") == "kernel")
    pattern = found(a)["unfused-norm"]
    assert pattern["evidence"]["chains"] == {"RMSNorm": len(frames)}
    assert pattern["time_us"] == pytest.approx(float(inside), abs=1e-2)
    assert pattern["share"] == pytest.approx(float(inside / kernel_total), abs=1e-6)
    assert pattern["evidence"]["python"].endswith("modeling_llama.py(62): forward")


def test_reference_v100_foreach_sgd_and_fp32_training() -> None:
    a, events = reference("hta__v100_ns_resolution_rank0.json.gz")
    steps = [e for e in events if e["name"].startswith("Optimizer.step#")]
    time = kernel_time_by_op(events)
    foreach, kernels = Decimal(0), 0
    for e in events:
        if (
            e.get("cat") == "cpu_op"
            and e["name"].startswith("aten::_foreach_")
            and any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps)
        ):
            ext = e["args"]["External id"]
            foreach += time.get(ext, Decimal(0))
            kernels += sum(1 for k in events if k.get("cat") == "kernel"
                           and k["args"].get("External id") == ext)  # fmt: skip
    pattern = found(a)
    assert pattern["foreach-optimizer"]["time_us"] == pytest.approx(float(foreach), abs=1e-3)
    assert pattern["foreach-optimizer"]["evidence"]["kernels"] == kernels
    assert pattern["foreach-optimizer"]["evidence"]["optimizers"] == ["SGD"]
    # FP32 GEMMs / convolutions: at least every sgemm and scudnn kernel, at most those and
    # cuDNN's float convolution engines — never batch norm or elementwise kernels
    kernels_ = [e for e in events if e.get("cat") == "kernel"]
    certain = sum(e["dur"] for e in kernels_ if re.search("sgemm|scudnn", e["name"]))
    engines = sum(e["dur"] for e in kernels_ if re.search(r"(dgrad|wgrad|winograd)\w*", e["name"])
                  and "<float" in e["name"])  # fmt: skip
    fp32 = pattern["fp32-matmul"]
    assert float(certain) <= fp32["time_us"] <= float(certain + engines) + 1e-3
    assert not any("bn_" in k["name"] for k in fp32["evidence"]["top_kernels"])
    assert fp32["evidence"]["speedup_bound"] == pytest.approx(125 / 15.7, abs=0.01)
    assert fp32["evidence"]["training"] is True
    assert "GradScaler" in fp32["action"]  # V100: fp16 tensor cores, no bf16


def test_reference_ddp_all_reduce_staging_copies() -> None:
    a, events = reference("hta__v100_profile_memory_nccl_rank1_BENCH.json.gz")
    reduces = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                     if e.get("cat") == "kernel" and "AllReduce" in e["name"])  # fmt: skip
    copies = [e for e in events if e.get("cat") == "gpu_memcpy" and "DtoD" in e["name"]]
    window = 50
    near = [
        c for c in copies
        if any(0 <= s - (c["ts"] + c["dur"]) <= window or 0 <= c["ts"] - e <= window
               for s, e in reduces)
    ]  # fmt: skip
    pattern = found(a)["allreduce-staging"]
    assert pattern["evidence"]["copies"] == len(near)
    assert pattern["time_us"] == pytest.approx(float(sum(c["dur"] for c in near)), abs=1e-3)
    assert pattern["evidence"]["all_reduce_kernels"] == len(reduces)
