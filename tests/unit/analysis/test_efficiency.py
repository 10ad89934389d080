"""GEMM / attention / convolution efficiency: the FLOP and byte models against hand-worked
formulas, the datasheet peaks against an independent transcription of the datasheets, the
achieved TFLOP/s and fractions on traces built here, the gemm-efficiency finding and its near
misses, and the reference traces recounted from the raw JSON."""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis._flops import work
from gpuscope.analysis._opinputs import Inputs
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.pipeline import analyze
from gpuscope.peaks import peaks_for, table
from gpuscope.trace.model import Device
from gpuscope.trace.registry import read_trace
from tests.unit.analysis.conftest import TraceBuilder

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
BF16, F32 = "c10::BFloat16", "float"
H200_BF16 = 989.5e12  # dense: the datasheet's 1,979 TFLOPS is quoted with 2:4 sparsity
H200_BW = 4.8e12


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.efficiency])


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["efficiency"]
    assert found is not None
    return dict(found)


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


def inputs(dims: list[Any], types: list[Any], concrete: list[Any] | None = None) -> Inputs:
    return Inputs(tuple(dims), tuple(types), tuple(concrete or [""] * len(dims)))


# ---------------------------------------------------------------- FLOP and byte models


@pytest.mark.parametrize(
    ("name", "x", "flops", "moved"),
    [
        # C[M,N] = A[M,K] B[K,N]: M·N dot products of length K, a multiply and an add each
        ("aten::mm", inputs([[64, 128], [128, 32]], [F32, F32]),
         2 * 64 * 32 * 128, (64 * 128 + 128 * 32 + 64 * 32) * 4),
        ("aten::addmm", inputs([[32], [64, 128], [128, 32]], [BF16] * 3),
         2 * 64 * 32 * 128, (64 * 128 + 128 * 32 + 64 * 32 + 32) * 2),
        # linear: every row of the flattened [4·512, 1024] input against a [4096, 1024] weight
        ("aten::linear", inputs([[4, 512, 1024], [4096, 1024], [4096]], [BF16] * 3),
         2 * 2048 * 4096 * 1024, (2048 * 1024 + 1024 * 4096 + 2048 * 4096 + 4096) * 2),
        ("aten::bmm", inputs([[8, 64, 128], [8, 128, 32]], [BF16] * 2),
         8 * 2 * 64 * 32 * 128, 8 * (64 * 128 + 128 * 32 + 64 * 32) * 2),
        ("aten::baddbmm", inputs([[8, 64, 32], [8, 64, 128], [8, 128, 32]], [BF16] * 3),
         8 * 2 * 64 * 32 * 128, (8 * (64 * 128 + 128 * 32 + 64 * 32) + 8 * 64 * 32) * 2),
        # matmul broadcasts the batch dims of [2, 3, 64, 128] against a plain [128, 32]
        ("aten::matmul", inputs([[2, 3, 64, 128], [128, 32]], [F32, F32]),
         6 * 2 * 64 * 32 * 128, 6 * (64 * 128 + 128 * 32 + 64 * 32) * 4),
        ("aten::matmul", inputs([[128], [128, 32]], [F32, F32]), 2 * 32 * 128,
         (128 + 128 * 32 + 32) * 4),
        ("aten::addmv", inputs([[64], [64, 128], [128]], [F32] * 3), 2 * 64 * 128,
         (64 * 128 + 128 + 64 + 64) * 4),
        # the textbook 4096³ GEMM: 137.4 GFLOP
        ("aten::mm", inputs([[4096, 4096], [4096, 4096]], [BF16] * 2), 137_438_953_472,
         3 * 4096 * 4096 * 2),
    ],
)  # fmt: skip
def test_gemm_flops_and_bytes(name: str, x: Inputs, flops: int, moved: int) -> None:
    done = work(name, x)
    assert done is not None and done.family == "gemm"
    assert done.flops == flops and done.bytes == moved


def conv_out(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    """The output size of a convolution (PyTorch Conv2d docs)."""
    return math.floor((size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1)


@pytest.mark.parametrize(
    ("weight", "stride", "pad", "dilation", "groups"),
    [([128, 64, 3, 3], 2, 1, 1, 1), ([128, 32, 3, 3], 1, 1, 1, 2), ([64, 64, 3, 3], 1, 2, 2, 1),
     ([64, 1, 3, 3], 1, 1, 1, 64)],
)  # fmt: skip
def test_convolution_flops(
    weight: list[int], stride: int, pad: int, dilation: int, groups: int
) -> None:
    """2 · N · K · (C / groups) · R · S · P · Q: every output element is a dot product over the
    C / groups input channels of its group and the R × S window."""
    n, c, h, w = 8, 64, 56, 56
    x = inputs(
        [[n, c, h, w], weight, [], [], [], [], []],
        [F32] * 2 + [""] * 5,
        ["", "", "", f"[{stride}, {stride}]", f"[{pad}, {pad}]", f"[{dilation}, {dilation}]",
         str(groups)],
    )  # fmt: skip
    done = work("aten::conv2d", x)
    p = conv_out(h, weight[2], stride, pad, dilation)
    q = conv_out(w, weight[3], stride, pad, dilation)
    assert done is not None and done.family == "convolution"
    assert done.flops == 2 * n * weight[0] * (c // groups) * weight[2] * weight[3] * p * q
    assert done.bytes == (n * c * h * w + math.prod(weight) + n * weight[0] * p * q) * 4
    assert done.shape.endswith(f"→ {p}×{q}")


def test_transposed_convolution_has_no_model() -> None:
    x = inputs(
        [[1, 8, 16, 16], [8, 8, 3, 3], [], [], [], [], [], [], []],
        [F32] * 2 + [""] * 7,
        ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"],
    )
    assert work("aten::convolution", x) is None


def test_convolution_backward_counts_the_gradients_it_computes() -> None:
    """Input and weight gradients each cost what the forward did; the bias gradient is free."""
    grad, inp, weight = [8, 128, 28, 28], [8, 64, 56, 56], [128, 64, 3, 3]
    forward = 2 * 8 * 128 * 64 * 3 * 3 * 28 * 28
    concrete = [""] * 10 + ["[True, True, False]"]
    x = inputs([grad, inp, weight] + [[]] * 8, [F32] * 3 + [""] * 8, concrete)
    done = work("aten::convolution_backward", x)
    assert done is not None and done.flops == 2 * forward
    only_input = [""] * 10 + ["[True, False, False]"]
    done = work("aten::convolution_backward", inputs([grad, inp, weight] + [[]] * 8,
                                                     [F32] * 3 + [""] * 8, only_input))  # fmt: skip
    assert done is not None and done.flops == forward


@pytest.mark.parametrize(
    ("name", "layout", "causal_at", "factor"),
    [
        ("aten::_scaled_dot_product_flash_attention", "bhsd", 4, 1.0),
        ("aten::_scaled_dot_product_efficient_attention", "bhsd", 6, 1.0),
        ("aten::_flash_attention_forward", "bshd", 8, 1.0),
        ("aten::_scaled_dot_product_flash_attention_backward", "bhsd", 11, 2.5),
    ],
)
@pytest.mark.parametrize("causal", [False, True])
def test_attention_flops(
    name: str, layout: str, causal_at: int, factor: float, causal: bool
) -> None:
    """Forward: Q·Kᵀ (2·Sq·Sk·D) and P·V (2·Sq·Sk·D) per head; causal halves it; backward is
    2.5× forward (FlashAttention's convention). Sq ≠ Sk (decode against a 512-token cache)."""
    b, h, sq, sk, d = 2, 16, 128, 512, 64
    q, kv = [b, h, sq, d], [b, h, sk, d]
    if layout == "bshd":
        q, kv = [b, sq, h, d], [b, sk, h, d]
    first = 1 if factor > 1 else 0
    dims: list[Any] = [[]] * first + [q, kv, kv] + [[]] * 12
    concrete = [""] * len(dims)
    concrete[causal_at] = "True" if causal else "False"
    done = work(name, inputs(dims, [BF16] * len(dims), concrete))
    assert done is not None and done.family == "attention"
    assert done.flops == factor * 4 * b * h * sq * sk * d * (0.5 if causal else 1.0)


# ---------------------------------------------------------------- datasheet peaks

# Dense datasheet figures, transcribed independently for this test: TFLOP/s bf16 (fp16 where no
# bf16), TF32 tensor, plain FP32, and GB/s. NVIDIA quotes tensor figures with 2:4 sparsity for
# Hopper / Ada / Blackwell (halved here) and dense for Ampere / Volta; AMD quotes dense.
DATASHEETS = {
    "NVIDIA H100 80GB HBM3": (1979 / 2, 989 / 2, 67, 3350),
    "NVIDIA H100 PCIe": (1513 / 2, 756 / 2, 51, 2000),
    "NVIDIA H200": (1979 / 2, 989 / 2, 67, 4800),
    "NVIDIA A100-SXM4-80GB": (312, 156, 19.5, 2039),
    "NVIDIA A100-SXM4-40GB": (312, 156, 19.5, 1555),
    "NVIDIA A100 80GB PCIe": (312, 156, 19.5, 1935),
    "Tesla V100-SXM2-32GB": (125, None, 15.7, 900),
    "Tesla V100-PCIE-16GB": (112, None, 14, 900),
    "NVIDIA L40S": (362.05, 183, 91.6, 864),  # its datasheet prints the dense figures
    "NVIDIA L4": (242 / 2, 120 / 2, 30.3, 300),
    "NVIDIA B200": (36000 / 8 / 2, 18000 / 8 / 2, 600 / 8, 64000 / 8),
    "AMD Instinct MI300X": (1307.4, 653.7, 163.4, 5300),
    "AMD Instinct MI325X": (1307.4, 653.7, 163.4, 6000),
    "AMD Instinct MI210": (181, None, 22.6, 1638.4),
    "AMD Instinct MI100": (92.3, None, 23.1, 1228.8),
}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_peaks_match_the_datasheets(name: str) -> None:
    bf16, tf32, fp32, bandwidth = DATASHEETS[name]
    peaks = peaks_for(Device(0, name))
    assert peaks is not None, name
    key = "bf16" if "bf16" in peaks.tflops else "fp16"
    assert peaks.tflops[key] == pytest.approx(bf16, rel=2e-3)
    assert peaks.tflops.get("tf32") == (None if tf32 is None else pytest.approx(tf32, rel=2e-3))
    assert peaks.tflops["fp32"] == pytest.approx(fp32, rel=2e-3)
    assert peaks.bandwidth_gbs == pytest.approx(bandwidth, rel=1e-3)


def test_mi250x_gcd_is_half_a_module() -> None:
    """torch shows each of the two GCDs as a device: half the module's 383 TFLOPS and 3.2 TB/s."""
    peaks = peaks_for(Device(0, "AMD Instinct MI250X/MI250", compute_units=110))
    assert peaks is not None and peaks.label.startswith("AMD Instinct MI250X")
    assert peaks.tflops["bf16"] == pytest.approx(383 / 2, rel=1e-3)
    assert peaks.bandwidth_gbs == pytest.approx(3276.8 / 2)
    other = peaks_for(Device(0, "AMD Instinct MI250X/MI250", compute_units=104))
    assert other is not None and other.label.startswith("AMD Instinct MI250 ")


def test_peak_table_is_dense_and_unambiguous() -> None:
    """No name maps to two entries unless the CU count tells them apart; NVIDIA tensor peaks
    keep the dense ratios (TF32 = half of FP16, FP8 = twice FP16; the L40S datasheet's own
    figures are 1 % off those ratios)."""
    owners = Counter(
        (name.lower(), entry.get("compute_units")) for entry in table() for name in entry["names"]
    )
    assert [key for key, count in owners.items() if count > 1] == []
    for entry in table():
        t = entry["tflops"]
        if entry["label"].startswith("NVIDIA") and "tf32" in t:
            assert t["tf32"] == pytest.approx(t["fp16"] / 2, rel=0.02), entry["label"]
        if "fp8" in t:
            assert t["fp8"] == pytest.approx(2 * t["fp16"], rel=0.02), entry["label"]


# ---------------------------------------------------------------- traces built here


def gemm_op(b: TraceBuilder, ts: float, dims: list[Any], dtype: str, name: str = "aten::mm") -> int:
    ext = b._id()
    b.events.append(
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100, "ts": ts, "dur": 5.0,
         "args": {"External id": ext, "Input Dims": dims, "Input type": [dtype] * len(dims),
                  "Concrete Inputs": [""] * len(dims)}}
    )  # fmt: skip
    return ext


def gemms(b: TraceBuilder, count: int, m: int, n: int, k: int, kernel_us: float) -> float:
    """`count` bf16 GEMMs launched 1 µs apart, their kernels back to back; returns the end."""
    t = 100.0
    for i in range(count):
        ext = gemm_op(b, float(i), [[m, k], [k, n]], BF16)
        b.launch("nvjet_sm90_tst_gemm", at=i + 1.0, start=t, dur=kernel_us, ext=ext)
        t += kernel_us
    return t


@pytest.mark.parametrize(
    ("kernel_us", "severity", "verdict"),
    [(1000.0, "warning", "below 40% of peak"), (250.0, "info", ""),
     (150.0, "info", "efficient (≥ 60% of peak)")],
)  # fmt: skip
def test_big_gemms_against_the_bf16_peak(
    builder: TraceBuilder, tmp_path: Path, kernel_us: float, severity: str, verdict: str
) -> None:
    end = gemms(builder, 4, 4096, 4096, 4096, kernel_us)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    assert a.verdict.bound == "gpu-bound"
    flops = 2 * 4096**3
    achieved = flops / (kernel_us * 1e-6)
    (group,) = part(a)["groups"]
    assert group["shape"] == "M=4096 N=4096 K=4096" and group["calls"] == 4
    assert group["peak"] == "bf16" and group["peak_tflops"] == 989.5
    assert group["tflops"] == pytest.approx(achieved / 1e12, abs=1e-3)
    assert group["fraction_of_peak"] == pytest.approx(achieved / H200_BF16, abs=1e-6)
    intensity = flops / (3 * 4096 * 4096 * 2)
    assert group["intensity"] == pytest.approx(intensity, abs=0.01)
    assert group["bound"] == "compute" and intensity > H200_BF16 / H200_BW
    found = by_id(a)["gemm-efficiency"]
    assert found["severity"] == severity
    assert f"{achieved / H200_BF16:.0%} of the roofline" in found["message"]
    assert verdict in found["message"]
    if severity == "warning":
        assert "TunableOp" in found["action"]


def test_skinny_gemms_are_judged_by_bandwidth(builder: TraceBuilder, tmp_path: Path) -> None:
    end = gemms(builder, 10, 1, 4096, 4096, 10.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    (group,) = part(a)["groups"]
    moved = (4096 + 4096 * 4096 + 4096) * 2  # x, W and y once, bf16
    assert group["mb_per_call"] == pytest.approx(moved / 1e6, abs=1e-6)
    assert group["bound"] == "memory" and group["size"] == "skinny"
    bandwidth = moved / 10e-6
    assert group["fraction_of_bandwidth"] == pytest.approx(bandwidth / H200_BW, abs=1e-6)
    assert group["roofline_fraction"] == pytest.approx(bandwidth / H200_BW, abs=1e-6)
    found = by_id(a)["gemm-efficiency"]
    assert f"{bandwidth / H200_BW:.0%} of datasheet bandwidth" in found["message"]
    assert "weight-only quantization" in found["action"]


def test_linear_is_counted_once_at_the_op_that_launched(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    for i in range(3):
        t = 100.0 * i
        gemm_op(builder, t, [[2048, 1024], [4096, 1024], [4096]], BF16, "aten::linear")
        ext = gemm_op(builder, t + 1, [[4096], [2048, 1024], [1024, 4096]], BF16, "aten::addmm")
        builder.launch("gemm", at=t + 2, start=t + 10, dur=40.0, ext=ext)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 300.0)))
    assert [(g["op"], g["calls"], g["time_us"]) for g in got["groups"]] == [
        ("aten::addmm", 3, 120.0)
    ]


def test_few_gemms_are_not_judged(builder: TraceBuilder, tmp_path: Path) -> None:
    end = gemms(builder, 2, 4096, 4096, 4096, 1000.0)
    builder.kernel("softmax_kernel", end, 5000.0)  # GEMMs: 2,000 of 7,000 µs = 29 %
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end + 5000))
    assert part(a)["gemm_share"] == pytest.approx(2000 / 7000, abs=1e-6)
    assert "gemm-efficiency" not in by_id(a)


def test_graph_replayed_gemms_ask_for_an_eager_profile(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    ext = gemm_op(builder, 0.0, [[4096, 4096], [4096, 4096]], BF16)
    builder.launch("nvjet_gemm", at=1.0, start=10.0, dur=200.0, ext=ext)
    builder.runtime("cudaGraphLaunch", 300.0, 5.0, corr=777)
    for i in range(10):
        builder.kernel("nvjet_gemm", 310.0 + 200 * i, 200.0, corr=777)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 2400.0))
    got = part(a)
    assert got["gemm_coverage"] == pytest.approx(200 / 2200, abs=1e-6)
    assert got["gemm_graph_share"] == pytest.approx(2000 / 2200, abs=1e-6)
    found = by_id(a)["gemm-efficiency"]
    assert found["severity"] == "info" and "not judged" in found["message"]
    assert "eager" in found["action"]


# ---------------------------------------------------------------- reference traces


def reference(name: str) -> tuple[Analysis, list[dict[str, Any]]]:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    with gzip.open(path, "rt") as handle:
        events = json.load(handle, parse_float=Decimal)["traceEvents"]
    return analyze(read_trace(str(path))), [e for e in events if e.get("ph") == "X"]


def test_reference_prefill_gemm_groups_recounted() -> None:
    """Llama prefill on an H200, bf16: each aten::mm shape's kernels (linked by External id),
    its FLOPs from the recorded Input Dims, against the dense bf16 peak."""
    a, events = reference("llama_prefill_h200.json.gz")
    time: dict[int, Decimal] = {}
    for e in events:
        if e.get("cat") == "kernel":
            ext = e["args"]["External id"]
            time[ext] = time.get(ext, Decimal(0)) + e["dur"]
    shapes: dict[str, list[Any]] = {}
    for e in events:
        if e["name"] == "aten::mm" and e["args"]["External id"] in time:
            (m, k), (_, n) = e["args"]["Input Dims"]
            entry = shapes.setdefault(f"M={m} N={n} K={k}", [0, Decimal(0), 2 * m * n * k])
            entry[0] += 1
            entry[1] += time[e["args"]["External id"]]
    got = part(a)
    assert got["peaks"]["label"] == "NVIDIA H200 SXM"
    mm = {g["shape"]: g for g in got["groups"] if g["op"] == "aten::mm"}
    assert set(mm) == set(shapes)
    for shape, (calls, total, flops) in shapes.items():
        achieved = calls * flops / (float(total) * 1e-6)
        assert mm[shape]["calls"] == calls
        assert mm[shape]["time_us"] == pytest.approx(float(total), abs=1e-3)
        assert mm[shape]["tflops"] == pytest.approx(achieved / 1e12, abs=1e-3)
        assert mm[shape]["fraction_of_peak"] == pytest.approx(achieved / H200_BF16, abs=1e-5)


def test_reference_mi300x_trace_finds_its_peaks() -> None:
    """ROCm's Kineto numbers the kernels' device 2 (HSA agents count the CPUs first) and lists the
    one visible GPU as device 0: the peaks are still the MI300X's."""
    a, events = reference("tl__mi300x_bert-small_inference.json.gz")
    assert {e["args"]["device"] for e in events if e.get("cat") == "kernel"} == {2}
    got = part(a)
    assert got["device"] == "AMD Instinct MI300X VF"
    assert got["peaks"]["label"] == "AMD Instinct MI300X"
    found = by_id(a)["gemm-efficiency"]
    assert "of the roofline" in found["message"]
