"""The `gemm-efficiency` finding rule, from the efficiency part of the report.

It separates what the shapes allow: big GEMMs (M, N, K ≥ 1024) can reach the compute roof and are
judged by their fraction of the datasheet FLOP/s; skinny ones (M or N ≤ 64, decode) are
memory-bound and judged by bandwidth; a slow verdict needs shapes recorded for most GEMM time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpuscope.analysis._finding import Finding, finding
from gpuscope.document.units import duration

GEMM_SHARE_FIRES = 0.30
LOW, GOOD = 0.40, 0.60
WARN_SHARE = 0.05
COVERAGE = 0.50
DOMINANT = 0.50

PROFILE_SHAPES = "Profile with torch.profiler(record_shapes=True) so each GEMM's M, N, K are known."
PROFILE_EAGER = (
    "Profile one eager step (without graph capture) with torch.profiler(record_shapes=True) so "
    "each GEMM's M, N, K are linked to its kernels."
)
PROFILE_EAGER_SHAPES_ON = (
    "Profile one eager step (without graph capture) so each GEMM's M, N, K are linked to its "
    "kernels: record_shapes was on, but graph replays carry no operator."
)
TUNE = (
    "Tune the slow shapes: PyTorch TunableOp (PYTORCH_TUNABLEOP_ENABLED=1) searches the "
    "hipBLASLt / cuBLASLt algorithms for each shape; pad M, N, K to multiples of 64/128 (odd "
    "sizes such as 1000 or 50257 leave tiles half empty); fuse GEMMs that share an input{fuse}; "
    'torch.compile(mode="max-autotune") tries Triton / CUTLASS templates per shape.'
)
FEWER_FLOPS = (
    "GEMM-heavy and efficient: only fewer FLOPs will help — a smaller model, quantization "
    "(FP8 / INT8 GEMMs where the device has them), lower precision, or skipping work."
)
SMALL = (
    "Small GEMMs cannot fill the device and memory-bound ones are paced by bytes, not FLOPs: "
    "batch more tokens or sequences per step (each weight read then serves more rows), fuse "
    "projections that read the same activations{fuse}{quantize}{graphs}."
)
QUANTIZE = ", use weight-only quantization (INT8/INT4/FP8 weights) to cut the bytes read"
GRAPHS = ", and CUDA/HIP graphs to remove launch gaps"  # not for FSDP: it cannot be captured
# which projections to name: Q, K and V only where attention runs, and not to a serving engine
# (vLLM and SGLang load them as one fused QKV projection already)
FUSE = {
    "attention": " (one QKV projection instead of three, gate and up as one)",
    "no-attention": " (gate and up as one, or any two projections of the same activations)",
    "serving": " (the engine fuses QKV and gate/up already: look at the ones it does not)",
}


def gemm_efficiency(
    part: dict[str, Any],
    bound: str = "",
    shapes_on: bool = False,
    fuse: str = "attention",
    graphs: bool = True,
    training: bool = False,
) -> Finding | None:
    """The finding on the efficiency part; `bound` is the verdict: an efficient GEMM set is
    advice about FLOPs only when the GPU sets the pace. `shapes_on`: record_shapes was on;
    `fuse`: which projections fusing would name (a FUSE key); `graphs`: whether graph capture
    is open to the program (not to an FSDP step); `training`: a backward runs (weight-only
    quantization is an inference technique)."""
    share = part.get("gemm_share")
    if share is None or share < GEMM_SHARE_FIRES:
        return None
    coverage = part.get("gemm_coverage") or 0.0
    gemm = part["families"].get("gemm")
    head = f"GEMMs take {share:.0%} of kernel time (looked at from ≥ {GEMM_SHARE_FIRES:.0%})"
    evidence = _evidence(part, coverage)
    if gemm is None or coverage < COVERAGE:
        graphs = (part.get("gemm_graph_share") or 0.0) >= DOMINANT
        why = (
            f"{part['gemm_graph_share']:.0%} of GEMM time is replayed from CUDA/HIP graphs, "
            "whose kernels carry no operator"
            if graphs
            else "GEMM operators without recorded Input Dims, or kernels not linked to an operator"
        )
        action = PROFILE_SHAPES
        if graphs:
            action = PROFILE_EAGER_SHAPES_ON if shapes_on else PROFILE_EAGER
        return finding(
            "gemm-efficiency",
            "info",
            f"{head}, but their shapes are known for only {coverage:.0%} of that time ({why}): "
            f"efficiency is not judged below {COVERAGE:.0%}",
            action,
            evidence,
        )
    if part.get("peaks") is None:
        return finding(
            "gemm-efficiency",
            "info",
            f"{head} and achieve {gemm['tflops']:,.1f} TFLOP/s over the recorded shapes; "
            + _unknown_peak(part.get("device"))
            + ", so no fraction of peak is given",
            "Compare the achieved TFLOP/s with the device's datasheet dense peak for the dtype.",
            evidence,
        )
    head = f"GEMMs take {share:.0%} of kernel time (looked at from ≥ {GEMM_SHARE_FIRES:.0%}; "
    head += f"shapes known for {coverage:.0%} of it)"
    found = _judged(part, head, evidence, bound, FUSE.get(fuse, FUSE["no-attention"]))
    action = found.action.replace("{graphs}", GRAPHS if graphs else "")
    return replace(found, action=action.replace("{quantize}", "" if training else QUANTIZE))


def _judged(
    part: dict[str, Any], head: str, evidence: dict[str, Any], bound: str, fuse: str
) -> Finding:
    gemm = part["families"]["gemm"]
    total = gemm["time_us"] or 1.0
    by = part["gemm_by_size"]
    big, skinny = by.get("big"), by.get("skinny")
    clauses = [
        f"{head} and run at "
        f"{_pct(gemm['roofline_fraction'])} of the roofline their shapes allow (time-weighted: "
        "the datasheet FLOP/s peak for compute-bound shapes, bandwidth for memory-bound ones)"
    ]
    if big:
        clauses.append(
            f"big shapes (M, N, K ≥ 1024; {big['time_us'] / total:.0%} of GEMM time) run at "
            f"{_pct(big['fraction_of_peak'])} of the {_keys(part, 'big')} peak"
        )
    if skinny:
        clauses.append(
            f"skinny shapes (M or N ≤ 64; {skinny['time_us'] / total:.0%} of GEMM time) are "
            f"memory-bound, judged by bandwidth: {_pct(skinny['fraction_of_bandwidth'])} of "
            "datasheet bandwidth"
        )
    severity, verdict, action = _verdict(part, big, total)
    action = action.replace("{fuse}", fuse)
    message = "; ".join(clauses) + (f" — {verdict}" if verdict else "")
    if bound and bound != "gpu-bound":
        action += (
            f" The trace is {bound}: the GPU waits for other work most of the time, so faster "
            "GEMMs shorten the step only once that is fixed."
        )
    lost = gemm["time_us"] * (1 - min(gemm["roofline_fraction"] or 0.0, 1.0)) * 1000
    return finding("gemm-efficiency", severity, message, action, evidence,
                   impact_ns=lost if gemm["roofline_fraction"] is not None else None,
                   cause="kernel-efficiency")  # fmt: skip


def _verdict(
    part: dict[str, Any], big: dict[str, Any] | None, total: float
) -> tuple[str, str, str]:
    kernel = part["kernel_time_us"] or 1.0
    big_frac = big["fraction_of_peak"] if big else None
    small_time, small_roof = _small(part)
    if big and big_frac is not None and big_frac < LOW:
        severe = big["time_us"] / kernel >= WARN_SHARE
        return (
            "warning" if severe else "info",
            f"below {LOW:.0%} of peak (a warning when they take ≥ {WARN_SHARE:.0%} of kernel "
            f"time); slowest: {'; '.join(_worst(part))}",
            TUNE,
        )
    if big and big_frac is not None and big_frac >= GOOD and big["time_us"] / total >= DOMINANT:
        return _efficient(part)
    if small_time / total >= DOMINANT:
        return (
            "info",
            f"{small_time / total:.0%} of GEMM time is in shapes too small to reach the compute "
            f"roof (M or N ≤ 64, or a dimension under 1024), at {_pct(small_roof)} of the roof "
            "their arithmetic intensity allows",
            SMALL,
        )
    return "info", "", TUNE


def _small(part: dict[str, Any]) -> tuple[float, float | None]:
    """GEMM time in medium and skinny shapes, and its time-weighted roofline fraction."""
    parts = [part["gemm_by_size"][s] for s in ("medium", "skinny") if s in part["gemm_by_size"]]
    time = sum(p["time_us"] for p in parts)
    known = [p for p in parts if p["roofline_fraction"] is not None]
    weight = sum(p["time_us"] for p in known)
    roof = sum(p["time_us"] * p["roofline_fraction"] for p in known) / weight if weight else None
    return time, roof


def _efficient(part: dict[str, Any]) -> tuple[str, str, str]:
    keys = {g["peak"] for g in part["groups"] if g["size"] == "big" and g["peak"]}
    tflops = part["peaks"]["tflops"]
    fast = max(tflops.get("bf16", 0.0), tflops.get("fp16", 0.0))
    slow = max((tflops.get(k, 0.0) for k in keys), default=0.0)
    if keys <= {"fp32", "fp32_matrix", "tf32"} and fast > 2 * slow > 0:
        return (
            "info",
            f"efficient for {'/'.join(sorted(keys))} (≥ {GOOD:.0%} of its peak), but that is not "
            f"the fast path: the datasheet bf16/fp16 tensor peak is {fast / slow:.1f}× higher",
            "Run these GEMMs in bf16 (torch.autocast, or the model in bf16), or at least allow "
            "TF32 (torch.set_float32_matmul_precision('high')); see the fp32-matmul pattern.",
        )
    return "info", f"efficient (≥ {GOOD:.0%} of peak)", FEWER_FLOPS


def _worst(part: dict[str, Any]) -> list[str]:
    slow = [
        g
        for g in part["groups"]
        if g["size"] == "big" and g["fraction_of_peak"] is not None and g["fraction_of_peak"] < LOW
    ]
    slow.sort(key=lambda g: -g["time_us"] * (1 - g["fraction_of_peak"]))
    return [
        f"{g['op']} {g['shape']} {g['dtype']} at {_pct(g['fraction_of_peak'])} "
        f"({duration(g['time_us'])})"
        for g in slow[:3]
    ]


def _keys(part: dict[str, Any], size: str) -> str:
    keys = sorted({g["peak"] for g in part["groups"] if g["size"] == size and g["peak"]})
    return "/".join(keys) or "dtype's"


def _pct(value: float | None) -> str:
    if value is None:
        return "?"
    return "<1%" if 0 < value < 0.005 else f"{value:.0%}"


def _evidence(part: dict[str, Any], coverage: float) -> dict[str, Any]:
    peaks = part.get("peaks")
    return {
        "gemm_share": part.get("gemm_share"),
        "gemm_coverage": coverage,
        "device": part.get("device"),
        "peaks": None if peaks is None else f"{peaks['label']} ({peaks['kind']})",
        "by_size": part.get("gemm_by_size"),
        "top_gemms": [
            {k: g[k] for k in ("op", "shape", "dtype", "calls", "time_us", "tflops",
                               "fraction_of_peak", "fraction_of_bandwidth", "bound")}
            for g in part["groups"]
            if g["family"] == "gemm"
        ][:5],
    }  # fmt: skip


def _unknown_peak(device: str | None) -> str:
    if not device:
        return "the trace does not name its device"
    return f"gpuscope has no datasheet peak for {device!r}"
